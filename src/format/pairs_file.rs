//! The layout of a version-5 ("pairs") file: building one and validating one.
//!
//! After the fixed header and the metadata (as in version 4), with `S` sections:
//!
//! | size | contents |
//! |------|----------|
//! | 32·S | per section: u64 values, u64 blocks `n`, u32 base symbols `b`, u32 symbols `s`, u64 long blocks `g` |
//! | ..   | per section, each starting 8-aligned: `b` u16 base values, `s−b` pairs (two 12-bit symbols in 3 bytes, little-endian, first symbol in the low bits), `s` code lengths of 5 bits (packed from the low bits of each byte up), zero to 2-aligned, one u16 per block (its values less one, or `FFFF` for a *long* block of 65 536 values or more), zero to 4-aligned, `g` u32 (the values of each long block, in block order), zero to 8-aligned |
//! | 8·C  | u64 XXH64 of each chunk of [`CHUNK_BYTES`] (`C` is the header's block count) |
//! | 8    | u64 header checksum: XXH64 of everything before it |
//! | B·n  | the blocks of all sections, `B` bytes each (the header's block size), back to back in section order (`n` blocks in all) |
//! | 8    | u64 file checksum |
//!
//! A chunk is [`CHUNK_BYTES`] of the data region (the last one shorter; block sizes divide
//! it); its checksum covers *compressed* bytes, and a reader checks it the first time it reads
//! from the chunk.

use super::header::{FixedHeader, Layout, u32_at, u64_at};
use super::pairs::{Decoder, Encoded, MAX_BLOCK_BYTES};

/// Bytes per checksummed chunk (a multiple of every block size).
pub(crate) const CHUNK_BYTES: usize = 4096;

const _: () = assert!(CHUNK_BYTES.is_multiple_of(MAX_BLOCK_BYTES));

/// Blocks per chunk, for blocks of `block_bytes`.
pub(crate) fn chunk_blocks(block_bytes: usize) -> u64 {
    (CHUNK_BYTES / block_bytes) as u64
}

/// Bytes of `symbols` code lengths of 5 bits.
fn code_lens_bytes(symbols: u64) -> u64 {
    (5 * symbols).div_ceil(8)
}

/// Bytes of a section descriptor.
const DESCRIPTOR_LEN: u64 = 32;

/// The block size entry that marks a long block.
const LONG: u16 = u16::MAX;

/// The u16 entry of a block of `n` values: `n − 1`, or [`LONG`].
fn short_size(n: u32) -> u16 {
    u16::try_from(n - 1).unwrap_or(LONG)
}

fn long_blocks(e: &Encoded) -> u64 {
    e.sizes.iter().filter(|&&n| short_size(n) == LONG).count() as u64
}

/// The serialised tables of one encoded section (8-aligned length).
pub(crate) fn section_tables(e: &Encoded) -> Vec<u8> {
    let mut t = Vec::new();
    for &v in &e.bases {
        t.extend_from_slice(&v.to_le_bytes());
    }
    for &(a, b) in &e.pairs {
        // Two 12-bit symbols in 3 bytes (symbols are below MAX_SYMBOLS = 4096).
        let x = u32::from(a) | u32::from(b) << 12;
        t.extend_from_slice(&x.to_le_bytes()[..3]);
    }
    let at = t.len();
    t.resize(at + code_lens_bytes(e.code_lens.len() as u64) as usize, 0);
    for (i, &l) in e.code_lens.iter().enumerate() {
        for bit in 0..5 {
            if l >> bit & 1 != 0 {
                t[at + (5 * i + bit) / 8] |= 1 << ((5 * i + bit) % 8);
            }
        }
    }
    t.resize(t.len().next_multiple_of(2), 0);
    for &n in &e.sizes {
        t.extend_from_slice(&short_size(n).to_le_bytes());
    }
    t.resize(t.len().next_multiple_of(4), 0);
    for &n in e.sizes.iter().filter(|&&n| short_size(n) == LONG) {
        t.extend_from_slice(&n.to_le_bytes());
    }
    t.resize(t.len().next_multiple_of(8), 0);
    t
}

/// The descriptor of one encoded section.
pub(crate) fn descriptor(len: u64, e: &Encoded) -> [u8; DESCRIPTOR_LEN as usize] {
    let mut d = [0u8; DESCRIPTOR_LEN as usize];
    d[0..8].copy_from_slice(&len.to_le_bytes());
    d[8..16].copy_from_slice(&(e.sizes.len() as u64).to_le_bytes());
    d[16..20].copy_from_slice(&(e.bases.len() as u32).to_le_bytes());
    d[20..24].copy_from_slice(&((e.bases.len() + e.pairs.len()) as u32).to_le_bytes());
    d[24..32].copy_from_slice(&long_blocks(e).to_le_bytes());
    d
}

/// One section's counts and where its tables start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    len: u64,
    blocks: u64,
    bases: u64,
    symbols: u64,
    long: u64,
    tables_pos: u64,
}

/// The structure of a version-5 file, from its (not yet checksummed) header: the sections'
/// spans, the layout and the number of blocks. `Err` says why the header cannot describe this
/// file; the caller adds the file name. `b` is the whole file. All arithmetic is checked: the
/// counts are untrusted until the header checksum, which needs this layout, has been checked.
pub(crate) fn layout(
    h: &FixedHeader,
    b: &[u8],
    sections_pos: u64,
    block_bytes: usize,
) -> Result<(Vec<Span>, Layout, u64), String> {
    let actual = b.len() as u64;
    let n = u64::from(h.section_count);
    let mut at = n
        .checked_mul(DESCRIPTOR_LEN)
        .and_then(|x| x.checked_add(sections_pos))
        .filter(|&end| end <= actual)
        .ok_or("section descriptors run past the end of the file")?;
    let tables_pos = at;
    let mut spans = Vec::new();
    let mut total_blocks = 0u64;
    for s in 0..n {
        let d = (sections_pos + s * DESCRIPTOR_LEN) as usize;
        let span = Span {
            len: u64_at(b, d),
            blocks: u64_at(b, d + 8),
            bases: u64::from(u32_at(b, d + 16)),
            symbols: u64::from(u32_at(b, d + 20)),
            long: u64_at(b, d + 24),
            tables_pos: at,
        };
        if span.bases > span.symbols
            || span.symbols > super::pairs::MAX_SYMBOLS as u64
            || span.blocks > span.len
            || span.long > span.blocks
        {
            return Err(format!(
                "section {s}: {} bases, {} symbols, {} blocks for {} values",
                span.bases, span.symbols, span.blocks, span.len
            ));
        }
        // Small numbers now (symbols ≤ MAX_SYMBOLS, blocks ≤ file length checked below).
        let codes_end =
            at + 2 * span.bases + 3 * (span.symbols - span.bases) + code_lens_bytes(span.symbols);
        at = span
            .blocks
            .checked_mul(2)
            .and_then(|x| x.checked_add(codes_end.next_multiple_of(2)))
            .map(|x| x.next_multiple_of(4))
            .and_then(|x| x.checked_add(span.long.checked_mul(4)?))
            .filter(|&end| end <= actual)
            .ok_or_else(|| format!("section {s}: tables run past the end of the file"))?
            .next_multiple_of(8);
        total_blocks += span.blocks;
        spans.push(span);
    }
    let chunks = total_blocks.div_ceil(chunk_blocks(block_bytes));
    if chunks != h.block_count {
        return Err(format!(
            "{total_blocks} blocks make {chunks} chunks, header says {}",
            h.block_count
        ));
    }
    let checksums_pos = at;
    let header_sum_pos = checksums_pos + 8 * chunks;
    let data_start = header_sum_pos + 8;
    if data_start > actual {
        return Err("header tables run past the end of the file".into());
    }
    let expected_len = total_blocks
        .checked_mul(block_bytes as u64)
        .and_then(|x| x.checked_add(data_start + 8))
        .ok_or("block count overflows")?;
    if expected_len != h.file_len {
        return Err(format!(
            "sections need a {expected_len}-byte file, header says {}",
            h.file_len
        ));
    }
    Ok((
        spans,
        Layout {
            meta_pos: super::header::FIXED_LEN,
            sections_pos,
            offsets_pos: tables_pos,
            checksums_pos,
            header_sum_pos,
            data_start,
        },
        total_blocks,
    ))
}

/// A validated version-5 file's sections.
pub(crate) struct PairsBody {
    pub decoders: Vec<Decoder>,
    /// Bytes per block.
    pub block_bytes: usize,
    /// Blocks per checksummed chunk.
    pub chunk_blocks: u64,
    /// Index of each section's first block over the whole data region.
    pub first_block: Vec<u64>,
    /// Blocks over all sections.
    pub total_blocks: u64,
}

fn u16s(b: &[u8]) -> impl Iterator<Item = u16> + '_ {
    b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]))
}

/// Validates the sections' tables (after the header checksum) and builds their decoders.
pub(crate) fn sections(
    b: &[u8],
    spans: &[Span],
    total_blocks: u64,
    value_width: u8,
    block_bytes: usize,
) -> Result<PairsBody, String> {
    let mut decoders = Vec::new();
    let mut first_block = Vec::new();
    let mut next = 0u64;
    for (s, span) in spans.iter().enumerate() {
        let start = span.tables_pos as usize;
        let pairs_at = start + 2 * span.bases as usize;
        let codes_at = pairs_at + 3 * (span.symbols - span.bases) as usize;
        let sizes_at = (codes_at + code_lens_bytes(span.symbols) as usize).next_multiple_of(2);
        let base_values: Vec<u16> = u16s(&b[start..pairs_at]).collect();
        if value_width == 1 && base_values.iter().any(|&v| v > 255) {
            return Err(format!("section {s}: a value over 255 in a 1-byte table"));
        }
        let pairs = b[pairs_at..codes_at]
            .chunks_exact(3)
            .map(|p| {
                let x = u32::from_le_bytes([p[0], p[1], p[2], 0]);
                ((x & 0xfff) as u16, (x >> 12) as u16)
            })
            .collect();
        let packed = &b[codes_at..sizes_at];
        let code_lens: Vec<u8> = (0..span.symbols as usize)
            .map(|i| {
                (0..5).fold(0u8, |l, bit| {
                    let k = 5 * i + bit;
                    l | (packed[k / 8] >> (k % 8) & 1) << bit
                })
            })
            .collect();
        let long_at = (sizes_at + 2 * span.blocks as usize).next_multiple_of(4);
        let mut long = b[long_at..long_at + 4 * span.long as usize]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let mut sizes = Vec::with_capacity(span.blocks as usize);
        for short in u16s(&b[sizes_at..sizes_at + 2 * span.blocks as usize]) {
            sizes.push(match short {
                LONG => match long.next() {
                    Some(n) if n > u32::from(LONG) => n,
                    _ => return Err(format!("section {s}: bad long block entry")),
                },
                n => u32::from(n) + 1,
            });
        }
        if long.next().is_some() {
            return Err(format!(
                "section {s}: more long block entries than long blocks"
            ));
        }
        let d = Decoder::new(span.len, base_values, pairs, &code_lens, sizes, block_bytes)
            .map_err(|e| format!("section {s}: {e}"))?;
        decoders.push(d);
        first_block.push(next);
        next += span.blocks;
    }
    Ok(PairsBody {
        decoders,
        block_bytes,
        chunk_blocks: chunk_blocks(block_bytes),
        first_block,
        total_blocks,
    })
}
