//! The fixed 64-byte header and the positions of the tables that follow it.
//!
//! See the module documentation of [`crate::format`] for the layout in prose; this file is the
//! one place that knows the byte offsets.

use super::{FORMAT_VERSION, MAGIC};

/// Size of the fixed header.
pub(crate) const FIXED_LEN: u64 = 64;

/// Compression method byte: every block is one zstd frame.
pub(crate) const COMPRESSION_ZSTD: u8 = 1;

/// Compression method byte of version-5 files: a Re-Pair grammar and Huffman codes in
/// 64-byte blocks ([`super::pairs`]).
pub(crate) const COMPRESSION_PAIRS: u8 = 2;

/// The largest `values_per_block` a reader accepts (16 Mi values, 32 MiB of raw u16 block):
/// keeps a hostile header from making the reader allocate without bound.
pub(crate) const MAX_VALUES_PER_BLOCK: u32 = 1 << 24;

/// Field offsets within the fixed header.
mod at {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    pub const METRIC: usize = 12;
    pub const VALUE_WIDTH: usize = 13;
    pub const COMPRESSION: usize = 14;
    pub const LEVEL: usize = 15;
    pub const VALUES_PER_BLOCK: usize = 16;
    pub const SECTION_COUNT: usize = 20;
    pub const BLOCK_COUNT: usize = 24;
    pub const FILE_LEN: usize = 32;
    pub const MATERIAL_LEN: usize = 40;
    pub const INDEX_PARAMS_LEN: usize = 44;
    pub const ENCODING_LEN: usize = 48;
    // 52..64: reserved, written as zero.
}

/// The fixed header's fields, decoded but not yet validated against the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FixedHeader {
    pub version: u32,
    pub metric: u8,
    pub value_width: u8,
    pub compression: u8,
    /// zstd level the writer used; informational only.
    pub level: i8,
    pub values_per_block: u32,
    pub section_count: u32,
    pub block_count: u64,
    pub file_len: u64,
    pub material_len: u32,
    pub index_params_len: u32,
    pub encoding_len: u32,
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl FixedHeader {
    pub fn encode(&self) -> [u8; FIXED_LEN as usize] {
        let mut b = [0u8; FIXED_LEN as usize];
        b[at::MAGIC..at::MAGIC + 8].copy_from_slice(&MAGIC);
        b[at::VERSION..at::VERSION + 4].copy_from_slice(&self.version.to_le_bytes());
        b[at::METRIC] = self.metric;
        b[at::VALUE_WIDTH] = self.value_width;
        b[at::COMPRESSION] = self.compression;
        b[at::LEVEL] = self.level as u8;
        b[at::VALUES_PER_BLOCK..at::VALUES_PER_BLOCK + 4]
            .copy_from_slice(&self.values_per_block.to_le_bytes());
        b[at::SECTION_COUNT..at::SECTION_COUNT + 4]
            .copy_from_slice(&self.section_count.to_le_bytes());
        b[at::BLOCK_COUNT..at::BLOCK_COUNT + 8].copy_from_slice(&self.block_count.to_le_bytes());
        b[at::FILE_LEN..at::FILE_LEN + 8].copy_from_slice(&self.file_len.to_le_bytes());
        b[at::MATERIAL_LEN..at::MATERIAL_LEN + 4].copy_from_slice(&self.material_len.to_le_bytes());
        b[at::INDEX_PARAMS_LEN..at::INDEX_PARAMS_LEN + 4]
            .copy_from_slice(&self.index_params_len.to_le_bytes());
        b[at::ENCODING_LEN..at::ENCODING_LEN + 4].copy_from_slice(&self.encoding_len.to_le_bytes());
        b
    }

    /// Decodes the fields of `b` (at least [`FIXED_LEN`] bytes). Does not check the magic.
    pub fn decode(b: &[u8]) -> FixedHeader {
        FixedHeader {
            version: u32_at(b, at::VERSION),
            metric: b[at::METRIC],
            value_width: b[at::VALUE_WIDTH],
            compression: b[at::COMPRESSION],
            level: b[at::LEVEL] as i8,
            values_per_block: u32_at(b, at::VALUES_PER_BLOCK),
            section_count: u32_at(b, at::SECTION_COUNT),
            block_count: u64_at(b, at::BLOCK_COUNT),
            file_len: u64_at(b, at::FILE_LEN),
            material_len: u32_at(b, at::MATERIAL_LEN),
            index_params_len: u32_at(b, at::INDEX_PARAMS_LEN),
            encoding_len: u32_at(b, at::ENCODING_LEN),
        }
    }

    /// Whether the first bytes of `b` are the magic (as far as `b` goes).
    pub fn magic_matches(b: &[u8]) -> bool {
        let n = b.len().min(MAGIC.len());
        b[..n] == MAGIC[..n]
    }

    /// The version field, when `b` is long enough to hold it.
    pub fn peek_version(b: &[u8]) -> Option<u32> {
        (b.len() >= at::VERSION + 4).then(|| u32_at(b, at::VERSION))
    }

    pub fn new() -> FixedHeader {
        FixedHeader {
            version: FORMAT_VERSION,
            metric: 0,
            value_width: 1,
            compression: COMPRESSION_ZSTD,
            level: 0,
            values_per_block: 1,
            section_count: 0,
            block_count: 0,
            file_len: 0,
            material_len: 0,
            index_params_len: 0,
            encoding_len: 0,
        }
    }
}

/// Where each table after the fixed header starts, all absolute file offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Material name, then index parameters, then encoding, then zero padding to a multiple of 8.
    pub meta_pos: u64,
    /// `section_count` u64: the number of values in each section.
    pub sections_pos: u64,
    /// `block_count + 1` u64: start of each block, then end of the last.
    pub offsets_pos: u64,
    /// `block_count` u64: XXH64 of each block's decompressed bytes.
    pub checksums_pos: u64,
    /// u64: XXH64 of bytes `0..header_sum_pos`.
    pub header_sum_pos: u64,
    /// First byte of block 0.
    pub data_start: u64,
}

impl Layout {
    /// The layout for a header's counts; `None` on arithmetic overflow (a hostile header).
    pub fn of(h: &FixedHeader) -> Option<Layout> {
        let meta_len =
            u64::from(h.material_len) + u64::from(h.index_params_len) + u64::from(h.encoding_len);
        let meta_pos = FIXED_LEN;
        let sections_pos = meta_pos + meta_len.next_multiple_of(8);
        let offsets_pos = sections_pos + 8 * u64::from(h.section_count);
        let checksums_pos =
            offsets_pos.checked_add(h.block_count.checked_add(1)?.checked_mul(8)?)?;
        let header_sum_pos = checksums_pos.checked_add(h.block_count.checked_mul(8)?)?;
        let data_start = header_sum_pos.checked_add(8)?;
        Some(Layout {
            meta_pos,
            sections_pos,
            offsets_pos,
            checksums_pos,
            header_sum_pos,
            data_start,
        })
    }
}
