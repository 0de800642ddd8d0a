//! Saving the check of a table held compact, so that a later run resumes it
//! ([`super::VerifyOptions::checkpoint`]): a six-piece table of distinct pieces takes hours to
//! check, longer than a working session.
//!
//! Two files per table in the checkpoint directory:
//!
//! * `{material}.verify-state`: the table's values as the check holds them once they are built
//!   (its [`CompactSide`]s: one byte a slot, then the far values), written once, to a temporary
//!   name and then renamed. A header names the table's own files by their XXH64, and the file
//!   ends with the XXH64 of everything before it;
//! * `{material}.verify-done`: after a first line naming the state, one line
//!   `side section positions` per section of slots checked without a disagreement or an error,
//!   appended as the scan goes. A section with a disagreement is not recorded: a resumed run
//!   finds and reports it again, so its report is the one an uninterrupted run gives.
//!
//! A state that does not match the table's files (rebuilt or replaced since) or fails its
//! checksum is ignored, and the values are built again. Both files are removed once the table's
//! check is complete.

use super::VerifyError;
use super::tables::CompactSide;
use crate::format::checksum::Xxh64;
use crate::store::StoredTable;
use crate::table::{Material, Value};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

/// The first bytes of a state file; the last byte is the layout's version.
const MAGIC: &[u8; 8] = b"ATBVST\x00\x01";

/// Bytes moved at a time between a side and its file.
const CHUNK: usize = 1 << 20;

/// Where one table's check is saved, and what it is saved for.
pub(super) struct Checkpoint {
    state: PathBuf,
    done: PathBuf,
    /// XXH64 of the layout version, the slots a side and the table's own files: a state and a
    /// done list are used only with the same stamp.
    stamp: u64,
    slots: u64,
}

/// (side, section) → positions checked, of the sections a previous run finished cleanly.
pub(super) type Finished = HashMap<(usize, usize), u64>;

impl Checkpoint {
    /// The checkpoint of `material` in `dir` (created if missing), for a table of `slots` slots a
    /// side whose own files are `files`.
    pub fn new(
        dir: &Path,
        material: Material,
        slots: u64,
        files: &[&StoredTable],
    ) -> Result<Checkpoint, VerifyError> {
        let err = |p: &Path, e: io::Error| VerifyError::Checkpoint(p.to_path_buf(), Arc::new(e));
        std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
        let mut stamp = Xxh64::new(0);
        stamp.update(MAGIC);
        stamp.update(&slots.to_le_bytes());
        for f in files {
            let hash = file_hash(f.path()).map_err(|e| err(f.path(), e))?;
            stamp.update(&hash.to_le_bytes());
        }
        let checkpoint = Checkpoint {
            state: dir.join(format!("{material}.verify-state")),
            done: dir.join(format!("{material}.verify-done")),
            stamp: stamp.digest(),
            slots,
        };
        // Fail now, not after hours of work, if nothing can be written there.
        let probe = checkpoint.state.with_extension("verify-probe");
        File::create(&probe)
            .and_then(|_| std::fs::remove_file(&probe))
            .map_err(|e| err(&probe, e))?;
        Ok(checkpoint)
    }

    /// The saved values (`count` sides), if a state of this stamp is there and intact.
    pub fn load(&self, count: usize) -> Option<Vec<CompactSide>> {
        let file = File::open(&self.state).ok()?;
        // The header (4 × 8 bytes), each side's bytes and far count, the trailing checksum.
        let least = 32 + count as u64 * (self.slots + 8) + 8;
        if file.metadata().ok()?.len() < least {
            return None;
        }
        let mut input = Hashed {
            inner: BufReader::with_capacity(CHUNK, file),
            hash: Xxh64::new(0),
        };
        let header = input.array::<32>().ok()?;
        if header[..8] != MAGIC[..]
            || header[8..16] != self.stamp.to_le_bytes()
            || header[16..24] != self.slots.to_le_bytes()
            || header[24..32] != (count as u64).to_le_bytes()
        {
            return None;
        }
        let mut sides = Vec::with_capacity(count);
        for _ in 0..count {
            sides.push(read_side(&mut input, self.slots).ok()?);
        }
        let sum = input.hash.digest();
        let mut stored = [0u8; 8];
        input.inner.read_exact(&mut stored).ok()?;
        let mut rest = [0u8; 1];
        let at_end = matches!(input.inner.read(&mut rest), Ok(0));
        (u64::from_le_bytes(stored) == sum && at_end).then_some(sides)
    }

    /// Save the built values: to a temporary name, then renamed over any older state.
    pub fn save(&self, sides: &[&CompactSide]) -> Result<(), VerifyError> {
        let tmp = self.state.with_extension("verify-state.tmp");
        let write = || -> io::Result<()> {
            let mut out = Hashed {
                inner: BufWriter::with_capacity(CHUNK, File::create(&tmp)?),
                hash: Xxh64::new(0),
            };
            out.put(MAGIC)?;
            out.put(&self.stamp.to_le_bytes())?;
            out.put(&self.slots.to_le_bytes())?;
            out.put(&(sides.len() as u64).to_le_bytes())?;
            for side in sides {
                write_side(&mut out, side)?;
            }
            let sum = out.hash.digest();
            out.inner.write_all(&sum.to_le_bytes())?;
            let file = out.inner.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.state)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            VerifyError::Checkpoint(self.state.clone(), Arc::new(e))
        })?;
        // A done list of an older state is of no use with this one.
        let _ = std::fs::remove_file(&self.done);
        Ok(())
    }

    /// The sections a previous run with this state finished cleanly. A last line cut short by
    /// a kill is ignored.
    pub fn finished(&self) -> Finished {
        let mut out = Finished::new();
        let Ok(file) = File::open(&self.done) else {
            return out;
        };
        let mut lines = BufReader::new(file).lines().map_while(Result::ok);
        if lines.next() != Some(self.first_line()) {
            return out;
        }
        for line in lines {
            let f: Vec<u64> = line.split(' ').map_while(|w| w.parse().ok()).collect();
            if let [side @ 0..=1, section, positions] = f[..] {
                out.insert((side as usize, section as usize), positions);
            }
        }
        out
    }

    /// The list the scan appends its finished sections to (started if missing).
    pub fn done_list(&self) -> Result<DoneList, VerifyError> {
        let open = || -> io::Result<File> {
            let first = File::open(&self.done)
                .ok()
                .and_then(|f| BufReader::new(f).lines().next()?.ok());
            if first != Some(self.first_line()) {
                let mut f = File::create(&self.done)?;
                writeln!(f, "{}", self.first_line())?;
                return Ok(f);
            }
            OpenOptions::new().append(true).open(&self.done)
        };
        let file = open().map_err(|e| VerifyError::Checkpoint(self.done.clone(), Arc::new(e)))?;
        Ok(DoneList {
            path: self.done.clone(),
            file: Mutex::new(Some(file)),
        })
    }

    /// The check is complete: nothing to resume.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.state);
        let _ = std::fs::remove_file(&self.done);
    }

    fn first_line(&self) -> String {
        format!("antitb verify-done {:016x}", self.stamp)
    }
}

/// XXH64 of a file's bytes, read a chunk at a time (a six-piece `.dtw` file runs to gigabytes).
fn file_hash(path: &Path) -> io::Result<u64> {
    let mut file = File::open(path)?;
    let mut hash = Xxh64::new(0);
    let mut buf = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buf)? {
            0 => return Ok(hash.digest()),
            n => hash.update(&buf[..n]),
        }
    }
}

/// The done list of a scan in progress, appended to from every thread.
pub(super) struct DoneList {
    path: PathBuf,
    /// `None` once a write failed (that error was returned; the rest is not recorded).
    file: Mutex<Option<File>>,
}

impl DoneList {
    /// Record a section checked without a disagreement or an error.
    pub fn record(&self, side: usize, section: usize, positions: u64) -> Result<(), VerifyError> {
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(f) = file.as_mut() else {
            return Ok(());
        };
        // One write a line: a kill leaves at most the last line short.
        let line = format!("{side} {section} {positions}\n");
        f.write_all(line.as_bytes()).map_err(|e| {
            *file = None;
            VerifyError::Checkpoint(self.path.clone(), Arc::new(e))
        })
    }
}

/// A reader or writer that hashes what passes through.
struct Hashed<T> {
    inner: T,
    hash: Xxh64,
}

impl<R: Read> Hashed<R> {
    fn take(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.hash.update(buf);
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut a = [0u8; N];
        self.take(&mut a)?;
        Ok(a)
    }
}

impl<W: Write> Hashed<W> {
    fn put(&mut self, buf: &[u8]) -> io::Result<()> {
        self.hash.update(buf);
        self.inner.write_all(buf)
    }
}

/// A side: its bytes, the number of far values, then each as slot (8 bytes) and value (2).
fn write_side<W: Write>(out: &mut Hashed<W>, side: &CompactSide) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    for codes in side.codes().chunks(CHUNK) {
        for (b, c) in buf.iter_mut().zip(codes) {
            *b = c.load(Relaxed);
        }
        out.put(&buf[..codes.len()])?;
    }
    out.put(&(side.far().len() as u64).to_le_bytes())?;
    for &(idx, v) in side.far() {
        out.put(&idx.to_le_bytes())?;
        out.put(&v.0.to_le_bytes())?;
    }
    Ok(())
}

fn read_side<R: Read>(input: &mut Hashed<R>, slots: u64) -> io::Result<CompactSide> {
    let mut codes: Vec<AtomicU8> = Vec::with_capacity(slots as usize);
    let mut buf = vec![0u8; CHUNK];
    while (codes.len() as u64) < slots {
        let n = CHUNK.min((slots - codes.len() as u64) as usize);
        input.take(&mut buf[..n])?;
        codes.extend(buf[..n].iter().map(|&b| AtomicU8::new(b)));
    }
    let count = u64::from_le_bytes(input.array()?);
    if count > slots {
        return Err(io::ErrorKind::InvalidData.into());
    }
    let mut far = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let idx = u64::from_le_bytes(input.array()?);
        let v = Value(u16::from_le_bytes(input.array()?));
        far.push((idx, v));
    }
    Ok(CompactSide::from_parts(codes, far))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::checksum::xxh64;

    /// A file's hash read a chunk at a time is the hash of its bytes (the stamp of a state
    /// saved by one build of the program must match another's).
    #[test]
    fn a_file_hash_read_in_chunks_is_the_hash_of_its_bytes() {
        let path = std::env::temp_dir().join(format!("antitb-file-hash-{}", std::process::id()));
        let bytes: Vec<u8> = (0..3 * CHUNK + 12_345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        let hash = file_hash(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(hash, xxh64(&bytes, 0));
    }
}
