//! Writing a table file: compress blocks in parallel, build the header, write atomically.
//!
//! Blocks are compressed independently (rayon over blocks, each with its own zstd context and
//! no zstd worker threads) and collected in block order, so the bytes do not depend on the
//! thread count. The file is written to `NAME.tmp.<pid>` beside the target, synced, and renamed
//! over the target only when complete; on any error the temporary file is removed.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    blocks: Vec<Vec<u8>>,
    stats: WriteStats,
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
    for block in &enc.blocks {
        w.write_all(block).map_err(werr)?;
        hash.update(block);
    }
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
/// (one per thread with pairs, one at a time with zstd), never the whole table.
pub fn encode_sections(
    path: &Path,
    meta: &TableMeta,
    lens: &[u64],
    width: u8,
    opts: &WriteOptions,
    section: &SectionFn<'_>,
) -> Result<Encoded, FormatError> {
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
        return encode_pairs(path, meta, lens, width, &get, block_bytes as usize);
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
    let mut compressed: Vec<(Vec<u8>, u64)> = Vec::new();
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
        compressed.extend(part);
    }
    fixed.block_count = compressed.len() as u64;

    let layout =
        Layout::of(&fixed).ok_or_else(|| FormatError::invalid(path, "header size overflows"))?;
    let compressed_bytes: u64 = compressed.iter().map(|(b, _)| b.len() as u64).sum();
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
    for (block, _) in &compressed {
        header.extend_from_slice(&offset.to_le_bytes());
        offset += block.len() as u64;
    }
    header.extend_from_slice(&offset.to_le_bytes());
    for (_, sum) in &compressed {
        header.extend_from_slice(&sum.to_le_bytes());
    }
    debug_assert_eq!(header.len() as u64, layout.header_sum_pos);
    let header_sum = xxh64(&header, 0);
    header.extend_from_slice(&header_sum.to_le_bytes());

    let values: u64 = lens.iter().sum();
    let blocks: Vec<Vec<u8>> = compressed.into_iter().map(|(b, _)| b).collect();
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
        blocks,
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

/// [`encode_sections`] for [`Compression::Pairs`]: sections encoded in parallel (each is
/// deterministic), then laid out as [`super::pairs_file`] describes.
fn encode_pairs(
    path: &Path,
    meta: &TableMeta,
    lens: &[u64],
    width: u8,
    get: &SectionFn<'_>,
    block_bytes: usize,
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
    let encoded: Vec<pairs::Encoded> = (0..lens.len())
        .into_par_iter()
        .map(|s| {
            let mut values = Vec::new();
            get(s, &mut values)?;
            pairs::encode(&values, block_bytes)
                .map_err(|e| FormatError::invalid(path, e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let mut header = Vec::new();
    header.extend_from_slice(&fixed.encode());
    header.extend_from_slice(meta.material.as_bytes());
    header.extend_from_slice(&meta.index_params);
    header.extend_from_slice(&meta.encoding);
    header.resize(header.len().next_multiple_of(8), 0);
    debug_assert!(header.len() as u64 >= FIXED_LEN);
    for (s, e) in encoded.iter().enumerate() {
        header.extend_from_slice(&pairs_file::descriptor(lens[s], e));
    }
    for e in &encoded {
        header.extend_from_slice(&pairs_file::section_tables(e));
    }
    let data: Vec<u8> = encoded
        .iter()
        .flat_map(|e| e.data.iter().copied())
        .collect();
    let total_blocks = (data.len() / block_bytes) as u64;
    for sum in pairs_file::chunk_checksums(&data) {
        header.extend_from_slice(&sum.to_le_bytes());
    }
    fixed.block_count = total_blocks.div_ceil(pairs_file::chunk_blocks(block_bytes));
    fixed.file_len = header.len() as u64 + 8 + data.len() as u64 + 8;
    header[..FIXED_LEN as usize].copy_from_slice(&fixed.encode());
    let header_sum = xxh64(&header, 0);
    header.extend_from_slice(&header_sum.to_le_bytes());
    let values: u64 = lens.iter().sum();
    let compressed_bytes = data.len() as u64;
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
        blocks: vec![data],
    })
}
