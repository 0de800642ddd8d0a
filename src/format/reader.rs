//! Reading a table file: memory-map it, validate the header at open, decode blocks on demand.
//!
//! [`TableFile::open`] checks everything that is cheap to check — magic, version, header
//! checksum, field values, section lengths against the block count, and every block offset —
//! so that afterwards a probe can only fail on a damaged block (zstd error, wrong length or
//! block checksum mismatch). The whole-file checksum, which needs a full read, is checked only
//! by [`TableFile::verify_checksums`].
//!
//! # The block cache
//!
//! Each reader of a zstd (version-4) file keeps a small direct-mapped cache of decoded blocks:
//! slot `block % slots`, each slot behind its own `RwLock`. A hit takes one uncontended read lock (about 20 ns), compares
//! the block number and reads the value; many threads probing the same hot block share read
//! locks and never wait for each other. A miss decodes the block with no lock held (so a slow
//! decode never blocks other probes) and then replaces the slot under a write lock. This was
//! preferred to a `Mutex` around an LRU (every hit would serialise on one lock and update
//! recency) and to per-thread caches (memory multiplied by threads × open tables, and no
//! sharing of a block one thread already decoded). Bulk readers should not probe value by
//! value: [`TableFile::decode_section`] decodes whole sections in parallel.
//!
//! A pairs (version-5) block is not decoded to be read: a lookup walks its codes to the value
//! ([`crate::format::pairs::Decoder::get_cached`]). Each thread keeps where the symbols of the
//! blocks it walked start ([`crate::format::pairs::CACHED_BLOCKS`] of them, a few dozen
//! bytes to a few hundred each), so that a run of lookups in one block, as a search makes, walks
//! it once and then takes a binary search each: a six-piece build reading its five-piece
//! tables spent 0.88x the CPU time with 64 of them (KKKKKvP, WDL+DTZ); a five-piece pawnful
//! build's promotions come back to a block only after many others (KNPvKB: 0.94x the CPU time
//! with 8 192 instead of 64).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{PoisonError, RwLock};

use memmap2::Mmap;
use rayon::prelude::*;

use super::checksum::xxh64;
use super::error::Region;
use super::header::{
    COMPRESSION_PAIRS, COMPRESSION_ZSTD, FIXED_LEN, FixedHeader, Layout, MAX_VALUES_PER_BLOCK,
    u64_at,
};
use super::pairs::{MAX_BLOCK_BYTES, MIN_BLOCK_BYTES, valid_block_bytes};
use super::pairs_file::{self, PairsBody};
use super::{Compression, FORMAT_VERSION, FormatError, TableMeta, VERSION_ZSTD};
use crate::table::Metric;

/// How to open a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Number of decoded blocks the reader caches (0: none; every probe decodes its block),
    /// rounded up to a power of two. Memory is at most `cache_blocks × values_per_block ×
    /// value_width` bytes. Zstd files only: a pairs file decodes part of one small block per
    /// probe, cheaper than a cache lookup under a lock, and has no cache.
    pub cache_blocks: usize,
}

/// Default number of cached blocks per open table.
pub const DEFAULT_CACHE_BLOCKS: usize = 8;

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            cache_blocks: DEFAULT_CACHE_BLOCKS,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct SectionInfo {
    len: u64,
    first_block: u64,
    blocks: u64,
}

struct Slot {
    block: u64,
    data: Box<[u8]>,
}

/// An open, memory-mapped table file. `Send + Sync`: probe it from any number of threads.
///
/// [`TableFile::get`] keeps a small direct-mapped cache of decoded blocks
/// ([`ReadOptions::cache_blocks`] slots, each behind its own `RwLock`): a hit costs 12–16 ns
/// on one thread and readers of the same hot block never wait for each other (they only share
/// the lock's cache line: about 35 ns per probe with two threads on one hot set); a miss
/// decodes the block (10–50 µs) with no lock held. For whole-table work use
/// [`TableFile::decode_section`], which decodes blocks in parallel.
pub struct TableFile {
    path: PathBuf,
    map: Mmap,
    meta: TableMeta,
    value_width: u8,
    values_per_block: u32,
    /// `log2(values_per_block)` when it is a power of two: a shift instead of a division.
    vpb_shift: Option<u32>,
    sections: Vec<SectionInfo>,
    block_count: u64,
    layout: Layout,
    /// Direct-mapped: block `b` lives in slot `b & (len - 1)`; the length is a power of two
    /// (or 0).
    cache: Box<[RwLock<Option<Slot>>]>,
    /// One bit per block whose checksum has been checked: a block is checked the first time
    /// it is decoded, not every time (the mapping is read-only; checking costs a third of a
    /// decode).
    checked: Box<[AtomicU64]>,
    /// The sections of a version-5 file (`None`: a version-4 file of zstd blocks).
    pairs: Option<PairsBody>,
}

impl std::fmt::Debug for TableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFile")
            .field("path", &self.path)
            .field("meta", &self.meta)
            .field("value_width", &self.value_width)
            .field("values_per_block", &self.values_per_block)
            .field("block_count", &self.block_count)
            .finish_non_exhaustive()
    }
}

/// Everything [`parse`] learns from the bytes.
struct Parsed {
    meta: TableMeta,
    value_width: u8,
    values_per_block: u32,
    sections: Vec<SectionInfo>,
    block_count: u64,
    layout: Layout,
    pairs: Option<PairsBody>,
}

/// The metadata after the fixed header: material, index parameters, encoding.
fn parse_meta(
    path: &Path,
    b: &[u8],
    h: &FixedHeader,
    layout: &Layout,
) -> Result<TableMeta, FormatError> {
    let corrupt = |reason: String| FormatError::corrupt(path, None, reason);
    let metric = Metric::from_byte(h.metric)
        .ok_or_else(|| corrupt(format!("unknown metric {}", h.metric)))?;
    let mut at = layout.meta_pos as usize;
    let mut take = |n: u32| {
        let s = &b[at..at + n as usize];
        at += n as usize;
        s
    };
    let material = String::from_utf8(take(h.material_len).to_vec())
        .map_err(|_| corrupt("material name is not UTF-8".to_string()))?;
    let index_params = take(h.index_params_len).to_vec();
    let encoding = take(h.encoding_len).to_vec();
    Ok(TableMeta {
        material,
        metric,
        index_params,
        encoding,
    })
}

/// Checks the header checksum stored at `pos` against bytes `0..pos`.
fn check_header_sum(path: &Path, b: &[u8], pos: u64) -> Result<(), FormatError> {
    let stored = u64_at(b, pos as usize);
    let computed = xxh64(&b[..pos as usize], 0);
    if stored != computed {
        return Err(FormatError::BadChecksum {
            path: path.to_path_buf(),
            region: Region::Header,
            stored,
            computed,
        });
    }
    Ok(())
}

/// [`parse`] for a version-5 ("pairs") file; see [`super::pairs_file`] for the layout.
fn parse_pairs(path: &Path, b: &[u8], h: &FixedHeader) -> Result<Parsed, FormatError> {
    let actual = b.len() as u64;
    let corrupt = |reason: String| FormatError::corrupt(path, None, reason);
    let truncated = || FormatError::Truncated {
        path: path.to_path_buf(),
        expected: h.file_len,
        actual,
    };
    let meta_len =
        u64::from(h.material_len) + u64::from(h.index_params_len) + u64::from(h.encoding_len);
    let sections_pos = FIXED_LEN + meta_len.next_multiple_of(8);
    let block_bytes = h.values_per_block as usize;
    if !valid_block_bytes(block_bytes) {
        return Err(corrupt(format!(
            "block size {block_bytes} not a power of two in {MIN_BLOCK_BYTES}..={MAX_BLOCK_BYTES}"
        )));
    }
    let (spans, layout, total_blocks) = match pairs_file::layout(h, b, sections_pos, block_bytes) {
        Ok(x) => x,
        Err(_) if h.file_len > actual => return Err(truncated()),
        Err(reason) => return Err(corrupt(reason)),
    };
    check_header_sum(path, b, layout.header_sum_pos)?;
    if actual < h.file_len {
        return Err(truncated());
    }
    if actual > h.file_len {
        return Err(corrupt(format!(
            "file is {actual} bytes, header says {}",
            h.file_len
        )));
    }
    if h.compression != COMPRESSION_PAIRS {
        return Err(corrupt(format!(
            "compression method {} in a version-5 file",
            h.compression
        )));
    }
    if h.value_width != 1 && h.value_width != 2 {
        return Err(corrupt(format!("value width {} not 1 or 2", h.value_width)));
    }
    let meta = parse_meta(path, b, h, &layout)?;
    let body = pairs_file::sections(b, &spans, total_blocks, h.value_width, block_bytes)
        .map_err(corrupt)?;
    let sections = body
        .decoders
        .iter()
        .zip(&body.first_block)
        .map(|(d, &first_block)| SectionInfo {
            len: d.len(),
            first_block,
            blocks: d.blocks() as u64,
        })
        .collect();
    Ok(Parsed {
        meta,
        value_width: h.value_width,
        values_per_block: 0,
        sections,
        block_count: h.block_count,
        layout,
        pairs: Some(body),
    })
}

/// Validates a file's bytes (the whole file) and extracts its structure.
fn parse(path: &Path, b: &[u8]) -> Result<Parsed, FormatError> {
    let actual = b.len() as u64;
    if !FixedHeader::magic_matches(b) {
        return Err(FormatError::BadMagic {
            path: path.to_path_buf(),
        });
    }
    if let Some(found) = FixedHeader::peek_version(b)
        && found != FORMAT_VERSION
        && found != VERSION_ZSTD
    {
        return Err(FormatError::UnsupportedVersion {
            path: path.to_path_buf(),
            found,
        });
    }
    let truncated = |expected: u64| FormatError::Truncated {
        path: path.to_path_buf(),
        expected,
        actual,
    };
    if actual < FIXED_LEN {
        return Err(truncated(FIXED_LEN));
    }
    let h = FixedHeader::decode(b);
    if h.version == FORMAT_VERSION {
        return parse_pairs(path, b, &h);
    }
    let corrupt = |reason: String| FormatError::corrupt(path, None, reason);
    let layout =
        Layout::of(&h).ok_or_else(|| corrupt("header table sizes overflow".to_string()))?;
    let header_end = layout.data_start;
    if header_end > actual {
        // The header's own tables are cut off: truncation if the header says the file is longer,
        // otherwise the counts are wrong.
        return Err(if h.file_len > actual {
            truncated(h.file_len)
        } else {
            corrupt(format!(
                "header tables end at byte {header_end}, past the end of the {actual}-byte file"
            ))
        });
    }
    check_header_sum(path, b, layout.header_sum_pos)?;
    if actual < h.file_len {
        return Err(truncated(h.file_len));
    }
    if actual > h.file_len {
        return Err(corrupt(format!(
            "file is {actual} bytes, header says {}",
            h.file_len
        )));
    }
    if header_end + 8 > h.file_len {
        return Err(corrupt(format!(
            "no room for the trailer after the header (file {} bytes)",
            h.file_len
        )));
    }
    if h.value_width != 1 && h.value_width != 2 {
        return Err(corrupt(format!("value width {} not 1 or 2", h.value_width)));
    }
    if h.compression != COMPRESSION_ZSTD {
        return Err(corrupt(format!(
            "unknown compression method {}",
            h.compression
        )));
    }
    if h.values_per_block == 0 || h.values_per_block > MAX_VALUES_PER_BLOCK {
        return Err(corrupt(format!(
            "values per block {} not in 1..={MAX_VALUES_PER_BLOCK}",
            h.values_per_block
        )));
    }

    let meta = parse_meta(path, b, &h, &layout)?;

    let vpb = u64::from(h.values_per_block);
    let mut sections = Vec::with_capacity(h.section_count as usize);
    let mut next_block = 0u64;
    for s in 0..u64::from(h.section_count) {
        let len = u64_at(b, (layout.sections_pos + 8 * s) as usize);
        let blocks = len.div_ceil(vpb);
        sections.push(SectionInfo {
            len,
            first_block: next_block,
            blocks,
        });
        next_block = next_block
            .checked_add(blocks)
            .filter(|&n| n <= h.block_count)
            .ok_or_else(|| {
                corrupt(format!(
                    "section {s} ({len} values) needs blocks beyond the block count {}",
                    h.block_count
                ))
            })?;
    }
    if next_block != h.block_count {
        return Err(corrupt(format!(
            "sections need {next_block} blocks, header says {}",
            h.block_count
        )));
    }

    let end = h.file_len - 8;
    let mut prev = layout.data_start;
    for i in 0..=h.block_count {
        let offset = u64_at(b, (layout.offsets_pos + 8 * i) as usize);
        let (min, max) = if i == 0 {
            (layout.data_start, layout.data_start)
        } else if i == h.block_count {
            (end, end)
        } else {
            (prev, end)
        };
        if offset < min || offset > max {
            return Err(FormatError::OffsetOutOfRange {
                path: path.to_path_buf(),
                block: i,
                offset,
                min,
                max,
            });
        }
        prev = offset;
    }

    Ok(Parsed {
        meta,
        value_width: h.value_width,
        values_per_block: h.values_per_block,
        sections,
        block_count: h.block_count,
        layout,
        pairs: None,
    })
}

impl TableFile {
    /// Opens and validates a table with the default [`ReadOptions`].
    ///
    /// Checks the magic, version, header checksum, every header field and every block offset;
    /// not the blocks themselves (each is checked when decoded) nor the whole-file checksum (see
    /// [`TableFile::verify_checksums`]).
    ///
    /// # Caveat
    ///
    /// The file is memory-mapped. It must not be truncated or modified in place while open:
    /// reads past a truncation kill the process with SIGBUS. Replacing it by rename (as
    /// [`crate::format::write_table`] does) is safe; the open table keeps the old file.
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        TableFile::open_with(path, &ReadOptions::default())
    }

    /// Opens and validates a table.
    pub fn open_with(path: &Path, opts: &ReadOptions) -> Result<TableFile, FormatError> {
        let mut file = File::open(path).map_err(|e| FormatError::io(path, "open", e))?;
        let len = file
            .metadata()
            .map_err(|e| FormatError::io(path, "stat", e))?
            .len();
        if len < FIXED_LEN {
            // Too short to be a table; read what there is to say why (and never map an empty
            // file).
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(|e| FormatError::io(path, "read", e))?;
            return Err(match parse(path, &bytes) {
                Err(e) => e,
                Ok(_) => FormatError::corrupt(path, None, "file too short"),
            });
        }
        // SAFETY: `Mmap::map` is unsafe because the map aliases a file that another process
        // may change while it is mapped. The bytes are only ever read as `&[u8]` and everything
        // decoded from them is validated, so any *content* the file has is handled; what is not
        // covered is the file changing under the map: a truncation makes reads past the new end
        // raise SIGBUS, and a rewrite breaks the immutability `&[u8]` promises. This is the
        // documented caveat of the reader. antitb never modifies a table in place (writers
        // create a temporary file and rename it over the old one, which leaves existing maps of
        // the old file intact), so only an outside program editing or truncating an open table
        // file can trigger it. Exercised by every test that opens a table, with hostile contents
        // by `format::tests::random_damage_never_panics` and `reseal_restores_every_checksum`,
        // and by the fuzz target `table_file` (fuzz/README.md).
        let map = unsafe { Mmap::map(&file) }.map_err(|e| FormatError::io(path, "mmap", e))?;
        let p = parse(path, &map)?;
        let slots = match opts.cache_blocks {
            0 => 0,
            n => n.checked_next_power_of_two().unwrap_or(n),
        };
        let slots = if p.pairs.is_some() { 0 } else { slots };
        let cache = (0..slots).map(|_| RwLock::new(None)).collect();
        let checked = (0..p.block_count.div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(TableFile {
            path: path.to_path_buf(),
            map,
            meta: p.meta,
            value_width: p.value_width,
            values_per_block: p.values_per_block,
            vpb_shift: p
                .values_per_block
                .is_power_of_two()
                .then(|| p.values_per_block.trailing_zeros()),
            sections: p.sections,
            block_count: p.block_count,
            layout: p.layout,
            cache,
            checked,
            pairs: p.pairs,
        })
    }

    /// The file this table was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file checksum its last 8 bytes hold (the XXH64 of every byte before them), as
    /// written: not computed again here ([`TableFile::verify_checksums`] does).
    pub fn file_checksum(&self) -> u64 {
        let tail = &self.map[self.map.len() - 8..];
        u64::from_le_bytes(tail.try_into().expect("8 bytes"))
    }

    /// The table's metadata.
    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }

    /// Bytes per value: 1 or 2.
    pub fn value_width(&self) -> u8 {
        self.value_width
    }

    /// How the blocks are compressed.
    pub fn compression(&self) -> Compression {
        match &self.pairs {
            Some(p) => Compression::Pairs {
                block_bytes: p.block_bytes as u32,
            },
            None => Compression::Zstd,
        }
    }

    /// Values per block (the last block of a section may hold fewer); 0 for a
    /// [`Compression::Pairs`] file, whose blocks hold varying numbers of values.
    pub fn values_per_block(&self) -> u32 {
        self.values_per_block
    }

    /// Number of sections.
    pub fn section_count(&self) -> usize {
        self.sections.len()
    }

    /// Number of values in section `s` (0 if there is no such section).
    pub fn section_len(&self, s: usize) -> u64 {
        self.sections.get(s).map_or(0, |sec| sec.len)
    }

    /// Number of checksummed blocks over all sections ([`Compression::Pairs`]: chunks of
    /// 4 KiB of small blocks).
    pub fn block_count(&self) -> u64 {
        self.block_count
    }

    /// Length of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }

    /// Compressed length of `block` in bytes.
    pub fn block_compressed_len(&self, block: u64) -> u64 {
        if block >= self.block_count {
            return 0;
        }
        match &self.pairs {
            Some(p) => self.chunk_range(p, block).len() as u64,
            None => self.offset(block + 1) - self.offset(block),
        }
    }

    /// The bytes of checksum chunk `chunk` of a pairs file.
    fn chunk_range(&self, p: &PairsBody, chunk: u64) -> std::ops::Range<usize> {
        let first = chunk * p.chunk_blocks;
        let end = (first + p.chunk_blocks).min(p.total_blocks);
        let at = |b: u64| (self.layout.data_start + b * p.block_bytes as u64) as usize;
        at(first)..at(end)
    }

    /// Checks checksum chunk `chunk` of a pairs file the first time it is read.
    fn check_chunk(&self, p: &PairsBody, chunk: u64) -> Result<(), FormatError> {
        self.check_once(chunk, &self.map[self.chunk_range(p, chunk)])
    }

    /// Checks `bytes` against stored checksum `i` (a zstd block's decoded bytes, or a pairs
    /// chunk), unless that checksum has been checked before.
    fn check_once(&self, i: u64, bytes: &[u8]) -> Result<(), FormatError> {
        let (word, bit) = ((i / 64) as usize, 1u64 << (i % 64));
        if self.checked[word].load(Relaxed) & bit != 0 {
            return Ok(());
        }
        let stored = u64_at(&self.map, (self.layout.checksums_pos + 8 * i) as usize);
        let computed = xxh64(bytes, 0);
        if stored != computed {
            return Err(FormatError::BadChecksum {
                path: self.path.clone(),
                region: Region::Block(i),
                stored,
                computed,
            });
        }
        self.checked[word].fetch_or(bit, Relaxed);
        Ok(())
    }

    /// [`TableFile::get`] of a pairs file: locate the small block, check its chunk once,
    /// decode up to the value.
    fn get_pairs(&self, p: &PairsBody, s: usize, index: u64) -> Result<u16, FormatError> {
        let sec = self.section(s, index)?;
        let d = &p.decoders[s];
        let (b, pos) = d.locate(index);
        let block = sec.first_block + b as u64;
        let chunk = block / p.chunk_blocks;
        self.check_chunk(p, chunk)?;
        let at = (self.layout.data_start + block * p.block_bytes as u64) as usize;
        d.get_cached(b, &self.map[at..at + p.block_bytes], pos)
            .map_err(|e| FormatError::corrupt(&self.path, Some(chunk), e))
    }

    /// Decodes section `s` of a pairs file whole, in parallel over runs of blocks.
    fn decode_pairs_section<T: Copy + Default + Send>(
        &self,
        p: &PairsBody,
        s: usize,
        cast: impl Fn(u16) -> T + Sync,
    ) -> Result<Vec<T>, FormatError> {
        let sec = self.sections[s];
        let d = &p.decoders[s];
        let len = usize::try_from(sec.len)
            .map_err(|_| FormatError::invalid(&self.path, "section too large for memory"))?;
        let mut out = vec![T::default(); len];
        // Runs of a chunk's worth of blocks and the part of `out` each fills.
        let mut jobs = Vec::new();
        let mut rest = out.as_mut_slice();
        let mut b = 0usize;
        while b < d.blocks() {
            let end = (b + p.chunk_blocks as usize).min(d.blocks());
            let n: usize = (b..end).map(|i| d.block_len(i) as usize).sum();
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            jobs.push((b, end, head));
            rest = tail;
            b = end;
        }
        jobs.into_par_iter().try_for_each(|(b, end, chunk)| {
            let (first, last) = (sec.first_block + b as u64, sec.first_block + end as u64 - 1);
            for c in first / p.chunk_blocks..=last / p.chunk_blocks {
                self.check_chunk(p, c)?;
            }
            let at = |x: u64| (self.layout.data_start + x * p.block_bytes as u64) as usize;
            d.decode_blocks(b, &self.map[at(first)..at(last + 1)], chunk, &cast)
                .map_err(|e| FormatError::corrupt(&self.path, Some(first / p.chunk_blocks), e))
        })?;
        Ok(out)
    }

    fn offset(&self, i: u64) -> u64 {
        u64_at(&self.map, (self.layout.offsets_pos + 8 * i) as usize)
    }

    fn section(&self, s: usize, index: u64) -> Result<&SectionInfo, FormatError> {
        match self.sections.get(s) {
            Some(sec) if index < sec.len => Ok(sec),
            sec => Err(FormatError::OutOfBounds {
                path: self.path.clone(),
                section: s,
                index,
                len: sec.map_or(0, |sec| sec.len),
            }),
        }
    }

    /// Number of values in block `local` of section `sec`.
    fn block_values(&self, sec: &SectionInfo, local: u64) -> usize {
        let vpb = u64::from(self.values_per_block);
        (sec.len - local * vpb).min(vpb) as usize
    }

    /// Decompresses `block`, which must hold `values` values, and checks its length and
    /// checksum. Each thread keeps one zstd context (a fresh one costs about 1.2 µs, as much
    /// as decompressing a small block).
    fn decode_block(&self, block: u64, values: usize) -> Result<Vec<u8>, FormatError> {
        thread_local! {
            static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                const { std::cell::RefCell::new(None) };
        }
        let raw_len = values * usize::from(self.value_width);
        let src = &self.map[self.offset(block) as usize..self.offset(block + 1) as usize];
        let mut out = Vec::with_capacity(raw_len);
        let corrupt = |reason: String| FormatError::corrupt(&self.path, Some(block), reason);
        DCTX.with(|cell| {
            let mut cell = cell.borrow_mut();
            let d = match &mut *cell {
                Some(d) => d,
                None => cell.insert(zstd::bulk::Decompressor::new()?),
            };
            d.decompress_to_buffer(src, &mut out)
        })
        .map_err(|e| corrupt(format!("zstd: {e}")))?;
        if out.len() != raw_len {
            return Err(corrupt(format!(
                "decompressed to {} bytes, expected {raw_len}",
                out.len()
            )));
        }
        self.check_once(block, &out)?;
        Ok(out)
    }

    #[inline]
    fn value_at(&self, data: &[u8], pos: usize) -> u16 {
        if self.value_width == 1 {
            u16::from(data[pos])
        } else {
            u16::from_le_bytes([data[2 * pos], data[2 * pos + 1]])
        }
    }

    /// The value at `index` of section `s` (widened to `u16` for 1-byte tables).
    ///
    /// Decodes the value's block unless it is cached; see the module documentation for the
    /// cache.
    pub fn get(&self, s: usize, index: u64) -> Result<u16, FormatError> {
        if let Some(p) = &self.pairs {
            return self.get_pairs(p, s, index);
        }
        let sec = self.section(s, index)?;
        let (local, pos) = match self.vpb_shift {
            Some(k) => (index >> k, (index & ((1 << k) - 1)) as usize),
            None => {
                let vpb = u64::from(self.values_per_block);
                (index / vpb, (index % vpb) as usize)
            }
        };
        let block = sec.first_block + local;
        if self.cache.is_empty() {
            let data = self.decode_block(block, self.block_values(sec, local))?;
            return Ok(self.value_at(&data, pos));
        }
        let slot = &self.cache[(block & (self.cache.len() as u64 - 1)) as usize];
        {
            let guard = slot.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = &*guard
                && c.block == block
            {
                return Ok(self.value_at(&c.data, pos));
            }
        }
        let data = self.decode_block(block, self.block_values(sec, local))?;
        let value = self.value_at(&data, pos);
        *slot.write().unwrap_or_else(PoisonError::into_inner) = Some(Slot {
            block,
            data: data.into_boxed_slice(),
        });
        Ok(value)
    }

    /// Decodes section `s` whole, in parallel over its blocks.
    pub fn decode_section(&self, s: usize) -> Result<Vec<u16>, FormatError> {
        if let Some(p) = &self.pairs {
            self.section(s, 0).or_else(|e| self.empty_section(s, e))?;
            return self.decode_pairs_section(p, s, |v| v);
        }
        let w = self.value_width;
        self.decode_section_with(s, |bytes, out: &mut [u16]| {
            if w == 1 {
                for (o, &b) in out.iter_mut().zip(bytes) {
                    *o = u16::from(b);
                }
            } else {
                for (o, b) in out.iter_mut().zip(bytes.chunks_exact(2)) {
                    *o = u16::from_le_bytes([b[0], b[1]]);
                }
            }
        })
    }

    /// Decodes section `s` of a 1-byte table whole, without widening (half the memory of
    /// [`TableFile::decode_section`]). Fails with [`FormatError::InvalidInput`] on a 2-byte
    /// table.
    pub fn decode_section_u8(&self, s: usize) -> Result<Vec<u8>, FormatError> {
        if self.value_width != 1 {
            return Err(FormatError::invalid(
                &self.path,
                "decode_section_u8 on a table of 2-byte values",
            ));
        }
        if let Some(p) = &self.pairs {
            self.section(s, 0).or_else(|e| self.empty_section(s, e))?;
            // Values of 1-byte tables are at most 255 (checked at open).
            return self.decode_pairs_section(p, s, |v| v as u8);
        }
        self.decode_section_with(s, |bytes, out: &mut [u8]| out.copy_from_slice(bytes))
    }

    /// `Ok` for an existing but empty section (so it decodes to nothing), else `err`.
    fn empty_section(&self, s: usize, err: FormatError) -> Result<&SectionInfo, FormatError> {
        match self.sections.get(s) {
            Some(sec) if sec.len == 0 => Ok(sec),
            _ => Err(err),
        }
    }

    fn decode_section_with<T: Copy + Default + Send>(
        &self,
        s: usize,
        fill: impl Fn(&[u8], &mut [T]) + Sync,
    ) -> Result<Vec<T>, FormatError> {
        let Some(sec) = self.sections.get(s).copied() else {
            return Err(FormatError::OutOfBounds {
                path: self.path.clone(),
                section: s,
                index: 0,
                len: 0,
            });
        };
        let len = usize::try_from(sec.len)
            .map_err(|_| FormatError::invalid(&self.path, "section too large for memory"))?;
        let mut out = vec![T::default(); len];
        out.par_chunks_mut(self.values_per_block as usize)
            .enumerate()
            .try_for_each(|(i, chunk)| {
                let data = self.decode_block(sec.first_block + i as u64, chunk.len())?;
                fill(&data, chunk);
                Ok(())
            })?;
        Ok(out)
    }

    /// Checks every block against its checksum (in parallel), then the whole-file checksum.
    /// The first bad block, in block order, is the one reported.
    pub fn verify_checksums(&self) -> Result<(), FormatError> {
        let blocks = (0..self.block_count).into_par_iter();
        let bad = match &self.pairs {
            Some(p) => blocks
                .map(|chunk| self.check_chunk(p, chunk))
                .find_first(Result::is_err),
            None => blocks
                .map(|block| {
                    // The section holding `block`: the first whose blocks end after it.
                    let s = self
                        .sections
                        .partition_point(|sec| sec.first_block + sec.blocks <= block);
                    let sec = &self.sections[s];
                    let local = block - sec.first_block;
                    self.decode_block(block, self.block_values(sec, local))
                        .map(|_| ())
                })
                .find_first(Result::is_err),
        };
        if let Some(Err(e)) = bad {
            return Err(e);
        }
        let end = self.map.len() - 8;
        let stored = u64_at(&self.map, end);
        let computed = xxh64(&self.map[..end], 0);
        if stored != computed {
            return Err(FormatError::BadChecksum {
                path: self.path.clone(),
                region: Region::File,
                stored,
                computed,
            });
        }
        Ok(())
    }
}
