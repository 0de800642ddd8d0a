//! Table files: header, compressed blocks, checksums, mmap reader, atomic writer.
//!
//! This layer knows nothing of chess. The store layer above ([`crate::store`]) hands it a
//! [`TableMeta`] (material name, metric, opaque index parameters and value encoding) and one or more *sections* — flat
//! arrays of 1-byte or 2-byte values, for example one per side to move — and gets them back by
//! `(section, index)`.
//!
//! ```
//! use antitb::format::{write_table, Sections, TableFile, TableMeta, WriteOptions};
//! use antitb::table::Metric;
//! let dir = std::env::temp_dir().join(format!("antitb-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("KvK.wdl");
//! let meta = TableMeta { material: "KvK".into(), metric: Metric::Wdl,
//!                        index_params: vec![], encoding: vec![0, 1, 2] };
//! let white = vec![1u8; 1000];
//! let black = vec![2u8; 700];
//! write_table(&path, &meta, Sections::U8(&[&white, &black]), &WriteOptions::default()).unwrap();
//! let t = TableFile::open(&path).unwrap();
//! assert_eq!(t.meta(), &meta);
//! assert_eq!((t.section_len(1), t.get(1, 699).unwrap()), (700, 2));
//! t.verify_checksums().unwrap();
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```
//!
//! Two codecs ([`Compression`]): **pairs** ([`pairs`], format version 5), a Re-Pair grammar
//! and Huffman codes in small blocks, of which a probe decodes part of one; and **zstd**
//! (format version 4), blocks of a fixed number of values, each one zstd frame, smaller on some
//! data but a probe decompresses a whole block. The reader takes both. Below is version 4;
//! version 5 shares the fixed header and metadata and is laid out as
//! `src/format/pairs_file.rs` says (`tables/FORMAT.md` has both).
//!
//! # Layout (format version 4; the layout of versions 1 and 2, whose store-layer values differ)
//!
//! All integers are little-endian. Checksums are XXH64 with seed 0 ([`checksum`]). Offsets
//! are absolute byte positions in the file. `tables/FORMAT.md` says the same for engine
//! authors.
//!
//! Fixed header, 64 bytes:
//!
//! | offset | type  | field |
//! |-------:|-------|-------|
//! | 0      | [u8; 8] | magic `41 4E 54 49 54 42 1A 0A` (`"ANTITB\x1a\n"`) |
//! | 8      | u32   | format version: 4 (zstd) or 5 (pairs) |
//! | 12     | u8    | metric: 0 WDL, 1 DTZ, 2 DTW |
//! | 13     | u8    | value width in bytes: 1 or 2 |
//! | 14     | u8    | compression: 1 = zstd (each block one zstd frame), 2 = pairs |
//! | 15     | i8    | zstd level used (informational) |
//! | 16     | u32   | `vpb`: values per block (1 ..= 2^24) |
//! | 20     | u32   | `S`: number of sections |
//! | 24     | u64   | `B`: number of blocks, over all sections |
//! | 32     | u64   | `L`: length of the whole file in bytes |
//! | 40     | u32   | `m`: length of the material name |
//! | 44     | u32   | `p`: length of the index parameters |
//! | 48     | u32   | `e`: length of the value encoding |
//! | 52     | 12 bytes | reserved, zero |
//!
//! Then, in order, with `M = 64 + round_up(m + p + e, 8)`:
//!
//! | offset | size | contents |
//! |-------:|------|----------|
//! | 64 | m | material name, UTF-8 |
//! | 64+m | p | index parameters (opaque, from the index layer) |
//! | 64+m+p | e | value encoding (opaque, from the store layer) |
//! | .. | .. | zero padding up to `M` |
//! | M | 8·S | u64 number of values in each section |
//! | M+8S | 8·(B+1) | u64 offset of each block, then the end of the last block |
//! | M+8S+8(B+1) | 8·B | u64 XXH64 of each block's *decompressed* bytes |
//! | `H` = M+8S+16B+8 | 8 | u64 header checksum: XXH64 of bytes `0..H` |
//! | `D` = H+8 | .. | the blocks, back to back: block `i` is bytes `offset[i]..offset[i+1]` |
//! | L−8 | 8 | u64 file checksum: XXH64 of bytes `0..L−8` |
//!
//! Sections are cut into blocks of `vpb` values, the last block of a section possibly shorter;
//! blocks never span sections and an empty section has none. Section `s` owns blocks
//! `first(s) .. first(s) + ceil(len(s) / vpb)` where `first(s)` is the sum of the earlier
//! sections' block counts. A block decompresses to its values as `width`-byte little-endian
//! integers. `offset[0] = D`, offsets never decrease, `offset[B] = L − 8`.
//!
//! Value `i` of section `s` is in block `first(s) + i / vpb`, at position `i % vpb`.
//!
//! # Guarantees
//!
//! * The writer's output depends only on its inputs, not on the number of threads.
//! * The writer writes `NAME.tmp.<pid>` in the target's directory, syncs it, and renames it over
//!   `NAME`; on error it removes the temporary file. A final file is always complete.
//! * The reader never panics and has no undefined behaviour on any file contents (the one
//!   caveat: a file modified or truncated by another process while it is mapped, see
//!   [`TableFile::open`]). Every error names the file and, where it applies, the block.
//!
//! # Choices and measurements
//!
//! Defaults: blocks of 32768 values ([`DEFAULT_VALUES_PER_BLOCK`]: 32 KiB of raw WDL, 64 KiB
//! of raw DTZ), zstd level 9 ([`DEFAULT_LEVEL`]). Measured with `examples/format_bench.rs`
//! (`cargo run --release --example format_bench`) on synthetic tablebase-like data, one core
//! of a loaded 2-core machine (speeds are rough, ±50%; sizes are exact):
//!
//! | data (16 Mi values) | vpb 32768, level 3 | level 6 | **level 9** | level 19 |
//! |---|---|---|---|---|
//! | WDL runs, u8 | 23.6×, ~450 MB/s | 25.1×, ~170 MB/s | **26.6×, ~70–110 MB/s** | 31.4×, ~2 MB/s |
//! | WDL 4-piece structured, u8 | 13.1×, ~400 MB/s | 15.3×, ~90 MB/s | **17.5×, ~50 MB/s** | 22.4×, ~2 MB/s |
//! | DTZ 4-piece structured, u16 | 11.0×, ~600 MB/s | 12.7×, ~175 MB/s | **13.8×, ~100 MB/s** | 16.7×, ~2 MB/s |
//!
//! * Levels above 9 cost 3–50× the time for 2–25% less size (level 12: +2–7%; 15–19:
//!   +15–28%, at 2–10 MB/s). A final "publish" run may pass a high level; tables are
//!   readable whatever level wrote them.
//! * Block size: 4096 values lose 15–30% of ratio against 32768 (and level 9 is slow on blocks
//!   under 16 KiB); 16384 lose 3–5%; 65536 gain 1–3% but double the cold-probe cost. A cold
//!   probe (decode one block, no cache) costs 10–30 µs for a 32768-value u8 block and 35–50 µs
//!   for a u16 one; whole-section decoding runs at 0.5–1 GB/s of raw values per core.
//! * A cached probe costs 12–16 ns on one thread (see [`TableFile`] for the cache).
//! * Don't-care slots filled with a distinct marker instead of the neighbour's value made the
//!   structured WDL file 49% larger (level 9).
//!
//! # Advice to the store layer
//!
//! zstd works best on long runs. Slots that are never probed (impossible positions, positions
//! settled by a capture search at probe time) should be filled with the value of a neighbour
//! (for instance the previous stored value), not with a distinct "don't care" value, which
//! breaks runs. Map the most frequent values to small codes with `encoding` if it helps; zstd
//! itself does not care which codes are used, only how often they repeat.

pub mod checksum;
mod error;
mod header;
pub mod pairs;
mod pairs_file;
mod reader;
mod reseal;
mod writer;

use crate::table::Metric;

pub use error::{FormatError, Region};
pub use reader::{DEFAULT_CACHE_BLOCKS, ReadOptions, TableFile};
pub use reseal::reseal;
pub use writer::{
    Compression, DEFAULT_LEVEL, DEFAULT_VALUES_PER_BLOCK, Encoded, SPILL_BYTES, SectionFn,
    WriteOptions, WriteStats, encode_sections, encode_table, write_encoded, write_table,
};

#[cfg(test)]
mod tests;

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"ANTITB\x1a\n";

/// The newest format version: files of [`Compression::Pairs`] blocks.
pub const FORMAT_VERSION: u32 = 5;

/// The format version of files of zstd blocks ([`Compression::Zstd`]), still written and read.
pub const VERSION_ZSTD: u32 = 4;

/// A table's metadata, stored in its header. The value width is not here: it is the width of
/// the [`Sections`] written (and [`TableFile::value_width`] when reading).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TableMeta {
    /// Material name (for example `"KQvK"`), UTF-8.
    pub material: String,
    /// The metric of the values (a file cannot be mistaken for another metric's).
    pub metric: Metric,
    /// Opaque parameters of the index layer (so a reader can check it indexes the same way).
    pub index_params: Vec<u8>,
    /// Opaque value-mapping table of the store layer (stored value → meaning).
    pub encoding: Vec<u8>,
}

/// The values of a table: one slice per section, all of one width.
#[derive(Clone, Copy, Debug)]
pub enum Sections<'a> {
    /// 1-byte values.
    U8(&'a [&'a [u8]]),
    /// 2-byte values.
    U16(&'a [&'a [u16]]),
}

impl Sections<'_> {
    /// Bytes per value: 1 or 2.
    #[inline]
    pub fn value_width(&self) -> u8 {
        match self {
            Sections::U8(_) => 1,
            Sections::U16(_) => 2,
        }
    }

    /// Number of sections.
    #[inline]
    pub fn count(&self) -> usize {
        match self {
            Sections::U8(s) => s.len(),
            Sections::U16(s) => s.len(),
        }
    }

    /// Number of values in section `s`.
    #[inline]
    pub fn len(&self, s: usize) -> usize {
        match self {
            Sections::U8(v) => v[s].len(),
            Sections::U16(v) => v[s].len(),
        }
    }
}
