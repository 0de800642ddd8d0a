//! The "pairs" codec: a Re-Pair grammar, canonical Huffman codes and small blocks.
//!
//! This is the idea of the Syzygy tables (R. de Man), written afresh: a section's values are
//! rewritten over and over by replacing the commonest adjacent pair of symbols with a new
//! symbol (Re-Pair), until no pair is common enough or the symbol budget is spent. The final
//! symbol sequence is Huffman-coded and cut into blocks of [`BLOCK_BYTES`] bytes, each holding
//! whole codes only; a table of *values per block* lets a reader find the block of any value,
//! and decoding stops at the symbol that covers it, whose expansion is walked down the pair
//! tree to the value. A probe reads one small block and decodes part of it: a fraction of a
//! microsecond, against several for a zstd frame of the same data.
//!
//! This module is pure (no files): [`encode`] turns values into [`Encoded`] tables and blocks,
//! and [`Decoder::new`] validates such tables (taken from any bytes) so that
//! [`Decoder::get_in_block`] and [`Decoder::decode_blocks`] never panic, whatever the block
//! bytes are.
//!
//! # Choices, measured
//!
//! With `examples/size_lab.rs` on KRvKN KPvKP BBvNN KQvRB RNPvK (`.wdl` + `.dtz` bytes; zstd
//! blocks of 16 384 values at level 15, which take 4.1–4.3 µs to decode cold: 2.31 MB):
//!
//! * Block size (`.wdl` / `.dtz`, mean cold read of one value): 64 / 64 B: 2.32 MB, 0.26 µs;
//!   **128 / 128 B** (`src/store/`): 2.27 MB, 0.44 µs; 256 / 128 B: 2.26 MB; 512 / 128 B:
//!   2.25 MB, `.wdl` at 1.5 µs. Larger blocks have a smaller size table and less padding, but
//!   a probe decodes half a block on average: on the whole ≤4-piece set 512-byte `.wdl` blocks
//!   saved 3.4 % and cost 60 % of the WDL probe rate and 75 % of the DTZ rate.
//! * A block holds any number of values: blocks of more than 65 536 (long runs) have their size
//!   in a second table. With a 65 536-value cap 2.2 % of 128-byte blocks were cut short, and
//!   larger blocks grew the files instead of shrinking them.
//! * Pairs in 3 bytes (12-bit symbols) instead of 4: −0.8 %; code lengths in 5 bits: −0.5 %.
//! * Least count of a pair: 32: +2.1 %; 16: +0.7 %; **8**; 4: +0.2 %.
//! * Measured earlier (64-byte blocks, previous-value fill): symbol budget 2048 / **4096** /
//!   8192 / 16384: +1.2 % / 0 / −0.1 % / −0.1 % (the pair count table grows with its square).
//!   Longest symbol 128 / **256** / 4096 values: +0.8 % / 0 / −0.3 %. Replacing, per round,
//!   the pairs at least 1/2, **1/4** or 1/8 as common as the commonest: within 0.5 %; all
//!   non-overlapping pairs at once: +7 %.
//! * How don't-care slots are filled matters more than any of these: see `Fill` in
//!   `src/store/` (−7.6 % `.wdl`, −8.4 % `.dtz`).

/// Blocks each thread keeps the symbol lists of ([`Decoder::get_cached`]).
pub const CACHED_BLOCKS: usize = 8192;

/// A cached block lists every this many symbols' starts ([`Decoder::get_cached`]).
pub const SYMBOL_STRIDE: usize = 8;

/// Default bytes per block. Every block of a section is exactly its file's block size long
/// (padded with zero bits); sizes are powers of two from [`MIN_BLOCK_BYTES`] to
/// [`MAX_BLOCK_BYTES`].
pub const BLOCK_BYTES: usize = 128;

/// The smallest block size.
pub const MIN_BLOCK_BYTES: usize = 32;

/// The largest block size.
pub const MAX_BLOCK_BYTES: usize = 1024;

/// Whether `n` is an allowed block size.
pub fn valid_block_bytes(n: usize) -> bool {
    n.is_power_of_two() && (MIN_BLOCK_BYTES..=MAX_BLOCK_BYTES).contains(&n)
}

/// The most symbols a section may have (base values and pairs together): symbols are 12 bits
/// in the file.
pub const MAX_SYMBOLS: usize = 4096;

/// The most values one symbol may expand to (longer symbols save little and make a probe
/// walk further down the pair tree).
pub const MAX_EXPANSION: u32 = 256;

/// The longest Huffman code, in bits (code lengths are 5 bits in the file).
pub const MAX_CODE_LEN: u8 = 31;

/// Bytes of the pair table of one [`encode`] at most (a `u32` per pair of symbols: it grows
/// with the square of the symbol count); see [`encoder_table_bytes`] for short sections.
pub const ENCODER_TABLE_BYTES: u64 = (MAX_SYMBOLS * MAX_SYMBOLS * 4) as u64;

/// Bytes of the pair table of one [`encode`] of `values` values at most:
/// [`ENCODER_TABLE_BYTES`], or 16 bytes a value if that is less (a round counts its pairs in
/// a table while it has at most 4 entries a value, else by sorting them, 4 bytes a value).
pub fn encoder_table_bytes(values: u64) -> u64 {
    ENCODER_TABLE_BYTES.min(ENCODER_BYTES_PER_VALUE * values)
}

/// A pair becomes a symbol only if it occurs at least this often (a symbol costs about five
/// bytes of tables).
const MIN_PAIR_COUNT: u32 = 8;

/// A section's tables and blocks, as [`encode`] makes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    /// The value of each base symbol, ascending (symbols `0 .. bases.len()`).
    pub bases: Vec<u16>,
    /// The two halves of each pair symbol (symbols `bases.len() ..`), in symbol order; each
    /// half is a smaller symbol.
    pub pairs: Vec<(u16, u16)>,
    /// Huffman code length of every symbol (0: the symbol never occurs in the blocks).
    pub code_lens: Vec<u8>,
    /// Number of values in each block (at least 1).
    pub sizes: Vec<u32>,
    /// The blocks, `block_bytes` each.
    pub data: Vec<u8>,
    /// Bytes per block.
    pub block_bytes: usize,
}

/// The most distinct values a section may have (half the symbol budget, so that pairs have
/// room). Tablebase sections have a few hundred at most.
pub const MAX_BASES: usize = MAX_SYMBOLS / 2;

/// Why values could not be encoded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EncodeError {
    /// The block size is not allowed ([`valid_block_bytes`]).
    BlockBytes(usize),
    /// More distinct values in one section than [`MAX_BASES`].
    TooManyValues(usize),
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::BlockBytes(n) => write!(
                f,
                "block size {n} is not a power of two in {MIN_BLOCK_BYTES}..={MAX_BLOCK_BYTES}"
            ),
            EncodeError::TooManyValues(n) => {
                write!(f, "{n} distinct values in one section, at most {MAX_BASES}")
            }
        }
    }
}

impl std::error::Error for EncodeError {}

/// Encodes `values` in blocks of `block_bytes` bytes. Deterministic: the output depends on the
/// arguments only. Fails when there are more than [`MAX_BASES`] distinct values or the block
/// size is not allowed ([`valid_block_bytes`]).
pub fn encode(values: &[u16], block_bytes: usize) -> Result<Encoded, EncodeError> {
    if !valid_block_bytes(block_bytes) {
        return Err(EncodeError::BlockBytes(block_bytes));
    }
    if values.is_empty() {
        return Ok(Encoded {
            block_bytes,
            ..Encoded::default()
        });
    }
    let bases: Vec<u16> = {
        let mut seen = vec![false; 1 << 16];
        for &v in values {
            seen[v as usize] = true;
        }
        (0..=u16::MAX).filter(|&v| seen[v as usize]).collect()
    };
    if bases.len() > MAX_BASES {
        return Err(EncodeError::TooManyValues(bases.len()));
    }
    let mut sym_of = vec![0u16; 1 << 16];
    for (i, &v) in bases.iter().enumerate() {
        sym_of[v as usize] = i as u16;
    }
    let mut seq: Vec<u16> = values.iter().map(|&v| sym_of[v as usize]).collect();
    let mut lens: Vec<u32> = vec![1; bases.len()];
    let pairs = repair(&mut seq, &mut lens);
    let code_lens = huffman_lengths(&seq, lens.len());
    let codes = canonical_codes(&code_lens);
    let (sizes, data) = pack(&seq, &lens, &code_lens, &codes, block_bytes);
    Ok(Encoded {
        bases,
        pairs,
        code_lens,
        sizes,
        data,
        block_bytes,
    })
}

/// Re-Pair: replaces common adjacent pairs in `seq` by new symbols, in rounds. Each round
/// counts all pairs, then replaces, in one left-to-right pass, a set of pairs that cannot
/// overlap one another (no chosen pair's right half is another's left half), the commonest
/// first and each at least a quarter as common as the commonest. Returns the pairs; `lens`
/// gets the expansion length of each new symbol.
fn repair(seq: &mut Vec<u16>, lens: &mut Vec<u32>) -> Vec<(u16, u16)> {
    repair_with(seq, lens, DENSE_ENTRIES_PER_VALUE)
}

/// A round with `s` symbols counts its pairs in a table of `s * s` entries while that is at
/// most this many entries a value of the sequence, and past that by sorting the sequence's
/// pairs: the encoder's table stays within [`ENCODER_BYTES_PER_VALUE`] bytes a value of its
/// section (and [`ENCODER_TABLE_BYTES`]).
const DENSE_ENTRIES_PER_VALUE: usize = 4;

/// Bytes of the pair table of one [`encode`] per value encoded at most: a table of `s * s`
/// entries of 4 bytes while `s * s` is at most [`DENSE_ENTRIES_PER_VALUE`] a value, else the
/// sorted pairs, 4 bytes a value.
const ENCODER_BYTES_PER_VALUE: u64 = 4 * DENSE_ENTRIES_PER_VALUE as u64;

/// Calls `f` with each pair of `seq` a round counts, as `a * s + b`: a run `aaaa` holds two
/// replaceable `aa`, not three, so every other one is counted.
#[inline]
fn for_each_counted_pair(seq: &[u16], s: usize, mut f: impl FnMut(usize)) {
    let mut in_run = false;
    for w in seq.windows(2) {
        let (a, b) = (w[0] as usize, w[1] as usize);
        if a == b {
            in_run = !in_run;
            if !in_run {
                continue;
            }
        } else {
            in_run = false;
        }
        f(a * s + b);
    }
}

/// Replaces, left to right, each pair of `seq` (as `a * s + b`) that `code` maps to a new
/// symbol plus one (0: not replaced).
#[inline]
fn replace_pairs(seq: &mut Vec<u16>, s: usize, code: impl Fn(usize) -> u32) {
    let (mut r, mut w) = (0, 0);
    let n = seq.len();
    while r < n {
        if r + 1 < n {
            let c = code(seq[r] as usize * s + seq[r + 1] as usize);
            if c != 0 {
                seq[w] = (c - 1) as u16;
                w += 1;
                r += 2;
                continue;
            }
        }
        seq[w] = seq[r];
        w += 1;
        r += 1;
    }
    seq.truncate(w);
}

/// [`repair`], counting in a table while `s * s` is at most `dense` entries a value of the
/// sequence (0: always by sorting): the pairs chosen do not depend on how they are counted.
fn repair_with(seq: &mut Vec<u16>, lens: &mut Vec<u32>, dense: usize) -> Vec<(u16, u16)> {
    // Dense counting: pair `(a, b)` of a round with `s` symbols is entry `a * s + b` of one
    // table, which stays zero between rounds: a round clears only the entries it set, instead
    // of clearing and scanning all `s * s` of them (the `.wdl` + `.dtz` writes of 19
    // four-piece tables, one after the other on one thread: 8.08 -> 7.43 CPU-s, 0.92x, the
    // same bytes). The table holds a round's pair counts, then, once the pairs are chosen and
    // the counts cleared, the new symbol of each chosen pair: a second table for those, 2
    // bytes a pair, had been a third of the encoder's tables (32 of 96 MiB at `MAX_SYMBOLS`).
    // Its `s * s` entries outgrow the pairs of a sequence that earlier rounds have shortened,
    // so past `dense` entries a value the pairs are sorted instead (`s` only grows and the
    // sequence only shrinks: a round never goes back to the table). With 4 entries a value,
    // 25 four-piece tables written by both binaries at once, 1 thread each: write peaks
    // 34-54 -> 18-19 MiB at 10^5 slots a side, 142-148 -> 85 MiB at 5.7 * 10^6; write CPU
    // 0.959x; the same bytes.
    let mut pairs = Vec::new();
    let mut table: Vec<u32> = Vec::new();
    // The pairs counted this round: each once, by entry (dense); all of them (sorted).
    let mut seen: Vec<u32> = Vec::new();
    loop {
        let s = lens.len();
        if s >= MAX_SYMBOLS || seq.len() < 2 {
            break;
        }
        let sorted = s * s > dense.saturating_mul(seq.len());
        let candidate = |c: u32, a: u16, b: u16| {
            c >= MIN_PAIR_COUNT && lens[a as usize] + lens[b as usize] <= MAX_EXPANSION
        };
        let mut cands: Vec<(u32, u16, u16)> = Vec::new();
        if sorted {
            table = Vec::new();
            for_each_counted_pair(seq, s, |i| seen.push(i as u32));
            seen.sort_unstable();
            for run in seen.chunk_by(|x, y| x == y) {
                let i = run[0] as usize;
                let (c, a, b) = (run.len() as u32, (i / s) as u16, (i % s) as u16);
                if candidate(c, a, b) {
                    cands.push((c, a, b));
                }
            }
        } else {
            if table.len() < s * s {
                table.resize(s * s, 0);
            }
            let counts = &mut table;
            for_each_counted_pair(seq, s, |i| {
                let c = &mut counts[i];
                if *c == 0 {
                    seen.push(i as u32);
                }
                *c += 1;
            });
            cands.extend(
                seen.iter()
                    .map(|&i| {
                        let i = i as usize;
                        (counts[i], (i / s) as u16, (i % s) as u16)
                    })
                    .filter(|&(c, a, b)| candidate(c, a, b)),
            );
            // The counts are read: the table is clear again for the chosen pairs' symbols.
            for &i in &seen {
                counts[i as usize] = 0;
            }
        }
        seen.clear();
        if cands.is_empty() {
            break;
        }
        cands.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        let floor = (cands[0].0 / 4).max(MIN_PAIR_COUNT);
        let mut is_left = vec![false; s];
        let mut is_right = vec![false; s];
        // Each chosen pair's entry, with its new symbol plus one (0 means "not replaced").
        let mut codes: Vec<(usize, u32)> = Vec::new();
        let mut next = s;
        for &(c, a, b) in &cands {
            if c < floor || next >= MAX_SYMBOLS {
                break;
            }
            let (a, b) = (a as usize, b as usize);
            if is_right[a] || is_left[b] {
                continue;
            }
            is_left[a] = true;
            is_right[b] = true;
            pairs.push((a as u16, b as u16));
            lens.push(lens[a] + lens[b]);
            codes.push((a * s + b, next as u32 + 1));
            next += 1;
        }
        if sorted {
            codes.sort_unstable();
            replace_pairs(seq, s, |i| {
                codes
                    .binary_search_by_key(&i, |&(e, _)| e)
                    .map_or(0, |k| codes[k].1)
            });
        } else {
            for &(i, code) in &codes {
                table[i] = code;
            }
            replace_pairs(seq, s, |i| table[i]);
            for &(i, _) in &codes {
                table[i] = 0;
            }
        }
    }
    pairs
}

/// Huffman code lengths of the symbols of `seq` (0 for symbols that do not occur), at most
/// [`MAX_CODE_LEN`] bits: if the tree is deeper, the frequencies are halved (rounding up) and
/// the tree built again.
fn huffman_lengths(seq: &[u16], symbols: usize) -> Vec<u8> {
    let mut freq = vec![0u64; symbols];
    for &x in seq {
        freq[x as usize] += 1;
    }
    loop {
        let lens = huffman_tree_depths(&freq);
        if lens.iter().all(|&l| l <= MAX_CODE_LEN) {
            return lens;
        }
        for f in &mut freq {
            if *f > 0 {
                *f = f.div_ceil(2);
            }
        }
    }
}

/// Depths of the leaves of a Huffman tree over the nonzero frequencies (a lone symbol gets 1).
fn huffman_tree_depths(freq: &[u64]) -> Vec<u8> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut depth = vec![0u8; freq.len()];
    let used: Vec<usize> = (0..freq.len()).filter(|&i| freq[i] > 0).collect();
    if used.len() == 1 {
        depth[used[0]] = 1;
        return depth;
    }
    // Nodes: leaves first (in symbol order), then internal nodes; ties broken by node number.
    let mut parent: Vec<usize> = vec![usize::MAX; used.len()];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = used
        .iter()
        .enumerate()
        .map(|(n, &s)| Reverse((freq[s], n)))
        .collect();
    while heap.len() > 1 {
        let Reverse((f1, n1)) = heap.pop().expect("two nodes");
        let Reverse((f2, n2)) = heap.pop().expect("two nodes");
        let n = parent.len();
        parent.push(usize::MAX);
        parent[n1] = n;
        parent[n2] = n;
        heap.push(Reverse((f1 + f2, n)));
    }
    // Parents have larger numbers than children: one pass from the root down.
    let mut d = vec![0u32; parent.len()];
    for n in (0..parent.len()).rev() {
        if parent[n] != usize::MAX {
            d[n] = d[parent[n]] + 1;
        }
    }
    for (leaf, &s) in used.iter().enumerate() {
        depth[s] = d[leaf].min(255) as u8;
    }
    depth
}

/// Canonical codes: by increasing length, then symbol; each code is the previous one plus one,
/// shifted left when the length grows.
fn canonical_codes(code_lens: &[u8]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..code_lens.len()).filter(|&s| code_lens[s] > 0).collect();
    order.sort_by_key(|&s| (code_lens[s], s));
    let mut codes = vec![0u32; code_lens.len()];
    let mut code = 0u64;
    let mut len = order.first().map_or(0, |&s| code_lens[s]);
    for &s in &order {
        code <<= code_lens[s] - len;
        len = code_lens[s];
        codes[s] = code as u32;
        code += 1;
    }
    codes
}

/// Cuts the coded sequence into blocks: codes MSB first, a code never split between blocks.
fn pack(
    seq: &[u16],
    lens: &[u32],
    code_lens: &[u8],
    codes: &[u32],
    block_bytes: usize,
) -> (Vec<u32>, Vec<u8>) {
    let mut sizes = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    let (mut start, mut bits, mut count) = (0usize, 0usize, 0u32);
    for &x in seq {
        let l = usize::from(code_lens[x as usize]);
        if count > 0 && bits + l > 8 * block_bytes {
            sizes.push(count);
            (bits, count) = (0, 0);
        }
        if count == 0 {
            start = data.len();
            data.resize(start + block_bytes, 0);
        }
        let code = codes[x as usize];
        for i in 0..l {
            if code >> (l - 1 - i) & 1 != 0 {
                data[start + (bits + i) / 8] |= 0x80 >> ((bits + i) % 8);
            }
        }
        bits += l;
        count += lens[x as usize];
    }
    if count > 0 {
        sizes.push(count);
    }
    (sizes, data)
}

/// Why a section's tables or blocks cannot be decoded.
pub type DecodeError = String;

/// Bits of the code lookup and skip tables: codes up to this long decode in one step. With 10
/// bits the probe benchmark ran 8 % slower in WDL and the same in DTZ, with 12 bits 45 % and
/// 20 % slower (the tables, 4 and 16 KiB per section, then miss the cache); with 8, 2 KiB.
const LUT_BITS: usize = 8;

/// A validated section: everything needed to read values out of its blocks.
#[derive(Clone, Debug)]
pub struct Decoder {
    bases: usize,
    /// Value of each base symbol.
    base_values: Vec<u16>,
    /// Halves of each pair symbol (index `symbol - bases`).
    pairs: Vec<(u16, u16)>,
    /// Expansion length of each symbol.
    lens: Vec<u32>,
    /// Per code length `l` (index `l`): the first canonical code of that length and the
    /// exclusive limit, both left-justified in 32 bits (as u64), and where that length's
    /// symbols start in `sorted`.
    first: [u64; MAX_CODE_LEN as usize + 1],
    limit: [u64; MAX_CODE_LEN as usize + 1],
    start: [u32; MAX_CODE_LEN as usize + 1],
    min_len: u8,
    max_len: u8,
    /// The symbol and length of every code of at most [`LUT_BITS`] bits, by its first
    /// `LUT_BITS` bits: `symbol << 8 | length`, 0 where the code is longer.
    lut: Box<[u32]>,
    /// By the first `LUT_BITS` bits at a position: the bits and the values of all the whole
    /// codes in them, `values << 8 | bits` (0 if the first code is longer). A probe skips
    /// runs of short codes this way.
    skip: Box<[u32]>,
    /// Symbols in canonical order.
    sorted: Vec<u16>,
    /// Number of values in each block.
    sizes: Vec<u32>,
    /// Bytes per block.
    block_bytes: usize,
    /// `log2` of the values between entries of `sparse`.
    sparse_shift: u32,
    /// For value `j << sparse_shift`: its block and its position in that block.
    sparse: Vec<(u32, u32)>,
    len: u64,
    /// Unique per constructed decoder (clones share it: same tables); keys the per-thread
    /// expansion table of [`Decoder::decode_blocks`].
    id: u64,
}

impl Decoder {
    /// Validates a section's tables: `len` values, `bases` base values, `pairs`, `code_lens`
    /// (one per symbol), `sizes` (values per block) and the block size. The blocks themselves
    /// are not looked at.
    pub fn new(
        len: u64,
        base_values: Vec<u16>,
        pairs: Vec<(u16, u16)>,
        code_lens: &[u8],
        sizes: Vec<u32>,
        block_bytes: usize,
    ) -> Result<Decoder, DecodeError> {
        if !valid_block_bytes(block_bytes) {
            return Err(format!("block size {block_bytes} not allowed"));
        }
        let bases = base_values.len();
        let symbols = bases + pairs.len();
        if len == 0 {
            if symbols != 0 || !sizes.is_empty() {
                return Err("empty section with symbols or blocks".into());
            }
        } else if bases == 0 {
            return Err("no base values".into());
        }
        if symbols > MAX_SYMBOLS {
            return Err(format!("{symbols} symbols, at most {MAX_SYMBOLS}"));
        }
        if code_lens.len() != symbols {
            return Err("code length table does not match the symbol count".into());
        }
        let mut lens: Vec<u32> = vec![1; bases];
        for (i, &(a, b)) in pairs.iter().enumerate() {
            let s = bases + i;
            let (a, b) = (usize::from(a), usize::from(b));
            if a >= s || b >= s {
                return Err(format!("pair symbol {s} refers to a later symbol"));
            }
            let l = lens[a] + lens[b];
            if l > MAX_EXPANSION {
                return Err(format!("pair symbol {s} expands to {l} values"));
            }
            lens.push(l);
        }
        // Kraft: the codes must fit, measured in units of 2^-32.
        let mut kraft = 0u64;
        let mut count = [0u32; MAX_CODE_LEN as usize + 1];
        for &l in code_lens {
            if l > MAX_CODE_LEN {
                return Err(format!("code length {l} over {MAX_CODE_LEN}"));
            }
            if l > 0 {
                kraft += 1u64 << (MAX_CODE_LEN - l);
                count[usize::from(l)] += 1;
            }
        }
        if kraft > 1u64 << MAX_CODE_LEN {
            return Err("code lengths overfull (Kraft sum over 1)".into());
        }
        if len > 0 && kraft == 0 {
            return Err("no symbol has a code".into());
        }
        let mut sorted: Vec<u16> = (0..symbols as u16)
            .filter(|&s| code_lens[usize::from(s)] > 0)
            .collect();
        sorted.sort_by_key(|&s| (code_lens[usize::from(s)], s));
        let mut first = [0u64; MAX_CODE_LEN as usize + 1];
        let mut limit = [0u64; MAX_CODE_LEN as usize + 1];
        let mut start = [0u32; MAX_CODE_LEN as usize + 1];
        let (mut code, mut at) = (0u64, 0u32);
        let (mut min_len, mut max_len) = (0u8, 0u8);
        for l in 1..=MAX_CODE_LEN {
            let n = count[usize::from(l)];
            let shift = MAX_CODE_LEN - l;
            first[usize::from(l)] = code << shift;
            limit[usize::from(l)] = (code + u64::from(n)) << shift;
            start[usize::from(l)] = at;
            if n > 0 {
                if min_len == 0 {
                    min_len = l;
                }
                max_len = l;
            }
            code = (code + u64::from(n)) << 1;
            at += n;
        }
        // A block holds whole codes of at least one bit, each at most MAX_EXPANSION values.
        let most = 8 * block_bytes as u64 * u64::from(MAX_EXPANSION);
        if let Some(b) = sizes.iter().position(|&n| n == 0 || u64::from(n) > most) {
            return Err(format!("block {b} holds {} values", sizes[b]));
        }
        let total: u64 = sizes.iter().map(|&s| u64::from(s)).sum();
        if total != len {
            return Err(format!("blocks hold {total} values, section has {len}"));
        }
        // A sparse index entry every ~16 blocks' worth of values.
        let per_block = len.div_ceil(sizes.len().max(1) as u64).max(1);
        let sparse_shift = (per_block * 16).next_power_of_two().trailing_zeros();
        let mut sparse = Vec::with_capacity((len >> sparse_shift) as usize + 1);
        let mut block_start = 0u64;
        for (b, &s) in sizes.iter().enumerate() {
            let end = block_start + u64::from(s);
            // Entries whose value falls in this block.
            let mut j = (sparse.len() as u64) << sparse_shift;
            while j < end {
                sparse.push((b as u32, (j - block_start) as u32));
                j = (sparse.len() as u64) << sparse_shift;
            }
            block_start = end;
        }
        let mut lut = vec![0u32; 1 << LUT_BITS].into_boxed_slice();
        for l in 1..=LUT_BITS.min(usize::from(max_len)) {
            let shift = MAX_CODE_LEN as usize - l;
            for k in 0..count[l] as usize {
                let code = (first[l] >> shift) as usize + k;
                let sym = u32::from(sorted[start[l] as usize + k]);
                let span = 1 << (LUT_BITS - l);
                lut[code * span..(code + 1) * span].fill(sym << 8 | l as u32);
            }
        }
        let skip = (0..1usize << LUT_BITS)
            .map(|p| {
                let (mut bits, mut values) = (0usize, 0u32);
                loop {
                    let e = lut[(p << bits) & ((1 << LUT_BITS) - 1)];
                    let l = (e & 0xff) as usize;
                    if e == 0 || bits + l > LUT_BITS {
                        break values << 8 | bits as u32;
                    }
                    bits += l;
                    values += lens[(e >> 8) as usize];
                }
            })
            .collect();
        Ok(Decoder {
            bases,
            base_values,
            pairs,
            lens,
            first,
            limit,
            start,
            min_len,
            max_len,
            lut,
            skip,
            sorted,
            sizes,
            block_bytes,
            sparse_shift,
            sparse,
            len,
            id: {
                static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
                NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            },
        })
    }

    /// Number of values.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the section has no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.sizes.len()
    }

    /// The largest base value.
    pub fn max_value(&self) -> u16 {
        self.base_values.iter().copied().max().unwrap_or(0)
    }

    /// The block holding value `index` (< [`Decoder::len`]) and the value's position in it.
    #[inline]
    pub fn locate(&self, index: u64) -> (usize, u32) {
        let (b, off) = self.sparse[(index >> self.sparse_shift) as usize];
        let mut pos = off as u64 + (index & ((1 << self.sparse_shift) - 1));
        let mut b = b as usize;
        while pos >= u64::from(self.sizes[b]) {
            pos -= u64::from(self.sizes[b]);
            b += 1;
        }
        (b, pos as u32)
    }

    /// Bytes per block.
    pub fn block_bytes(&self) -> usize {
        self.block_bytes
    }

    /// Decodes one code from `block` at bit `bit` (inside the block): the symbol and the code
    /// length. Bits past the block's end read as zero.
    #[inline]
    fn next_symbol(&self, block: &[u8], bit: usize) -> Option<(usize, usize)> {
        self.symbol_of(Self::window(block, bit))
    }

    /// The [`MAX_CODE_LEN`] bits of `block` from bit `bit` on (zeros past its end).
    #[inline]
    fn window(block: &[u8], bit: usize) -> u64 {
        let byte = bit / 8;
        let word = match block.get(byte..byte + 8) {
            Some(w) => u64::from_be_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut w8 = [0u8; 8];
                let tail = block.get(byte..).unwrap_or_default();
                w8[..tail.len()].copy_from_slice(tail);
                u64::from_be_bytes(w8)
            }
        };
        (word << (bit % 8)) >> (64 - MAX_CODE_LEN as usize)
    }

    /// The symbol and length of the code at the start of `window`.
    #[inline]
    fn symbol_of(&self, window: u64) -> Option<(usize, usize)> {
        let e = self.lut[(window >> (MAX_CODE_LEN as usize - LUT_BITS)) as usize];
        if e != 0 {
            return Some(((e >> 8) as usize, (e & 0xff) as usize));
        }
        let mut l = usize::from(self.min_len).max(LUT_BITS + 1);
        while l <= usize::from(self.max_len) {
            if window < self.limit[l] {
                let k = self.start[l] as usize
                    + ((window - self.first[l]) >> (MAX_CODE_LEN as usize - l)) as usize;
                return Some((usize::from(self.sorted[k]), l));
            }
            l += 1;
        }
        None
    }

    /// The value at position `pos` of a block whose bytes are `block` (the block size long).
    #[inline]
    pub fn get_in_block(&self, block: &[u8], pos: u32) -> Result<u16, DecodeError> {
        self.get_in_block_from(block, 0, pos)
    }

    /// [`Decoder::get_in_block`] walking from the code at bit `bit`, `pos` counted from the
    /// first value of that code's symbol.
    #[inline]
    fn get_in_block_from(
        &self,
        block: &[u8],
        mut bit: usize,
        mut pos: u32,
    ) -> Result<u16, DecodeError> {
        let block = &block[..self.block_bytes.min(block.len())];
        let sym = loop {
            if bit >= 8 * block.len() {
                return Err("block ends before its values".into());
            }
            let window = Self::window(block, bit);
            let e = self.skip[(window >> (MAX_CODE_LEN as usize - LUT_BITS)) as usize];
            if e & 0xff != 0 && pos >= e >> 8 {
                pos -= e >> 8;
                bit += (e & 0xff) as usize;
                continue;
            }
            let (sym, l) = self
                .symbol_of(window)
                .ok_or_else(|| "invalid code".to_string())?;
            if pos < self.lens[sym] {
                break sym;
            }
            pos -= self.lens[sym];
            bit += l;
        };
        Ok(self.value_in_symbol(sym, pos))
    }

    /// [`Decoder::get_in_block`] for block `b`, through this thread's cache of where the
    /// symbols of the blocks it read last start, one entry per block number and file hash: a
    /// lookup of a block in the cache is a binary search and a short walk; a block read a
    /// second time since it entered the cache is walked whole to list its symbols. Lookups
    /// from a search come in runs that fall in few blocks (the positions a capture leads to
    /// from neighbouring slots differ in one piece), so most are hits.
    ///
    /// A list holds every [`SYMBOL_STRIDE`]th symbol's first value and bit (a lookup walks
    /// from the one before it, [`SYMBOL_STRIDE`] codes at most), a few dozen bytes to a few
    /// hundred. The entries are [`CACHED_BLOCKS`]: a pawnful build's promotions reach a large
    /// table's blocks with little locality but come back to each many times. KNPvKB, WDL +
    /// DTZ, 100 M lookups in its five five-piece tables: with 64 entries 77 % of them walked
    /// a block, with 8 192 5.6 %, and the build took 0.94x the CPU time (peak RSS +40 MB).
    #[inline]
    pub fn get_cached(&self, b: usize, block: &[u8], pos: u32) -> Result<u16, DecodeError> {
        const WAYS: usize = CACHED_BLOCKS;
        type Entry = (u64, usize, Vec<(u32, u32)>);
        thread_local! {
            static BLOCKS: std::cell::RefCell<Vec<Entry>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        BLOCKS.with(|cell| {
            let mut cache = cell.borrow_mut();
            if cache.is_empty() {
                cache.resize_with(WAYS, || (0, 0, Vec::new()));
            }
            let slot = (b ^ (self.id as usize).wrapping_mul(0x9e37_79b9)) % WAYS;
            let e = &mut cache[slot];
            if e.0 != self.id || e.1 != b {
                // A block seen for the first time is walked as without a cache (lookups with
                // no locality, such as an engine's probes, pay no more than that); its symbols
                // are listed when it comes back.
                (e.0, e.1) = (self.id, b);
                e.2.clear();
                return self.get_in_block(block, pos);
            }
            if e.2.is_empty() {
                e.0 = 0;
                self.block_symbols(b, block, &mut e.2)?;
                e.0 = self.id;
            }
            let marks = &e.2;
            let k = marks.partition_point(|&(start, _)| start <= pos) - 1;
            let (start, bit) = marks[k];
            self.get_in_block_from(block, bit as usize, pos - start)
        })
    }

    /// Where every [`SYMBOL_STRIDE`]th symbol of block `b` (bytes `block`) starts among its
    /// values and its code among its bits, in order, from the first.
    fn block_symbols(
        &self,
        b: usize,
        block: &[u8],
        out: &mut Vec<(u32, u32)>,
    ) -> Result<(), DecodeError> {
        let block = &block[..self.block_bytes.min(block.len())];
        out.clear();
        let mut k = 0;
        self.for_each_symbol(block, self.sizes[b] as usize, |done, bit, _| {
            if k % SYMBOL_STRIDE == 0 {
                out.push((done as u32, bit as u32));
            }
            k += 1;
        })?;
        if out.is_empty() {
            return Err("empty block".into());
        }
        Ok(())
    }

    /// `f(first value, first bit, symbol)` for each symbol of a block (bytes `block`) of `n`
    /// values, in order.
    #[inline]
    fn for_each_symbol(
        &self,
        block: &[u8],
        n: usize,
        mut f: impl FnMut(usize, usize, usize),
    ) -> Result<(), DecodeError> {
        let (mut bit, mut done) = (0usize, 0usize);
        while done < n {
            if bit >= 8 * block.len() {
                return Err("block ends before its values".into());
            }
            let (sym, l) = self
                .next_symbol(block, bit)
                .ok_or_else(|| "invalid code".to_string())?;
            f(done, bit, sym);
            done += self.lens[sym] as usize;
            bit += l;
        }
        Ok(())
    }

    /// Value `pos` of symbol `sym`'s expansion.
    #[inline]
    fn value_in_symbol(&self, mut sym: usize, mut pos: u32) -> u16 {
        while sym >= self.bases {
            let (a, b) = self.pairs[sym - self.bases];
            let (a, b) = (usize::from(a), usize::from(b));
            if pos < self.lens[a] {
                sym = a;
            } else {
                pos -= self.lens[a];
                sym = b;
            }
        }
        self.base_values[sym]
    }

    /// Every symbol's expansion, flattened: (start of each symbol's values, the values).
    fn expansions(&self) -> (Vec<u32>, Vec<u16>) {
        let mut start = Vec::with_capacity(self.lens.len());
        let mut values: Vec<u16> = Vec::new();
        for (s, &v) in self.base_values.iter().enumerate() {
            start.push(s as u32);
            values.push(v);
        }
        for &(a, b) in &self.pairs {
            start.push(values.len() as u32);
            for h in [a, b] {
                let h = usize::from(h);
                let from = start[h] as usize;
                values.extend_from_within(from..from + self.lens[h] as usize);
            }
        }
        (start, values)
    }

    /// Decodes blocks `first ..` (their bytes back to back in `blocks`) into `out`, which must
    /// be exactly as long as those blocks' values.
    pub fn decode_blocks<T: Copy>(
        &self,
        first: usize,
        blocks: &[u8],
        out: &mut [T],
        cast: impl Fn(u16) -> T,
    ) -> Result<(), DecodeError> {
        thread_local! {
            static EXP: std::cell::RefCell<(u64, Vec<u32>, Vec<u16>)> =
                const { std::cell::RefCell::new((0, Vec::new(), Vec::new())) };
        }
        // The expansion table is rebuilt unless this thread's last call used the same decoder.
        EXP.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.0 != self.id {
                let (s, v) = self.expansions();
                *cell = (self.id, s, v);
            }
            let (_, starts, values) = &*cell;
            let mut at = 0usize;
            for (i, block) in blocks.chunks_exact(self.block_bytes).enumerate() {
                let n = self.sizes.get(first + i).copied().unwrap_or(0) as usize;
                if at + n > out.len() {
                    return Err("output shorter than the blocks' values".to_string());
                }
                let out = &mut out[at..at + n];
                self.for_each_symbol(block, n, |done, _, sym| {
                    let take = (self.lens[sym] as usize).min(n - done);
                    let from = starts[sym] as usize;
                    for (o, &v) in out[done..done + take]
                        .iter_mut()
                        .zip(&values[from..from + take])
                    {
                        *o = cast(v);
                    }
                })?;
                at += n;
            }
            if at != out.len() {
                return Err("output longer than the blocks' values".into());
            }
            Ok(())
        })
    }

    /// Number of values in block `b`.
    pub fn block_len(&self, b: usize) -> u32 {
        self.sizes[b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(values: &[u16]) -> Encoded {
        for bb in [MIN_BLOCK_BYTES, BLOCK_BYTES, MAX_BLOCK_BYTES] {
            let e = encode(values, bb).expect("encode");
            let d = Decoder::new(
                values.len() as u64,
                e.bases.clone(),
                e.pairs.clone(),
                &e.code_lens,
                e.sizes.clone(),
                bb,
            )
            .expect("valid tables");
            assert_eq!(e.data.len(), e.sizes.len() * bb);
            for (i, &v) in values.iter().enumerate() {
                let (b, pos) = d.locate(i as u64);
                let got = d
                    .get_in_block(&e.data[b * bb..(b + 1) * bb], pos)
                    .expect("decode");
                assert_eq!(got, v, "value {i}, blocks of {bb} bytes");
            }
            // Through this thread's block cache, in an order that leaves blocks and comes back.
            for k in 0..values.len() {
                let i = (k * 7919 + k / 3) % values.len();
                let (b, pos) = d.locate(i as u64);
                let got = d
                    .get_cached(b, &e.data[b * bb..(b + 1) * bb], pos)
                    .expect("decode");
                assert_eq!(got, values[i], "value {i} cached, blocks of {bb} bytes");
            }
            let mut all = vec![0u16; values.len()];
            d.decode_blocks(0, &e.data, &mut all, |v| v)
                .expect("decode all");
            assert_eq!(all, values);
        }
        encode(values, BLOCK_BYTES).expect("encode")
    }

    /// A deterministic pseudo-random generator (xorshift) for test data.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn empty_and_tiny() {
        roundtrip(&[]);
        roundtrip(&[7]);
        roundtrip(&[3, 3]);
        roundtrip(&[0, 65535, 0]);
    }

    #[test]
    fn long_runs_compress_to_little() {
        let values = vec![2u16; 1_000_000];
        let e = roundtrip(&values);
        // 1M equal values: symbols of MAX_EXPANSION values, one bit each, blocks full.
        let per_block = 8 * BLOCK_BYTES * MAX_EXPANSION as usize;
        assert_eq!(e.sizes.len(), values.len().div_ceil(per_block));
        assert!(e.pairs.len() <= 16, "{} pairs", e.pairs.len());
    }

    #[test]
    fn structured_and_random_values() {
        let mut r = rng(0x9e37_79b9_7f4a_7c15);
        // Repeating patterns with noise, like table rows.
        let row: Vec<u16> = (0..64).map(|_| (r() % 5) as u16).collect();
        let values: Vec<u16> = (0..200_000)
            .map(|i| {
                if r().is_multiple_of(50) {
                    (r() % 5) as u16
                } else {
                    row[i % 64]
                }
            })
            .collect();
        let e = roundtrip(&values);
        assert!(e.data.len() < values.len() / 8, "{} bytes", e.data.len());
        // Wide random values: little structure, many symbols.
        let values: Vec<u16> = (0..50_000).map(|_| (r() % 300) as u16).collect();
        roundtrip(&values);
        // Skewed distribution, deep Huffman tree.
        let values: Vec<u16> = (0..100_000)
            .map(|_| (r() as u32).leading_zeros() as u16 * 1000)
            .collect();
        roundtrip(&values);
    }

    #[test]
    fn counting_by_table_or_by_sorting_chooses_the_same_pairs() {
        let mut r = rng(0x2545_f491_4f6c_dd1d);
        let row: Vec<u16> = (0..97).map(|_| (r() % 7) as u16).collect();
        let inputs: Vec<Vec<u16>> = vec![
            // Rows with noise: many rounds, hundreds of pairs.
            (0..300_000)
                .map(|i| {
                    if r().is_multiple_of(40) {
                        (r() % 7) as u16
                    } else {
                        row[i % 97]
                    }
                })
                .collect(),
            // Runs of equal values (the every-other rule) among others.
            (0..50_000).map(|i| ((i / 37) % 3) as u16).collect(),
            // Random values: every pair common at first, nearly 2 000 pairs.
            (0..400_000).map(|_| (r() % 40) as u16).collect(),
        ];
        for values in inputs {
            let bases = *values.iter().max().expect("values") as usize + 1;
            let (mut by_table, mut by_sorting) = (values.clone(), values.clone());
            let (mut lens_t, mut lens_s) = (vec![1; bases], vec![1; bases]);
            let pairs_t = repair_with(&mut by_table, &mut lens_t, usize::MAX);
            let pairs_s = repair_with(&mut by_sorting, &mut lens_s, 0);
            assert!(pairs_t.len() >= 20, "{} pairs", pairs_t.len());
            assert_eq!(pairs_t, pairs_s);
            assert_eq!(by_table, by_sorting);
            assert_eq!(lens_t, lens_s);
        }
    }

    #[test]
    fn code_lengths_are_limited() {
        // Fibonacci frequencies make the deepest Huffman trees.
        let mut values = Vec::new();
        let (mut a, mut b) = (1usize, 1usize);
        for v in 0..40u16 {
            values.extend(std::iter::repeat_n(v, a.min(3_000_000)));
            (a, b) = (b, a + b);
        }
        // Interleave so Re-Pair finds few pairs.
        let mut r = rng(42);
        for i in (1..values.len()).rev() {
            values.swap(i, (r() % (i as u64 + 1)) as usize);
        }
        let e = roundtrip(&values[..2_000_000]);
        assert!(e.code_lens.iter().all(|&l| l <= MAX_CODE_LEN));
    }

    #[test]
    fn bad_tables_are_refused() {
        let e = encode(&[1, 2, 1, 2, 1, 2, 3], BLOCK_BYTES).unwrap();
        let ok = |len, pairs: Vec<(u16, u16)>, lens: &[u8], sizes: &[u32]| {
            Decoder::new(
                len,
                e.bases.clone(),
                pairs,
                lens,
                sizes.to_vec(),
                BLOCK_BYTES,
            )
            .is_ok()
        };
        assert!(
            !ok(7, e.pairs.clone(), &e.code_lens, &[7, 0]),
            "empty block"
        );
        assert!(encode(&[1], 100).is_err(), "block size not a power of two");
        assert!(encode(&[1], 2048).is_err(), "block size too large");
        assert!(ok(7, e.pairs.clone(), &e.code_lens, &e.sizes));
        assert!(
            !ok(8, e.pairs.clone(), &e.code_lens, &e.sizes),
            "wrong length"
        );
        assert!(
            !ok(7, vec![(5, 0)], &[1, 1, 1, 1], &e.sizes),
            "forward pair"
        );
        assert!(!ok(7, vec![], &[1, 1, 1], &e.sizes), "overfull code");
        assert!(!ok(7, vec![], &[32, 1, 1], &e.sizes), "code too long");
        assert!(!ok(7, vec![], &[0, 0, 0], &e.sizes), "no codes");
        assert!(!ok(7, vec![], &[1, 2], &e.sizes), "missing code length");
    }

    #[test]
    fn garbage_blocks_never_panic() {
        let values: Vec<u16> = (0..5000).map(|i| (i % 7 + i / 1000) as u16).collect();
        let e = encode(&values, BLOCK_BYTES).unwrap();
        let d = Decoder::new(5000, e.bases, e.pairs, &e.code_lens, e.sizes, BLOCK_BYTES).unwrap();
        let mut r = rng(7);
        for _ in 0..2000 {
            let block: Vec<u8> = (0..BLOCK_BYTES).map(|_| r() as u8).collect();
            let i = r() % 5000;
            let (b, pos) = d.locate(i);
            let _ = d.get_in_block(&block, pos);
            let _ = d.get_cached(b, &block, pos);
            let n = d.block_len(b) as usize;
            let mut out = vec![0u16; n];
            let _ = d.decode_blocks(b, &block, &mut out, |v| v);
        }
    }
}
