//! Writing a table file: compress blocks in parallel, build the header, write atomically.
//!
//! Blocks are compressed independently (rayon over blocks, each with its own zstd context and
//! no zstd worker threads) and collected in block order, so the bytes do not depend on the
//! thread count. The file is written to `NAME.tmp.<pid>` beside the target, synced, and renamed
//! over the target only when complete; on any error the temporary file is removed.
//!
//! The compressed data wait in memory up to [`SPILL_BYTES`], beyond in a spool file beside the
//! target (`NAME.tmp.<pid>.<n>`, removed when the encoding is dropped): the header, which
//! comes first in the file, needs every block's size and checksum, but the writer never holds
//! the whole compressed table.

use std::fs::{self, File};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::checksum::{Xxh64, xxh64};
use super::header::{
    COMPRESSION_PAIRS, COMPRESSION_ZSTD, FIXED_LEN, FixedHeader, Layout, MAX_VALUES_PER_BLOCK,
};
use super::pairs;
use super::pairs_file;
use super::{FormatError, Sections, TableMeta, VERSION_ZSTD};

/// How the values of a file are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Blocks of [`WriteOptions::values_per_block`] values, each one zstd frame (format
    /// version 4). Smallest files; a probe decompresses a whole block.
    Zstd,
    /// A Re-Pair grammar and Huffman codes in blocks of `block_bytes` bytes (a power of two,
    /// 32 ..= 1024; [`crate::format::pairs`], format version 5). A probe decodes part of one
    /// block: many times faster than a zstd frame; larger blocks are a little smaller and a
    /// little slower.
    Pairs {
        /// Bytes per block.
        block_bytes: u32,
    },
}

/// How to write a table. The defaults were chosen by measurement (see the module doc of
/// [`crate::format`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// The codec.
    pub compression: Compression,
    /// zstd compression level (any level zstd accepts; negative levels are its fast modes).
    /// Zstd only.
    pub level: i32,
    /// Values per block (the last block of each section may be shorter). At most 2^24. Zstd
    /// only.
    pub values_per_block: u32,
}

impl WriteOptions {
    /// [`Compression::Pairs`] with blocks of [`pairs::BLOCK_BYTES`].
    pub fn pairs() -> WriteOptions {
        WriteOptions::pairs_with(pairs::BLOCK_BYTES as u32)
    }

    /// [`Compression::Pairs`] with blocks of `block_bytes`.
    pub fn pairs_with(block_bytes: u32) -> WriteOptions {
        WriteOptions {
            compression: Compression::Pairs { block_bytes },
            ..WriteOptions::default()
        }
    }
}

/// Default zstd level; see the measurements in the module doc of [`crate::format`].
pub const DEFAULT_LEVEL: i32 = 9;
/// Default values per block; see the measurements in the module doc of [`crate::format`].
pub const DEFAULT_VALUES_PER_BLOCK: u32 = 1 << 15;

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            compression: Compression::Zstd,
            level: DEFAULT_LEVEL,
            values_per_block: DEFAULT_VALUES_PER_BLOCK,
        }
    }
}

/// What [`write_table`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteStats {
    /// Length of the file in bytes.
    pub file_len: u64,
    /// Number of values over all sections.
    pub values: u64,
    /// Number of blocks.
    pub blocks: u64,
    /// Bytes of values before compression (`values * value_width`).
    pub raw_bytes: u64,
    /// Bytes of compressed blocks (the file less its header and trailer).
    pub compressed_bytes: u64,
    /// The whole-file checksum stored in the trailer.
    pub file_checksum: u64,
}

/// A table file's bytes, compressed but not written yet: [`encode_table`] makes one,
/// [`write_encoded`] writes it. Lets a caller compare encodings by [`Encoded::file_len`] and
/// write the one it keeps without compressing it again.
pub struct Encoded {
    header: Vec<u8>,
    body: Body,
    stats: WriteStats,
}

/// Bytes of compressed data an [`Encoded`] keeps in memory; beyond, they go to a spool file
/// beside the target. A six-piece `.dtz` file takes up to a few GB.
pub const SPILL_BYTES: usize = 64 << 20;

/// Spool files made by this process so far, for unique names.
static SPOOLS: AtomicU64 = AtomicU64::new(0);

/// The data region of an [`Encoded`] file, in order: in memory up to a limit, then all of it in
/// a spool file.
struct Body {
    /// The file the data are for (the spool lies beside it; named in errors).
    target: PathBuf,
    limit: usize,
    mem: Vec<u8>,
    spool: Option<Spool>,
}

/// A temporary file of compressed data, removed when dropped.
struct Spool {
    path: PathBuf,
    file: BufWriter<File>,
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

impl Body {
    fn new(target: &Path, limit: usize) -> Body {
        Body {
            target: target.to_path_buf(),
            limit,
            mem: Vec::new(),
            spool: None,
        }
    }

    /// Appends `bytes`, moving the data to a spool file when they outgrow the limit.
    fn push(&mut self, bytes: &[u8]) -> Result<(), FormatError> {
        if self.spool.is_none() && self.mem.len() + bytes.len() > self.limit {
            let mut name = self.target.file_name().unwrap_or_default().to_os_string();
            let n = SPOOLS.fetch_add(1, Ordering::Relaxed);
            name.push(format!(".tmp.{}.{n}", std::process::id()));
            let path = self.target.with_file_name(name);
            // A file of that name can only be a killed writer's that had this process id.
            let file = File::create(&path).map_err(|e| FormatError::io(&path, "create", e))?;
            let mut spool = Spool {
                path,
                file: BufWriter::with_capacity(1 << 20, file),
            };
            spool
                .file
                .write_all(&self.mem)
                .map_err(|e| FormatError::io(&spool.path, "write", e))?;
            self.mem = Vec::new();
            self.spool = Some(spool);
        }
        match &mut self.spool {
            Some(s) => s
                .file
                .write_all(bytes)
                .map_err(|e| FormatError::io(&s.path, "write", e)),
            None => {
                self.mem.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Ends the writing: the spool's buffer is flushed, so that [`Body::copy_into`] can read it.
    fn finish(&mut self) -> Result<(), FormatError> {
        match &mut self.spool {
            Some(s) => s
                .file
                .flush()
                .map_err(|e| FormatError::io(&s.path, "write", e)),
            None => Ok(()),
        }
    }

    /// Writes the data to `w` (the file `to`, named in errors), adding them to `hash`.
    fn copy_into(
        &self,
        w: &mut impl Write,
        hash: &mut Xxh64,
        to: &Path,
    ) -> Result<(), FormatError> {
        let werr = |e| FormatError::io(to, "write", e);
        let Some(s) = &self.spool else {
            hash.update(&self.mem);
            return w.write_all(&self.mem).map_err(werr);
        };
        let rerr = |e| FormatError::io(&s.path, "read", e);
        let mut f = File::open(&s.path).map_err(rerr)?;
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).map_err(rerr)?;
            if n == 0 {
                return Ok(());
            }
            hash.update(&buf[..n]);
            w.write_all(&buf[..n]).map_err(werr)?;
        }
    }
}

impl Encoded {
    /// Length of the file this will write, in bytes.
    pub fn file_len(&self) -> u64 {
        self.stats.file_len
    }
}

/// Writes `sections` with `meta` to `path`, atomically: either the complete file appears under
/// `path` (replacing any file there) or, on error, nothing changes and no temporary file is
/// left.
///
/// The value width is that of `sections` (1 for `u8`, 2 for `u16`). The output bytes depend
/// only on the arguments, not on the number of rayon threads.
pub fn write_table(
    path: &Path,
    meta: &TableMeta,
    sections: Sections<'_>,
    opts: &WriteOptions,
) -> Result<WriteStats, FormatError> {
    write_encoded(path, &encode_table(path, meta, sections, opts)?)
}

/// Writes an encoded file to `path`, atomically as [`write_table`] does.
pub fn write_encoded(path: &Path, encoded: &Encoded) -> Result<WriteStats, FormatError> {
    let name = path
        .file_name()
        .ok_or_else(|| FormatError::invalid(path, "path has no file name"))?;
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp.{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = write_file(&tmp, encoded).and_then(|checksum| {
        fs::rename(&tmp, path).map_err(|e| FormatError::io(path, "rename into place", e))?;
        Ok(checksum)
    });
    match result {
        Ok(file_checksum) => {
            sync_parent(path);
            Ok(WriteStats {
                file_checksum,
                ..encoded.stats.clone()
            })
        }
        Err(e) => {
            // Best effort: the temporary file may not even have been created.
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Syncs the directory holding `path`, so the rename itself survives a crash. Best effort: the
/// file is complete and in place by now, and some platforms cannot sync a directory.
fn sync_parent(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes the encoded file to `tmp` and syncs it; returns the whole-file checksum.
fn write_file(tmp: &Path, enc: &Encoded) -> Result<u64, FormatError> {
    let file = File::create(tmp).map_err(|e| FormatError::io(tmp, "create", e))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let mut hash = Xxh64::new(0);
    let werr = |e| FormatError::io(tmp, "write", e);
    w.write_all(&enc.header).map_err(werr)?;
    hash.update(&enc.header);
    enc.body.copy_into(&mut w, &mut hash, tmp)?;
    let checksum = hash.digest();
    w.write_all(&checksum.to_le_bytes()).map_err(werr)?;
    let file = w
        .into_inner()
        .map_err(|e| FormatError::io(tmp, "write", e.into_error()))?;
    file.sync_all()
        .map_err(|e| FormatError::io(tmp, "sync", e))?;
    Ok(checksum)
}

/// Compresses the blocks and builds the header of the file [`write_table`] would write to
/// `path` (named in errors only).
pub fn encode_table(
    path: &Path,
    meta: &TableMeta,
    sections: Sections<'_>,
    opts: &WriteOptions,
) -> Result<Encoded, FormatError> {
    let lens: Vec<u64> = (0..sections.count())
        .map(|s| sections.len(s) as u64)
        .collect();
    encode_sections(
        path,
        meta,
        &lens,
        sections.value_width(),
        opts,
        &|s, out: &mut Vec<u16>| {
            out.clear();
            match sections {
                Sections::U8(v) => out.extend(v[s].iter().map(|&x| u16::from(x))),
                Sections::U16(v) => out.extend_from_slice(v[s]),
            }
            Ok(())
        },
    )
}

/// The values of one section, made on demand: `(section, out)` fills `out` (cleared first)
/// with the section's values.
pub type SectionFn<'a> = dyn Fn(usize, &mut Vec<u16>) -> Result<(), FormatError> + Sync + 'a;

/// [`encode_table`] for sections made one at a time by `section` (of the lengths `lens`, and
/// values below 256 when `width` is 1): only the sections being compressed are held in memory
/// (a batch of about one per thread with pairs, one at a time with zstd), never the whole
/// table, and of the compressed data at most [`SPILL_BYTES`] (the rest in a spool file).
pub fn encode_sections(
    path: &Path,
    meta: &TableMeta,
    lens: &[u64],
    width: u8,
    opts: &WriteOptions,
    section: &SectionFn<'_>,
) -> Result<Encoded, FormatError> {
    encode_spilling(path, meta, lens, width, opts, section, SPILL_BYTES)
}

/// [`encode_sections`] keeping at most `spill` bytes of data in memory.
pub(super) fn encode_spilling(
    path: &Path,
    meta: &TableMeta,
    lens: &[u64],
    width: u8,
    opts: &WriteOptions,
    section: &SectionFn<'_>,
    spill: usize,
) -> Result<Encoded, FormatError> {
    let mut body = Body::new(path, spill);
    let get = |s: usize, out: &mut Vec<u16>| -> Result<(), FormatError> {
        section(s, out)?;
        if out.len() as u64 != lens[s] || (width == 1 && out.iter().any(|&v| v > 0xff)) {
            return Err(FormatError::invalid(
                path,
                format!("section {s} does not match its length or value width"),
            ));
        }
        Ok(())
    };
    if let Compression::Pairs { block_bytes } = opts.compression {
        return encode_pairs(path, meta, lens, width, &get, block_bytes as usize, body);
    }
    let vpb = opts.values_per_block;
    if vpb == 0 || vpb > MAX_VALUES_PER_BLOCK {
        return Err(FormatError::invalid(
            path,
            format!("values_per_block {vpb} not in 1..={MAX_VALUES_PER_BLOCK}"),
        ));
    }
    if !zstd::compression_level_range().contains(&opts.level) {
        return Err(FormatError::invalid(
            path,
            format!("zstd level {} not supported", opts.level),
        ));
    }
    let mut fixed = header_start(path, meta, lens.len(), width)?;
    fixed.version = VERSION_ZSTD;
    fixed.compression = COMPRESSION_ZSTD;
    fixed.level = opts.level.clamp(i8::MIN.into(), i8::MAX.into()) as i8;
    fixed.values_per_block = vpb;

    let level = opts.level;
    // Each block's length and checksum, for the header; the blocks go to `body`.
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    let mut values = Vec::new();
    // Section by section; within one, one job per block (blocks never span sections).
    for (s, &len) in lens.iter().enumerate() {
        get(s, &mut values)?;
        let jobs: Vec<(usize, usize)> = (0..len as usize)
            .step_by(vpb as usize)
            .map(|start| (start, (len as usize).min(start + vpb as usize)))
            .collect();
        let part: Vec<(Vec<u8>, u64)> = jobs
            .par_iter()
            .map_init(
                || {
                    (
                        None::<zstd::bulk::Compressor<'static>>,
                        Vec::new(),
                        Vec::new(),
                    )
                },
                |(comp, raw, out), &(start, end)| {
                    raw.clear();
                    if width == 1 {
                        raw.extend(values[start..end].iter().map(|&x| x as u8));
                    } else {
                        raw.extend(values[start..end].iter().flat_map(|x| x.to_le_bytes()));
                    }
                    let sum = xxh64(raw, 0);
                    let comp = match comp {
                        Some(c) => c,
                        None => comp.insert(
                            zstd::bulk::Compressor::new(level)
                                .map_err(|e| FormatError::io(path, "create zstd compressor", e))?,
                        ),
                    };
                    out.clear();
                    out.reserve(zstd::compress_bound(raw.len()));
                    comp.compress_to_buffer(raw.as_slice(), out)
                        .map_err(|e| FormatError::io(path, "zstd compression", e))?;
                    Ok((out.as_slice().to_vec(), sum))
                },
            )
            .collect::<Result<_, FormatError>>()?;
        for (block, sum) in part {
            body.push(&block)?;
            blocks.push((block.len() as u64, sum));
        }
    }
    body.finish()?;
    fixed.block_count = blocks.len() as u64;

    let layout =
        Layout::of(&fixed).ok_or_else(|| FormatError::invalid(path, "header size overflows"))?;
    let compressed_bytes: u64 = blocks.iter().map(|&(len, _)| len).sum();
    fixed.file_len = layout.data_start + compressed_bytes + 8;

    let mut header = Vec::with_capacity(layout.data_start as usize);
    header.extend_from_slice(&fixed.encode());
    header.extend_from_slice(meta.material.as_bytes());
    header.extend_from_slice(&meta.index_params);
    header.extend_from_slice(&meta.encoding);
    header.resize(layout.sections_pos as usize, 0);
    for &len in lens {
        header.extend_from_slice(&len.to_le_bytes());
    }
    let mut offset = layout.data_start;
    for &(len, _) in &blocks {
        header.extend_from_slice(&offset.to_le_bytes());
        offset += len;
    }
    header.extend_from_slice(&offset.to_le_bytes());
    for &(_, sum) in &blocks {
        header.extend_from_slice(&sum.to_le_bytes());
    }
    debug_assert_eq!(header.len() as u64, layout.header_sum_pos);
    let header_sum = xxh64(&header, 0);
    header.extend_from_slice(&header_sum.to_le_bytes());

    let values: u64 = lens.iter().sum();
    Ok(Encoded {
        header,
        stats: WriteStats {
            file_len: fixed.file_len,
            values,
            blocks: blocks.len() as u64,
            raw_bytes: values * u64::from(width),
            compressed_bytes,
            file_checksum: 0,
        },
        body,
    })
}

/// The fixed header and metadata of a file, for either codec (lengths checked).
fn header_start(
    path: &Path,
    meta: &TableMeta,
    sections: usize,
    width: u8,
) -> Result<FixedHeader, FormatError> {
    let len32 = |what: &str, n: usize| {
        u32::try_from(n).map_err(|_| FormatError::invalid(path, format!("{what} too long")))
    };
    let mut fixed = FixedHeader::new();
    fixed.metric = meta.metric.to_byte();
    fixed.value_width = width;
    fixed.section_count = len32("section list", sections)?;
    fixed.material_len = len32("material", meta.material.len())?;
    fixed.index_params_len = len32("index parameters", meta.index_params.len())?;
    fixed.encoding_len = len32("encoding", meta.encoding.len())?;
    Ok(fixed)
}

/// Values of the sections [`encode_pairs`] encodes at once (more when there are more threads
/// than sections this large): two sections of a large table's file.
const BATCH_VALUES: u64 = 1 << 25;

/// [`encode_sections`] for [`Compression::Pairs`]: sections encoded in parallel a batch at a
/// time (each is deterministic), then laid out as [`super::pairs_file`] describes.
fn encode_pairs(
    path: &Path,
    meta: &TableMeta,
    lens: &[u64],
    width: u8,
    get: &SectionFn<'_>,
    block_bytes: usize,
    mut body: Body,
) -> Result<Encoded, FormatError> {
    if !pairs::valid_block_bytes(block_bytes) {
        return Err(FormatError::invalid(
            path,
            format!("pairs block size {block_bytes} not a power of two in 32..=1024"),
        ));
    }
    let mut fixed = header_start(path, meta, lens.len(), width)?;
    fixed.compression = COMPRESSION_PAIRS;
    fixed.values_per_block = block_bytes as u32;
    let mut descriptors = Vec::new();
    let mut tables = Vec::new();
    let mut sums = ChunkSums::default();
    let mut data_len = 0u64;
    let threads = rayon::current_num_threads().max(1) as u64;
    let budget = BATCH_VALUES.max(threads * lens.iter().copied().max().unwrap_or(0));
    let mut next = 0;
    while next < lens.len() {
        // The batch: sections from `next` while their values fit the budget (at least one).
        let mut end = next + 1;
        let mut batch = lens[next];
        while end < lens.len() && batch + lens[end] <= budget {
            batch += lens[end];
            end += 1;
        }
        let encoded: Vec<pairs::Encoded> = (next..end)
            .into_par_iter()
            .map(|s| {
                let mut values = Vec::new();
                get(s, &mut values)?;
                pairs::encode(&values, block_bytes)
                    .map_err(|e| FormatError::invalid(path, e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        for (s, e) in (next..end).zip(&encoded) {
            descriptors.extend_from_slice(&pairs_file::descriptor(lens[s], e));
            tables.extend_from_slice(&pairs_file::section_tables(e));
            sums.update(&e.data);
            body.push(&e.data)?;
            data_len += e.data.len() as u64;
        }
        next = end;
    }
    body.finish()?;
    let mut header = Vec::new();
    header.extend_from_slice(&fixed.encode());
    header.extend_from_slice(meta.material.as_bytes());
    header.extend_from_slice(&meta.index_params);
    header.extend_from_slice(&meta.encoding);
    header.resize(header.len().next_multiple_of(8), 0);
    debug_assert!(header.len() as u64 >= FIXED_LEN);
    header.extend_from_slice(&descriptors);
    header.extend_from_slice(&tables);
    for sum in sums.finish() {
        header.extend_from_slice(&sum.to_le_bytes());
    }
    let total_blocks = data_len / block_bytes as u64;
    fixed.block_count = total_blocks.div_ceil(pairs_file::chunk_blocks(block_bytes));
    fixed.file_len = header.len() as u64 + 8 + data_len + 8;
    header[..FIXED_LEN as usize].copy_from_slice(&fixed.encode());
    let header_sum = xxh64(&header, 0);
    header.extend_from_slice(&header_sum.to_le_bytes());
    let values: u64 = lens.iter().sum();
    let compressed_bytes = data_len;
    Ok(Encoded {
        header,
        stats: WriteStats {
            file_len: fixed.file_len,
            values,
            blocks: total_blocks,
            raw_bytes: values * u64::from(width),
            compressed_bytes,
            file_checksum: 0,
        },
        body,
    })
}

/// The checksums of the data region's chunks of [`pairs_file::CHUNK_BYTES`] (the last one
/// shorter), fed a piece at a time: chunks may span sections.
#[derive(Default)]
pub(super) struct ChunkSums {
    sums: Vec<u64>,
    /// The start of the chunk not complete yet.
    pending: Vec<u8>,
}

impl ChunkSums {
    pub(super) fn update(&mut self, mut data: &[u8]) {
        let chunk = pairs_file::CHUNK_BYTES;
        if !self.pending.is_empty() {
            let take = (chunk - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.pending.len() < chunk {
                return;
            }
            self.sums.push(xxh64(&self.pending, 0));
            self.pending.clear();
        }
        let whole = data.len() / chunk * chunk;
        self.sums
            .extend(data[..whole].chunks(chunk).map(|c| xxh64(c, 0)));
        self.pending.extend_from_slice(&data[whole..]);
    }

    pub(super) fn finish(mut self) -> Vec<u64> {
        if !self.pending.is_empty() {
            self.sums.push(xxh64(&self.pending, 0));
        }
        self.sums
    }
}
