//! The exact values of the slots solved so far, for the rest of the solve and for the writer.
//!
//! The solver holds one state byte per slot of the *unit* it is solving (the whole table
//! without pawns, a batch of pawn configurations with pawns); a finished unit's exact values
//! move here, so memory stays bounded by the largest unit. Later units read here the values
//! behind their pawn pushes (into more advanced configurations, always finished), and the
//! writer streams the whole table from here.
//!
//! Each side's slots are cut into *frames* of [`FRAME`] slots in index order. A frame fills as
//! the units covering it finish (with pawns, one frame may span several configurations solved
//! at different times); a full frame is compressed (zstd, level 1) and appended to a scratch
//! file, or kept in memory as it is for small tables. Each slot holds a `u16`: the value code
//! ([`Value::code`], [`Value::INVALID`] for slots that are no position), with
//! [`NOT_STORED`](crate::table::NOT_STORED) set for positions whose side to move can capture (files do not store them).
//!
//! The scratch file's layout depends on which thread finished a frame first; what is read back
//! does not, so the tables written from here are the same for any number of threads.
//!
//! # Resume
//! A *resumable* store ([`ExactStore::resumable`]) keeps its scratch file under a fixed name
//! (`NAME.scratch`) and, at [`ExactStore::checkpoint`], writes beside it `NAME.resume`: the
//! frame table (where each sealed frame lies in the scratch file; the values of frames still
//! filling), the scratch file's length and how many units are done, under a key naming the
//! table, metric and solver parameters, closed by a SHA-256. The scratch file is synced
//! first and the checkpoint written to a temporary name and renamed, so a process killed at any
//! moment leaves either the previous checkpoint or the new one, each consistent with the scratch
//! file's first bytes. [`ExactStore::resume`] reopens both; anything that does not match
//! (another key, a damaged or truncated file) starts the table over. Both files stay when the
//! process dies or the solve fails, and are removed by [`ExactStore::remove_resume_files`] once
//! the table's files are written.

use crate::table::{FRAME, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Tables with at most this many slots per side keep their frames in memory, uncompressed
/// (at most 32 MiB for both sides): every four-piece table. Above it a later unit's lookups
/// of the pawn moves' values (`ExactStore::get`) each decompress a chunk: KPvBN (5.7 M
/// slots), spilled under the former `1 << 22`, took 0.895x the CPU time held in memory (all
/// metrics, 1 thread, 13.8 → 12.4 user-s) and less peak memory.
pub const IN_MEMORY_SLOTS: u64 = 1 << 23;

enum Frame {
    /// Being filled: the values, and how many of them are set.
    Filling(Vec<u16>, u64),
    /// Complete, in memory.
    Memory(Vec<u16>),
    /// Complete, compressed in the scratch file: one zstd frame per [`CHUNK`] slots, stored
    /// one after the other from `offset`, of the lengths `lens`.
    Disk { offset: u64, lens: Box<[u32]> },
}

/// Slots per compressed chunk of a frame: a lookup of one slot ([`ExactStore::get`], the pawn
/// moves of later units) decompresses one chunk, 8 KiB. With whole frames (128 KiB) such
/// lookups took 91 % of the time of a 4-piece pawn table (perf, BNPvK).
const CHUNK: usize = 4096;

/// Chunks a [`FrameCache`] holds per side (direct-mapped by chunk number).
const CACHED_CHUNKS: usize = 16;

/// The scratch file behind an [`ExactStore`], removed when the store is dropped (unless the
/// store is resumable: then `checkpoint` is the path of its checkpoint file).
struct Scratch {
    file: File,
    path: PathBuf,
    end: AtomicU64,
    checkpoint: Option<PathBuf>,
}

impl Scratch {
    /// An empty scratch file at `path` (truncated if it exists).
    fn create(path: PathBuf, checkpoint: Option<PathBuf>) -> Result<Scratch, ScratchError> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        Ok(Scratch {
            file,
            path,
            end: AtomicU64::new(0),
            checkpoint,
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.checkpoint.is_none() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// First bytes of a checkpoint file.
const RESUME_MAGIC: &[u8; 16] = b"antitb-resume-1\n";

/// Exact values of a table's solved slots, by side and index (module doc).
pub struct ExactStore {
    size: u64,
    frames: [Vec<Mutex<Frame>>; 2],
    scratch: Option<Scratch>,
}

/// A scratch file of the solver could not be written or read back: its path and what failed.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ScratchError {
    pub path: PathBuf,
    pub what: String,
}

impl fmt::Display for ScratchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: solver scratch file: {}",
            self.path.display(),
            self.what
        )
    }
}

impl std::error::Error for ScratchError {}

fn io_err(path: &Path, e: io::Error) -> ScratchError {
    ScratchError {
        path: path.to_path_buf(),
        what: e.to_string(),
    }
}

impl ExactStore {
    /// A store for `size` slots per side; large tables spill compressed frames to a scratch
    /// file `name` in `dir` (created now, removed on drop).
    pub fn new(size: u64, dir: &Path, name: &str) -> Result<ExactStore, ScratchError> {
        let scratch = if size > IN_MEMORY_SLOTS {
            Some(Scratch::create(dir.join(name), None)?)
        } else {
            None
        };
        Ok(ExactStore {
            size,
            frames: empty_frames(size),
            scratch,
        })
    }

    /// A resumable store (module doc) for `size` slots per side: its frames always go to the
    /// scratch file `dir/NAME.scratch` (created empty now), checkpoints to `dir/NAME.resume`.
    pub fn resumable(size: u64, dir: &Path, name: &str) -> Result<ExactStore, ScratchError> {
        let (path, checkpoint) = resume_paths(dir, name);
        let _ = std::fs::remove_file(&checkpoint);
        let scratch = Scratch::create(path, Some(checkpoint))?;
        Ok(ExactStore::with_scratch(size, empty_frames(size), scratch))
    }

    fn with_scratch(size: u64, frames: [Vec<Mutex<Frame>>; 2], scratch: Scratch) -> ExactStore {
        ExactStore {
            size,
            frames,
            scratch: Some(scratch),
        }
    }

    /// The store a checkpoint of `dir/NAME` left, with the number of units it had done, if
    /// there is one whose key is `key` and whose files are intact; `None` otherwise (and any
    /// such files are removed).
    pub fn resume(
        size: u64,
        dir: &Path,
        name: &str,
        key: &str,
    ) -> Result<Option<(ExactStore, u64)>, ScratchError> {
        let (path, checkpoint) = resume_paths(dir, name);
        let Ok(bytes) = std::fs::read(&checkpoint) else {
            let _ = std::fs::remove_file(&path);
            return Ok(None);
        };
        let parsed = parse_checkpoint(&bytes, size, key);
        let file = File::options().read(true).write(true).open(&path);
        match (parsed, file) {
            (Some((frames, units, end)), Ok(file))
                if file.metadata().is_ok_and(|m| m.len() >= end) =>
            {
                file.set_len(end).map_err(|e| io_err(&path, e))?;
                let scratch = Scratch {
                    file,
                    path,
                    end: AtomicU64::new(end),
                    checkpoint: Some(checkpoint),
                };
                Ok(Some((
                    ExactStore::with_scratch(size, frames, scratch),
                    units,
                )))
            }
            _ => {
                let _ = std::fs::remove_file(&checkpoint);
                let _ = std::fs::remove_file(&path);
                Ok(None)
            }
        }
    }

    /// Record that `units` units are done (module doc): the state of every frame, under `key`.
    /// Call between units, with no `put` in progress. A store that is not resumable does nothing.
    pub fn checkpoint(&self, key: &str, units: u64) -> Result<(), ScratchError> {
        let Some(s) = &self.scratch else {
            return Ok(());
        };
        let Some(checkpoint) = &s.checkpoint else {
            return Ok(());
        };
        s.file.sync_data().map_err(|e| io_err(&s.path, e))?;
        let mut out = Vec::new();
        out.extend_from_slice(RESUME_MAGIC);
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
        out.extend_from_slice(&units.to_le_bytes());
        out.extend_from_slice(&s.end.load(Relaxed).to_le_bytes());
        for side in &self.frames {
            for frame in side {
                match &*frame.lock().expect("frame lock") {
                    Frame::Filling(buf, _) if buf.is_empty() => out.push(0),
                    Frame::Filling(buf, filled) => {
                        out.push(1);
                        out.extend_from_slice(&filled.to_le_bytes());
                        let bytes: Vec<u8> = buf.iter().flat_map(|v| v.to_le_bytes()).collect();
                        let z =
                            zstd::bulk::compress(&bytes, 1).map_err(|e| io_err(checkpoint, e))?;
                        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                        out.extend_from_slice(&(z.len() as u32).to_le_bytes());
                        out.extend_from_slice(&z);
                    }
                    Frame::Disk { offset, lens } => {
                        out.push(2);
                        out.extend_from_slice(&offset.to_le_bytes());
                        out.extend_from_slice(&(lens.len() as u32).to_le_bytes());
                        for l in lens.iter() {
                            out.extend_from_slice(&l.to_le_bytes());
                        }
                    }
                    Frame::Memory(_) => {
                        return Err(self.fault("a resumable store holds a frame in memory".into()));
                    }
                }
            }
        }
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        let mut tmp = checkpoint.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            io::Write::write_all(&mut f, &out)?;
            f.sync_all()?;
            std::fs::rename(&tmp, checkpoint)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_err(checkpoint, e)
        })
    }

    /// Remove a resumable store's scratch and checkpoint files (the table is written).
    pub fn remove_resume_files(&self) {
        if let Some(Scratch {
            path,
            checkpoint: Some(c),
            ..
        }) = &self.scratch
        {
            let _ = std::fs::remove_file(c);
            let _ = std::fs::remove_file(path);
        }
    }

    /// An error of the store's own bookkeeping (a bug, reported rather than a panic).
    pub(super) fn fault(&self, what: String) -> ScratchError {
        ScratchError {
            path: self
                .scratch
                .as_ref()
                .map_or_else(|| PathBuf::from("(in memory)"), |s| s.path.clone()),
            what,
        }
    }

    fn frame_len(&self, f: usize) -> u64 {
        (self.size - f as u64 * FRAME).min(FRAME)
    }

    /// Set the values of slots `start .. start + values.len()` of `side` (each slot once).
    pub fn put(&self, side: usize, start: u64, values: &[u16]) -> Result<(), ScratchError> {
        let mut at = 0usize;
        while at < values.len() {
            let idx = start + at as u64;
            let f = (idx / FRAME) as usize;
            let off = (idx % FRAME) as usize;
            let len = self.frame_len(f);
            let take = (len as usize - off).min(values.len() - at);
            let part = &values[at..at + take];
            let mut frame = self.frames[side][f].lock().expect("frame lock");
            let done = match &mut *frame {
                Frame::Filling(buf, filled) => {
                    if buf.is_empty() && take as u64 == len {
                        Some(part.to_vec())
                    } else {
                        if buf.is_empty() {
                            buf.resize(len as usize, Value::INVALID.code());
                        }
                        buf[off..off + take].copy_from_slice(part);
                        *filled += take as u64;
                        (*filled == len).then(|| std::mem::take(buf))
                    }
                }
                _ => return Err(self.fault(format!("frame {f} written twice"))),
            };
            if let Some(full) = done {
                *frame = self.seal(full)?;
            }
            at += take;
        }
        Ok(())
    }

    /// A complete frame, compressed to the scratch file (chunk by chunk) or kept in memory.
    fn seal(&self, values: Vec<u16>) -> Result<Frame, ScratchError> {
        let Some(s) = &self.scratch else {
            return Ok(Frame::Memory(values));
        };
        let mut packed = Vec::new();
        let mut lens = Vec::with_capacity(values.len().div_ceil(CHUNK));
        let mut bytes = Vec::with_capacity(2 * CHUNK);
        for chunk in values.chunks(CHUNK) {
            bytes.clear();
            bytes.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
            let z = compress_chunk(&bytes).map_err(|e| io_err(&s.path, e))?;
            lens.push(z.len() as u32);
            packed.extend_from_slice(&z);
        }
        let offset = s.end.fetch_add(packed.len() as u64, Relaxed);
        write_all_at(&s.file, &packed, offset).map_err(|e| io_err(&s.path, e))?;
        Ok(Frame::Disk {
            offset,
            lens: lens.into_boxed_slice(),
        })
    }

    /// Chunk `c` of a disk frame (`offset`, `lens`) decompressed into `out` (cleared first).
    fn read_chunk(
        &self,
        f: usize,
        offset: u64,
        lens: &[u32],
        c: usize,
        z: &mut Decompressor,
        out: &mut Vec<u16>,
    ) -> Result<(), ScratchError> {
        let s = self
            .scratch
            .as_ref()
            .expect("disk frames have a scratch file");
        let start = offset + lens[..c].iter().map(|&l| u64::from(l)).sum::<u64>();
        let mut packed = vec![0u8; lens[c] as usize];
        read_exact_at(&s.file, &mut packed, start).map_err(|e| io_err(&s.path, e))?;
        let bytes = z.decompress(&packed).map_err(|e| ScratchError {
            path: s.path.clone(),
            what: format!("frame {f} chunk {c}: {e}"),
        })?;
        out.clear();
        out.extend(
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        );
        Ok(())
    }

    /// The values of frame `f` of `side` into `out` (cleared first). Every slot of the frame
    /// must be set.
    pub fn frame(&self, side: usize, f: usize, out: &mut Vec<u16>) -> Result<(), ScratchError> {
        out.clear();
        let frame = self.frames[side][f].lock().expect("frame lock");
        match &*frame {
            Frame::Memory(v) => out.extend_from_slice(v),
            Frame::Filling(..) => {
                return Err(self.fault(format!(
                    "frame {f} of side {side} read before it was solved"
                )));
            }
            Frame::Disk { offset, lens } => {
                let (offset, lens) = (*offset, lens.clone());
                drop(frame);
                let mut z = Decompressor::default();
                let mut chunk = Vec::new();
                for c in 0..lens.len() {
                    self.read_chunk(f, offset, &lens, c, &mut z, &mut chunk)?;
                    out.extend_from_slice(&chunk);
                }
            }
        }
        Ok(())
    }

    /// The stored `u16` of one slot, which must be solved (compressed chunks through `cache`;
    /// a frame still filling is read in place).
    pub fn get(&self, side: usize, idx: u64, cache: &mut FrameCache) -> Result<u16, ScratchError> {
        let f = (idx / FRAME) as usize;
        let off = (idx % FRAME) as usize;
        let chunk = idx / CHUNK as u64;
        let slot = &mut cache.chunks[side][chunk as usize % CACHED_CHUNKS];
        if slot.0 == Some(chunk) {
            return Ok(slot.1[off % CHUNK]);
        }
        let frame = self.frames[side][f].lock().expect("frame lock");
        match &*frame {
            Frame::Memory(v) => Ok(v[off]),
            Frame::Filling(buf, _) if !buf.is_empty() => Ok(buf[off]),
            Frame::Filling(..) => Err(self.fault(format!(
                "slot {idx} of side {side} read before it was solved"
            ))),
            Frame::Disk { offset, lens } => {
                let (offset, lens) = (*offset, lens.clone());
                drop(frame);
                slot.0 = None;
                self.read_chunk(f, offset, &lens, off / CHUNK, &mut cache.z, &mut slot.1)?;
                slot.0 = Some(chunk);
                Ok(slot.1[off % CHUNK])
            }
        }
    }

    /// Number of frames per side.
    pub fn frames(&self) -> usize {
        self.frames[0].len()
    }
}

/// Both sides' frames of a store of `size` slots per side, all empty.
fn empty_frames(size: u64) -> [Vec<Mutex<Frame>>; 2] {
    let n = size.div_ceil(FRAME) as usize;
    let frames = || {
        (0..n)
            .map(|_| Mutex::new(Frame::Filling(Vec::new(), 0)))
            .collect()
    };
    [frames(), frames()]
}

/// `dir/NAME.scratch` and `dir/NAME.resume`.
fn resume_paths(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{name}.scratch")),
        dir.join(format!("{name}.resume")),
    )
}

/// The frames, units done and scratch length of a checkpoint file, if it is intact and its key
/// and size are these.
#[allow(clippy::type_complexity)]
fn parse_checkpoint(
    bytes: &[u8],
    size: u64,
    key: &str,
) -> Option<([Vec<Mutex<Frame>>; 2], u64, u64)> {
    let body_len = bytes.len().checked_sub(32)?;
    let (body, digest) = bytes.split_at(body_len);
    if Sha256::digest(body).as_slice() != digest {
        return None;
    }
    let mut r = Reader(body);
    if r.take(16)? != RESUME_MAGIC {
        return None;
    }
    let key_len = r.u32()? as usize;
    if r.take(key_len)? != key.as_bytes() || r.u64()? != size {
        return None;
    }
    let units = r.u64()?;
    let end = r.u64()?;
    let n = size.div_ceil(FRAME);
    let mut sides: [Vec<Mutex<Frame>>; 2] = [Vec::new(), Vec::new()];
    for side in &mut sides {
        for f in 0..n {
            let len = (size - f * FRAME).min(FRAME) as usize;
            let frame = match r.take(1)?[0] {
                0 => Frame::Filling(Vec::new(), 0),
                1 => {
                    let filled = r.u64()?;
                    let raw = r.u32()? as usize;
                    let zlen = r.u32()? as usize;
                    let bytes = zstd::bulk::decompress(r.take(zlen)?, raw).ok()?;
                    if bytes.len() != 2 * len || filled >= len as u64 {
                        return None;
                    }
                    let buf = bytes
                        .chunks_exact(2)
                        .map(|c| u16::from_le_bytes([c[0], c[1]]))
                        .collect();
                    Frame::Filling(buf, filled)
                }
                2 => {
                    let offset = r.u64()?;
                    let count = r.u32()? as usize;
                    if count != len.div_ceil(CHUNK) {
                        return None;
                    }
                    let lens: Box<[u32]> = (0..count).map(|_| r.u32()).collect::<Option<_>>()?;
                    let total: u64 = lens.iter().map(|&l| u64::from(l)).sum();
                    if offset.checked_add(total)? > end {
                        return None;
                    }
                    Frame::Disk { offset, lens }
                }
                _ => return None,
            };
            side.push(Mutex::new(frame));
        }
    }
    r.0.is_empty().then_some((sides, units, end))
}

/// Little-endian fields read off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// Decoded chunks of compressed frames, [`CACHED_CHUNKS`] per side, and a zstd context, for
/// [`ExactStore::get`] (one per thread).
pub struct FrameCache {
    chunks: [Vec<(Option<u64>, Vec<u16>)>; 2],
    z: Decompressor,
}

impl Default for FrameCache {
    fn default() -> FrameCache {
        let side = || (0..CACHED_CHUNKS).map(|_| (None, Vec::new())).collect();
        FrameCache {
            chunks: [side(), side()],
            z: Decompressor::default(),
        }
    }
}

/// `bytes` compressed (zstd, level 1) with this thread's context: a fresh context per chunk
/// took 1.4 % of KRNvBN's build.
fn compress_chunk(bytes: &[u8]) -> io::Result<Vec<u8>> {
    thread_local! {
        static CCTX: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CCTX.with(|cell| {
        let mut cell = cell.borrow_mut();
        let c = match &mut *cell {
            Some(c) => c,
            None => cell.insert(zstd::bulk::Compressor::new(1)?),
        };
        c.compress(bytes)
    })
}

/// A reusable zstd decompression context (creating one per chunk cost 1 % of a pawn table's
/// time).
#[derive(Default)]
struct Decompressor(Option<zstd::bulk::Decompressor<'static>>);

impl Decompressor {
    fn decompress(&mut self, packed: &[u8]) -> io::Result<Vec<u8>> {
        let z = match &mut self.0 {
            Some(z) => z,
            None => self.0.insert(zstd::bulk::Decompressor::new()?),
        };
        z.decompress(packed, 2 * CHUNK)
    }
}

#[cfg(unix)]
fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(not(unix))]
fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_write(file, buf, offset)?;
        buf = &buf[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(not(unix))]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}
