//! The layout of a version-3 ("pairs") file: building one and validating one.
//!
//! After the fixed header and the metadata (as in version 2), with `S` sections:
//!
//! | size | contents |
//! |------|----------|
//! | 32·S | per section: u64 values, u64 blocks, u32 base symbols `b`, u32 symbols `s`, u64 zero |
//! | ..   | per section, each starting 8-aligned: `b` u16 base values, `s−b` pairs of u16, `s` u8 code lengths, zero to 2-aligned, one u16 per block (its values less one), zero to 8-aligned |
//! | 8·C  | u64 XXH64 of each chunk of [`CHUNK_BLOCKS`] blocks (`C` is the header's block count) |
//! | 8    | u64 header checksum: XXH64 of everything before it |
//! | 64·n | the blocks of all sections, back to back in section order (`n` blocks in all) |
//! | 8    | u64 file checksum |
//!
//! A chunk is a run of [`CHUNK_BLOCKS`] consecutive blocks over the whole data region (the
//! last one shorter); its checksum covers its *compressed* bytes, and a reader checks it the
//! first time it reads from the chunk.

use super::checksum::xxh64;
use super::header::{FixedHeader, Layout, u32_at, u64_at};
use super::pairs::{BLOCK_BYTES, Decoder, Encoded};

/// Blocks per checksummed chunk (4 KiB).
pub(crate) const CHUNK_BLOCKS: u64 = 64;

/// Bytes of a section descriptor.
const DESCRIPTOR_LEN: u64 = 32;

/// The serialised tables of one encoded section (8-aligned length).
pub(crate) fn section_tables(e: &Encoded) -> Vec<u8> {
    let mut t = Vec::new();
    for &v in &e.bases {
        t.extend_from_slice(&v.to_le_bytes());
    }
    for &(a, b) in &e.pairs {
        t.extend_from_slice(&a.to_le_bytes());
        t.extend_from_slice(&b.to_le_bytes());
    }
    t.extend_from_slice(&e.code_lens);
    t.resize(t.len().next_multiple_of(2), 0);
    for &s in &e.sizes {
        t.extend_from_slice(&s.to_le_bytes());
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
    d
}

/// One section's counts and where its tables start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    len: u64,
    blocks: u64,
    bases: u64,
    symbols: u64,
    tables_pos: u64,
}

/// The structure of a version-3 file, from its (not yet checksummed) header: the sections'
/// spans, the layout and the number of blocks. `Err` says why the header cannot describe this
/// file; the caller adds the file name. `b` is the whole file. All arithmetic is checked: the
/// counts are untrusted until the header checksum, which needs this layout, has been checked.
pub(crate) fn layout(
    h: &FixedHeader,
    b: &[u8],
    sections_pos: u64,
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
            tables_pos: at,
        };
        if span.bases > span.symbols
            || span.symbols > super::pairs::MAX_SYMBOLS as u64
            || span.blocks > span.len
        {
            return Err(format!(
                "section {s}: {} bases, {} symbols, {} blocks for {} values",
                span.bases, span.symbols, span.blocks, span.len
            ));
        }
        // Small numbers now (symbols ≤ MAX_SYMBOLS, blocks ≤ file length checked below).
        let codes_end = at + 2 * span.bases + 4 * (span.symbols - span.bases) + span.symbols;
        at = span
            .blocks
            .checked_mul(2)
            .and_then(|x| x.checked_add(codes_end.next_multiple_of(2)))
            .filter(|&end| end <= actual)
            .ok_or_else(|| format!("section {s}: tables run past the end of the file"))?
            .next_multiple_of(8);
        total_blocks += span.blocks;
        spans.push(span);
    }
    let chunks = total_blocks.div_ceil(CHUNK_BLOCKS);
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
        .checked_mul(BLOCK_BYTES as u64)
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

/// A validated version-3 file's sections.
pub(crate) struct PairsBody {
    pub decoders: Vec<Decoder>,
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
) -> Result<PairsBody, String> {
    let mut decoders = Vec::new();
    let mut first_block = Vec::new();
    let mut next = 0u64;
    for (s, span) in spans.iter().enumerate() {
        let start = span.tables_pos as usize;
        let pairs_at = start + 2 * span.bases as usize;
        let codes_at = pairs_at + 4 * (span.symbols - span.bases) as usize;
        let sizes_at = (codes_at + span.symbols as usize).next_multiple_of(2);
        let base_values: Vec<u16> = u16s(&b[start..pairs_at]).collect();
        if value_width == 1 && base_values.iter().any(|&v| v > 255) {
            return Err(format!("section {s}: a value over 255 in a 1-byte table"));
        }
        let halves: Vec<u16> = u16s(&b[pairs_at..codes_at]).collect();
        let pairs = halves.chunks_exact(2).map(|p| (p[0], p[1])).collect();
        let code_lens = &b[codes_at..codes_at + span.symbols as usize];
        let sizes: Vec<u16> = u16s(&b[sizes_at..sizes_at + 2 * span.blocks as usize]).collect();
        let d = Decoder::new(span.len, base_values, pairs, code_lens, &sizes)
            .map_err(|e| format!("section {s}: {e}"))?;
        decoders.push(d);
        first_block.push(next);
        next += span.blocks;
    }
    Ok(PairsBody {
        decoders,
        first_block,
        total_blocks,
    })
}

/// XXH64 of each chunk of `data`.
pub(crate) fn chunk_checksums(data: &[u8]) -> Vec<u64> {
    data.chunks(CHUNK_BLOCKS as usize * BLOCK_BYTES)
        .map(|c| xxh64(c, 0))
        .collect()
}
