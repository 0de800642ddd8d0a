//! Recomputing the checksums of a file's bytes, so that deliberate damage reaches the checks
//! behind them (damage tests, the fuzzer in `fuzz/`).

use super::checksum::xxh64;
use super::header::{FIXED_LEN, FixedHeader, Layout, MAX_VALUES_PER_BLOCK, u64_at};
use super::pairs::valid_block_bytes;
use super::pairs_file::{self, CHUNK_BYTES};
use super::{FORMAT_VERSION, VERSION_ZSTD};

/// Recomputes, in place, every checksum that can be located in the bytes `b` of a table file:
/// each block's (version 4, over its decompressed bytes, where it decompresses to the length its
/// section needs) or each chunk's (version 5, over its compressed bytes), then the header
/// checksum, then the whole-file checksum.
///
/// For tests and fuzzing: an edit to a file's bytes followed by `reseal` gets past the
/// checksums, so the reader's field checks and decoders see it. Bytes that do not describe a
/// table (bad magic, tables that do not fit) get only the checksums that can be located (at
/// least the whole-file checksum in the last 8 bytes). Never panics; a sound file is unchanged.
pub fn reseal(b: &mut [u8]) {
    if b.len() >= FIXED_LEN as usize && FixedHeader::magic_matches(b) {
        let h = FixedHeader::decode(b);
        let header_sum_pos = match h.version {
            FORMAT_VERSION => reseal_pairs(b, &h),
            VERSION_ZSTD => reseal_zstd(b, &h),
            _ => None,
        };
        if let Some(pos) = header_sum_pos.map(|p| p as usize)
            && pos + 8 <= b.len()
        {
            let sum = xxh64(&b[..pos], 0);
            b[pos..pos + 8].copy_from_slice(&sum.to_le_bytes());
        }
    }
    if b.len() >= 8 {
        let end = b.len() - 8;
        let sum = xxh64(&b[..end], 0);
        b[end..].copy_from_slice(&sum.to_le_bytes());
    }
}

/// The chunk checksums of a version-5 file; returns where its header checksum is.
fn reseal_pairs(b: &mut [u8], h: &FixedHeader) -> Option<u64> {
    let block_bytes = h.values_per_block as usize;
    if !valid_block_bytes(block_bytes) {
        return None;
    }
    let meta_len =
        u64::from(h.material_len) + u64::from(h.index_params_len) + u64::from(h.encoding_len);
    let sections_pos = FIXED_LEN + meta_len.next_multiple_of(8);
    let (_, layout, total_blocks) = pairs_file::layout(h, b, sections_pos, block_bytes).ok()?;
    // `layout` checked that the data region fits the header's file length, not the bytes.
    let start = layout.data_start as usize;
    let end = (start as u64).checked_add(total_blocks.checked_mul(block_bytes as u64)?)?;
    let end = (end as usize).min(b.len().saturating_sub(8)).max(start);
    let sums: Vec<u64> = b[start..end]
        .chunks(CHUNK_BYTES)
        .map(|c| xxh64(c, 0))
        .collect();
    for (i, sum) in sums.iter().enumerate().take(h.block_count as usize) {
        let at = layout.checksums_pos as usize + 8 * i;
        b[at..at + 8].copy_from_slice(&sum.to_le_bytes());
    }
    Some(layout.header_sum_pos)
}

/// The block checksums of a version-4 file; returns where its header checksum is.
fn reseal_zstd(b: &mut [u8], h: &FixedHeader) -> Option<u64> {
    let layout = Layout::of(h).filter(|l| l.data_start <= b.len() as u64)?;
    let vpb = u64::from(h.values_per_block);
    let width = u64::from(h.value_width);
    if vpb == 0 || vpb > u64::from(MAX_VALUES_PER_BLOCK) || !(width == 1 || width == 2) {
        return Some(layout.header_sum_pos);
    }
    // The number of values of each block, section by section (the header tables fit, so the
    // counts are bounded by the file's length).
    let mut values = Vec::new();
    for s in 0..u64::from(h.section_count) {
        let mut len = u64_at(b, (layout.sections_pos + 8 * s) as usize);
        while len > 0 && (values.len() as u64) < h.block_count {
            values.push(len.min(vpb));
            len -= len.min(vpb);
        }
    }
    let mut dctx = zstd::bulk::Decompressor::new().ok()?;
    for (i, &n) in values.iter().enumerate() {
        let (from, to) = (
            u64_at(b, layout.offsets_pos as usize + 8 * i),
            u64_at(b, layout.offsets_pos as usize + 8 * (i + 1)),
        );
        if from > to || to > b.len() as u64 {
            continue;
        }
        let raw = (n * width) as usize;
        let mut out = Vec::with_capacity(raw);
        if dctx
            .decompress_to_buffer(&b[from as usize..to as usize], &mut out)
            .is_ok()
            && out.len() == raw
        {
            let at = layout.checksums_pos as usize + 8 * i;
            b[at..at + 8].copy_from_slice(&xxh64(&out, 0).to_le_bytes());
        }
    }
    Some(layout.header_sum_pos)
}
