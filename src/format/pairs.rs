//! The "pairs" codec: a Re-Pair grammar, canonical Huffman codes and 64-byte blocks.
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
//! and [`Decoder::new`] validates such tables (taken from any bytes) so that [`Decoder::get_in_block`]
//! and [`Decoder::decode_blocks`] never panic, whatever the block bytes are.

/// Bytes per block. Every block is exactly this long (padded with zero bits).
pub const BLOCK_BYTES: usize = 64;

const BLOCK_BITS: usize = BLOCK_BYTES * 8;

/// The most symbols a section may have (base values and pairs together).
pub const MAX_SYMBOLS: usize = 4096;

/// The most values one symbol may expand to (longer symbols save little and make a probe
/// walk further down the pair tree).
pub const MAX_EXPANSION: u32 = 256;

/// The most values one block may hold, so that its count (less one) fits a `u16`.
pub const MAX_BLOCK_VALUES: u32 = 1 << 16;

/// The longest Huffman code, in bits.
pub const MAX_CODE_LEN: u8 = 32;

/// Bytes of the pair-count and replacement tables of one [`encode`] at most (they grow with the
/// square of the symbol count).
pub const ENCODER_TABLE_BYTES: u64 = (MAX_SYMBOLS * MAX_SYMBOLS * 6) as u64;

/// A pair becomes a symbol only if it occurs at least this often (a symbol costs about five
/// bytes of tables).
const MIN_PAIR_COUNT: u32 = 16;

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
    /// Number of values in each block, less one.
    pub sizes: Vec<u16>,
    /// The blocks, `BLOCK_BYTES` each.
    pub data: Vec<u8>,
}

/// The most distinct values a section may have (half the symbol budget, so that pairs have
/// room). Tablebase sections have a few hundred at most.
pub const MAX_BASES: usize = MAX_SYMBOLS / 2;

/// Encodes `values`. Deterministic: the output depends on the values only. Fails only when
/// there are more than [`MAX_BASES`] distinct values.
pub fn encode(values: &[u16]) -> Result<Encoded, String> {
    if values.is_empty() {
        return Ok(Encoded::default());
    }
    let bases: Vec<u16> = {
        let mut seen = vec![false; 1 << 16];
        for &v in values {
            seen[v as usize] = true;
        }
        (0..=u16::MAX).filter(|&v| seen[v as usize]).collect()
    };
    if bases.len() > MAX_BASES {
        return Err(format!(
            "{} distinct values in one section, at most {MAX_BASES}",
            bases.len()
        ));
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
    let (sizes, data) = pack(&seq, &lens, &code_lens, &codes);
    Ok(Encoded {
        bases,
        pairs,
        code_lens,
        sizes,
        data,
    })
}

/// Re-Pair: replaces common adjacent pairs in `seq` by new symbols, in rounds. Each round
/// counts all pairs, then replaces, in one left-to-right pass, a set of pairs that cannot
/// overlap one another (no chosen pair's right half is another's left half), the commonest
/// first and each at least a quarter as common as the commonest. Returns the pairs; `lens`
/// gets the expansion length of each new symbol.
fn repair(seq: &mut Vec<u16>, lens: &mut Vec<u32>) -> Vec<(u16, u16)> {
    let mut pairs = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut replace: Vec<u16> = Vec::new();
    loop {
        let s = lens.len();
        if s >= MAX_SYMBOLS || seq.len() < 2 {
            break;
        }
        counts.clear();
        counts.resize(s * s, 0);
        // A run `aaaa` holds two replaceable `aa`, not three: count every other one.
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
            counts[a * s + b] += 1;
        }
        let mut cands: Vec<(u32, u16, u16)> = counts
            .iter()
            .enumerate()
            .filter(|&(i, &c)| c >= MIN_PAIR_COUNT && lens[i / s] + lens[i % s] <= MAX_EXPANSION)
            .map(|(i, &c)| (c, (i / s) as u16, (i % s) as u16))
            .collect();
        if cands.is_empty() {
            break;
        }
        cands.sort_unstable_by(|x, y| y.0.cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        let floor = (cands[0].0 / 4).max(MIN_PAIR_COUNT);
        let mut is_left = vec![false; s];
        let mut is_right = vec![false; s];
        replace.clear();
        replace.resize(s * s, 0);
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
            // Stored plus one: 0 means "not replaced".
            replace[a * s + b] = next as u16 + 1;
            pairs.push((a as u16, b as u16));
            lens.push(lens[a] + lens[b]);
            next += 1;
        }
        let (mut r, mut w) = (0, 0);
        let n = seq.len();
        while r < n {
            if r + 1 < n {
                let code = replace[seq[r] as usize * s + seq[r + 1] as usize];
                if code != 0 {
                    seq[w] = code - 1;
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
fn pack(seq: &[u16], lens: &[u32], code_lens: &[u8], codes: &[u32]) -> (Vec<u16>, Vec<u8>) {
    let mut sizes = Vec::new();
    let mut data = Vec::new();
    let mut block = [0u8; BLOCK_BYTES];
    let (mut bits, mut count) = (0usize, 0u32);
    let flush = |block: &mut [u8; BLOCK_BYTES], sizes: &mut Vec<u16>, data: &mut Vec<u8>, count| {
        sizes.push((count - 1) as u16);
        data.extend_from_slice(block);
        *block = [0; BLOCK_BYTES];
    };
    for &x in seq {
        let l = usize::from(code_lens[x as usize]);
        if bits + l > BLOCK_BITS || count + lens[x as usize] > MAX_BLOCK_VALUES {
            flush(&mut block, &mut sizes, &mut data, count);
            bits = 0;
            count = 0;
        }
        let code = codes[x as usize];
        for i in 0..l {
            if code >> (l - 1 - i) & 1 != 0 {
                block[(bits + i) / 8] |= 0x80 >> ((bits + i) % 8);
            }
        }
        bits += l;
        count += lens[x as usize];
    }
    if count > 0 {
        flush(&mut block, &mut sizes, &mut data, count);
    }
    (sizes, data)
}

/// Why a section's tables or blocks cannot be decoded.
pub type DecodeError = String;

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
    /// Symbols in canonical order.
    sorted: Vec<u16>,
    /// Number of values in each block.
    sizes: Vec<u32>,
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
    /// (one per symbol) and `sizes` (values per block, less one). The blocks themselves are not
    /// looked at.
    pub fn new(
        len: u64,
        base_values: Vec<u16>,
        pairs: Vec<(u16, u16)>,
        code_lens: &[u8],
        raw_sizes: &[u16],
    ) -> Result<Decoder, DecodeError> {
        let bases = base_values.len();
        let symbols = bases + pairs.len();
        if len == 0 {
            if symbols != 0 || !raw_sizes.is_empty() {
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
        let sizes: Vec<u32> = raw_sizes.iter().map(|&s| u32::from(s) + 1).collect();
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
            sorted,
            sizes,
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

    /// Decodes one code from `buf` at bit `bit`: the symbol and the code length.
    #[inline]
    fn next_symbol(&self, buf: &[u8; BLOCK_BYTES + 8], bit: usize) -> Option<(usize, usize)> {
        let byte = bit / 8;
        let mut w8 = [0u8; 8];
        w8.copy_from_slice(&buf[byte..byte + 8]);
        let window = (u64::from_be_bytes(w8) << (bit % 8)) >> 32;
        let mut l = usize::from(self.min_len);
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

    /// The value at position `pos` of a block whose bytes are `block` ([`BLOCK_BYTES`] long).
    #[inline]
    pub fn get_in_block(&self, block: &[u8], mut pos: u32) -> Result<u16, DecodeError> {
        let mut buf = [0u8; BLOCK_BYTES + 8];
        buf[..BLOCK_BYTES].copy_from_slice(&block[..BLOCK_BYTES]);
        let mut bit = 0;
        let mut sym = loop {
            if bit >= BLOCK_BITS {
                return Err("block ends before its values".into());
            }
            let (sym, l) = self
                .next_symbol(&buf, bit)
                .ok_or_else(|| "invalid code".to_string())?;
            if pos < self.lens[sym] {
                break sym;
            }
            pos -= self.lens[sym];
            bit += l;
        };
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
        Ok(self.base_values[sym])
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
            let mut buf = [0u8; BLOCK_BYTES + 8];
            for (i, block) in blocks.chunks_exact(BLOCK_BYTES).enumerate() {
                let n = self.sizes.get(first + i).copied().unwrap_or(0) as usize;
                if at + n > out.len() {
                    return Err("output shorter than the blocks' values".to_string());
                }
                buf[..BLOCK_BYTES].copy_from_slice(block);
                let (mut bit, mut done) = (0usize, 0usize);
                while done < n {
                    if bit >= BLOCK_BITS {
                        return Err("block ends before its values".into());
                    }
                    let (sym, l) = self
                        .next_symbol(&buf, bit)
                        .ok_or_else(|| "invalid code".to_string())?;
                    let take = (self.lens[sym] as usize).min(n - done);
                    let from = starts[sym] as usize;
                    for (o, &v) in out[at + done..at + done + take]
                        .iter_mut()
                        .zip(&values[from..from + take])
                    {
                        *o = cast(v);
                    }
                    done += take;
                    bit += l;
                }
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
        let e = encode(values).expect("encode");
        let d = Decoder::new(
            values.len() as u64,
            e.bases.clone(),
            e.pairs.clone(),
            &e.code_lens,
            &e.sizes,
        )
        .expect("valid tables");
        assert_eq!(e.data.len(), e.sizes.len() * BLOCK_BYTES);
        for (i, &v) in values.iter().enumerate() {
            let (b, pos) = d.locate(i as u64);
            let got = d
                .get_in_block(&e.data[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES], pos)
                .expect("decode");
            assert_eq!(got, v, "value {i}");
        }
        let mut all = vec![0u16; values.len()];
        d.decode_blocks(0, &e.data, &mut all, |v| v)
            .expect("decode all");
        assert_eq!(all, values);
        e
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
        // 1M equal values: symbols of 128 values, 1 bit each.
        assert!(e.data.len() < 2_000, "{} bytes", e.data.len());
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
        let e = encode(&[1, 2, 1, 2, 1, 2, 3]).unwrap();
        let ok = |len, pairs: Vec<(u16, u16)>, lens: &[u8], sizes: &[u16]| {
            Decoder::new(len, e.bases.clone(), pairs, lens, sizes).is_ok()
        };
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
        assert!(!ok(7, vec![], &[33, 1, 1], &e.sizes), "code too long");
        assert!(!ok(7, vec![], &[0, 0, 0], &e.sizes), "no codes");
        assert!(!ok(7, vec![], &[1, 2], &e.sizes), "missing code length");
    }

    #[test]
    fn garbage_blocks_never_panic() {
        let values: Vec<u16> = (0..5000).map(|i| (i % 7 + i / 1000) as u16).collect();
        let e = encode(&values).unwrap();
        let d = Decoder::new(5000, e.bases, e.pairs, &e.code_lens, &e.sizes).unwrap();
        let mut r = rng(7);
        for _ in 0..2000 {
            let block: Vec<u8> = (0..BLOCK_BYTES).map(|_| r() as u8).collect();
            let i = r() % 5000;
            let (b, pos) = d.locate(i);
            let _ = d.get_in_block(&block, pos);
            let n = d.block_len(b) as usize;
            let mut out = vec![0u16; n];
            let _ = d.decode_blocks(b, &block, &mut out, |v| v);
        }
    }
}
