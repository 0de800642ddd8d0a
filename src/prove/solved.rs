//! A store of solved positions on disk: the OR nodes searches proved, each with the move that
//! proved it, kept between runs so that a long search is built in several runs, resumes after a
//! kill, and serves other lines that reach the same positions.
//!
//! Only proofs are kept. A proof never rests on a repetition (the search counts a repetition as a
//! failure for the prover), so it holds whatever the path to its position; a disproof may rest on
//! one and is not kept (the graph-history interaction). Nothing read from the store is trusted:
//! a search takes its records as proved entries of its transposition table, and a win is still
//! answered only with an extracted proof (`extract.rs`), which re-plays every move and searches
//! again where a record leads nowhere, and which the checker re-verifies. A damaged or stale
//! record costs time, never a wrong answer.
//!
//! The records are those of the table's proving moves ([`Tt::proved_moves`]): a key (the position's
//! Zobrist key mixed with the prover's word, as the table keys it), the move's number in the move
//! generator's order, and the work below the node (saturated at 65535), which decides what a
//! full table keeps. Saving merges the table's records into the file's (for a key in both, the
//! one with more work), so a run adds to what earlier runs and other lines stored.
//!
//! # File format (`.atbs`)
//! | bytes | contents |
//! |---|---|
//! | 8 | magic `ATBSOLVD` |
//! | 4 | version, little-endian u32 (1); a change of the move generator's order changes it |
//! | 8 | record count, little-endian u64 |
//! | rest | one zstd frame (with its content checksum) of the records, sorted by key, each key unique: key u64, move u16, work u16, little-endian (12 bytes) |
//!
//! Written to a temporary name and renamed, so a kill while saving leaves the previous file.

use super::proof::write_replacing;
use super::tt::Tt;
use std::io::{self, Read, Write};
use std::path::Path;

/// The first bytes of a store's file.
pub const MAGIC: &[u8; 8] = b"ATBSOLVD";
const VERSION: u32 = 1;
const HEADER: usize = 20;
const RECORD: usize = 12;

/// One solved position: (table key, move number, work).
pub type Record = (u64, u16, u16);

/// The records of the store at `path`, sorted by key; none if there is no file.
pub fn read(path: &Path) -> Result<Vec<Record>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The records of a store's bytes (a whole file), sorted by key, or why they do not read.
pub fn parse(bytes: &[u8]) -> Result<Vec<Record>, String> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("not a store of solved positions (no ATBSOLVD header)".to_string());
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!(
            "store of solved positions version {version}, this build reads version {VERSION}"
        ));
    }
    let count = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let size = usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(RECORD))
        .filter(|&s| s as u64 <= 64 * bytes.len() as u64 + 1024)
        .ok_or_else(|| format!("record count {count} does not fit the file"))?;
    let mut raw = Vec::with_capacity(size);
    let mut dec = zstd::stream::read::Decoder::new(&bytes[HEADER..])
        .map_err(|e| format!("cannot decompress: {e}"))?
        .single_frame();
    (&mut dec)
        .take(size as u64 + 1)
        .read_to_end(&mut raw)
        .map_err(|e| format!("damaged records: {e}"))?;
    if raw.len() != size {
        return Err(format!(
            "{} bytes of records where the header says {count} records",
            raw.len()
        ));
    }
    let records: Vec<Record> = raw
        .chunks_exact(RECORD)
        .map(|r| {
            (
                u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
                u16::from_le_bytes([r[8], r[9]]),
                u16::from_le_bytes([r[10], r[11]]),
            )
        })
        .collect();
    if records.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err("records out of order".to_string());
    }
    Ok(records)
}

/// Write `records` (sorted by key, each key once) to `path`, replacing it whole.
fn write(path: &Path, records: &[Record]) -> io::Result<()> {
    write_replacing(path, &mut |w: &mut dyn Write| {
        w.write_all(MAGIC)?;
        w.write_all(&VERSION.to_le_bytes())?;
        w.write_all(&(records.len() as u64).to_le_bytes())?;
        let mut z = zstd::stream::write::Encoder::new(w, 3)?;
        z.include_checksum(true)?;
        z.set_pledged_src_size(Some((records.len() * RECORD) as u64))?;
        for &(key, best, work) in records {
            z.write_all(&key.to_le_bytes())?;
            z.write_all(&best.to_le_bytes())?;
            z.write_all(&work.to_le_bytes())?;
        }
        z.finish()?;
        Ok(())
    })
}

/// The union of two key-sorted record lists: for a key in both, the record with more work.
fn merge(a: &[Record], b: &[Record]) -> Vec<Record> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(if b[j].2 > a[i].2 { b[j] } else { a[i] });
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Load the store at `path` into `tt` (as thread `lane`); the number of records read.
pub fn load(path: &Path, tt: &Tt, lane: usize) -> Result<usize, String> {
    let records = read(path)?;
    for &(key, best, work) in &records {
        tt.load_proved(key, best, work, lane);
    }
    Ok(records.len())
}

/// Merge `tt`'s proving moves into the store at `path`; the number of records it then holds. A
/// file that cannot be read (damaged, another version) is replaced by the table's records.
pub fn save(path: &Path, tt: &Tt) -> Result<usize, String> {
    let mut mine: Vec<Record> = tt.proved_moves().collect();
    mine.sort_unstable();
    mine.dedup_by_key(|r| r.0);
    let old = read(path).unwrap_or_default();
    let all = merge(&old, &mine);
    write(path, &all).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(all.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("antitb-solved-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("solved.atbs")
    }

    #[test]
    fn saved_records_load_into_another_table_and_merge() {
        let path = scratch("merge");
        assert_eq!(read(&path).unwrap(), vec![]);
        let a = Tt::with_bytes(1 << 16, 1).unwrap();
        a.record_proof(10, 1, 100);
        a.record_proof(20, 2, 200);
        assert_eq!(save(&path, &a).unwrap(), 2);
        let b = Tt::with_bytes(1 << 16, 1).unwrap();
        assert_eq!(load(&path, &b, 0).unwrap(), 2);
        assert_eq!(b.proved_move(20), Some(2));
        assert_eq!(b.get(10).map(|e| (e.pn, e.best)), Some((0, 1)));
        // A second table adds its own and, for a key in both, the record with more work wins.
        let c = Tt::with_bytes(1 << 16, 1).unwrap();
        c.record_proof(20, 5, 500);
        c.record_proof(30, 3, 1);
        assert_eq!(save(&path, &c).unwrap(), 3);
        assert_eq!(
            read(&path).unwrap(),
            vec![(10, 1, 100), (20, 5, 500), (30, 3, 1)]
        );
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn damaged_files_are_refused_in_one_line() {
        let path = scratch("damaged");
        let t = Tt::with_bytes(1 << 16, 1).unwrap();
        for k in 1..=50u64 {
            t.record_proof(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), k as u16, 7);
        }
        let n = save(&path, &t).unwrap();
        let good = std::fs::read(&path).unwrap();
        assert_eq!(parse(&good).unwrap().len(), n);
        // Every truncation and every flipped byte is refused (the header, the frame's checksum,
        // the count, the order), in one line.
        for len in 0..good.len() {
            let e = parse(&good[..len]).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            let e = parse(&bad).expect_err(&format!("byte {i} flipped was accepted"));
            assert!(!e.contains('\n'), "{e}");
        }
        let mut other = good.clone();
        other[8] = 9;
        assert!(parse(&other).unwrap_err().contains("version 9"));
        // A damaged file is replaced by the table's records when saving.
        std::fs::write(&path, b"junk").unwrap();
        assert!(read(&path).is_err());
        assert_eq!(save(&path, &t).unwrap(), n);
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
