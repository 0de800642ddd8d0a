//! The side to move a `.dtw` file leaves out, kept beside it for the rest of a build run.
//!
//! A `.dtw` file stores one side to move; the other is one ply of search away
//! ([`crate::table::dtw_by_search`]). A build with pawns reads the DTW of the positions its
//! promotions reach, and a build of any table the DTW of the positions its captures reach, so
//! a table built earlier in the same run is searched again, slot by slot, by every table that
//! reads it: QRNvP's DTW build searched 1.48 M slots of its five promotion targets (a seventh of
//! their left-out sides) at about 3 µs each, 44 % of the table's whole build (with side files
//! its build took 0.69x the CPU time; the README's whole command 0.96x). The run that
//! writes a `.dtw` file has the left-out side's exact values at hand, so it writes them to a
//! *side file* in a scratch directory of its own, which later builds of the run read instead of
//! searching ([`crate::build::DecodedTables`]), and removes the directory when it ends.
//!
//! A side file is an internal scratch file, not a table file: the magic `ATBSIDE` and a layout
//! byte; the XXH64 of the `.dtw` file it belongs to (its file checksum, the file's last 8
//! bytes), so that it is never read beside another build of that table; the slots a side and
//! the side to move (little-endian `u64`, `u8`); the material's name (a length byte, then
//! UTF-8); then one zstd frame, with its content checksum, of the side's value codes
//! ([`crate::table::Value::code`], little-endian `u16`, [`crate::table::NOT_STORED`] set on
//! positions with a capture, as [`TableValues::frame`] gives them). A reader that finds anything
//! amiss ignores the file and searches, as without one.

use crate::table::{FRAME, Material, NOT_STORED, TableValues, Value, Wdl};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The first bytes of a side file; the last is the layout's version.
const MAGIC: &[u8; 8] = b"ATBSIDE\x01";

/// The zstd level side files are written at: fast (a build writes and reads each once).
const LEVEL: i32 = 1;

/// Slots read at a time.
const CHUNK: usize = 1 << 16;

/// The side file of `material` in `dir`.
pub fn path(dir: &Path, material: Material) -> PathBuf {
    dir.join(format!("{material}.dtw-side"))
}

/// Write side `side` of `table` (a DTW table whose `.dtw` file, of checksum `dtw_checksum`,
/// leaves that side out) to its side file in `dir`: to a temporary name, then renamed.
pub fn write<T: TableValues + ?Sized>(
    dir: &Path,
    table: &T,
    side: usize,
    dtw_checksum: u64,
) -> io::Result<()> {
    let material = table.index().material();
    let target = path(dir, material);
    let tmp = target.with_extension("dtw-side.tmp");
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        out.write_all(MAGIC)?;
        out.write_all(&dtw_checksum.to_le_bytes())?;
        out.write_all(&table.index().size().to_le_bytes())?;
        let name = material.to_string();
        out.write_all(&[side as u8, name.len() as u8])?;
        out.write_all(name.as_bytes())?;
        let mut z = zstd::stream::write::Encoder::new(out, LEVEL)?;
        z.include_checksum(true)?;
        let (mut codes, mut bytes) = (Vec::new(), Vec::new());
        let frames = table.index().size().div_ceil(FRAME) as usize;
        for f in 0..frames {
            table
                .frame(side, f, &mut codes)
                .map_err(|e| io::Error::other(e.to_string()))?;
            bytes.clear();
            bytes.extend(codes.iter().flat_map(|c| c.to_le_bytes()));
            z.write_all(&bytes)?;
        }
        z.finish()?.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The value codes of side `side` of `material` (`slots` slots a side) that the side file in
/// `dir` holds for the `.dtw` file of checksum `dtw_checksum`, each in the form
/// [`crate::store::StoredTable::decode_value_codes`] gives a stored side: with `wdl` (the side's
/// `.wdl` symbols) the DTW win or loss of a quiet decisive position, a draw elsewhere (a slot
/// whose position can capture keeps no value, as [`crate::table::NOT_STORED`] says). `None` if
/// there is no such file, or it belongs to another build of the table, or it is damaged, or a
/// value disagrees with its class.
pub fn read(
    dir: &Path,
    material: Material,
    side: usize,
    dtw_checksum: u64,
    wdl: &[u8],
) -> Option<Vec<u16>> {
    let slots = wdl.len();
    let mut input = BufReader::new(File::open(path(dir, material)).ok()?);
    let mut head = [0u8; 26];
    input.read_exact(&mut head).ok()?;
    let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    if &head[..8] != MAGIC
        || u64_at(8) != dtw_checksum
        || u64_at(16) != slots as u64
        || usize::from(head[24]) != side
    {
        return None;
    }
    let mut name = vec![0u8; usize::from(head[25])];
    input.read_exact(&mut name).ok()?;
    if name != material.to_string().as_bytes() {
        return None;
    }
    // Decoded a piece at a time: no second copy of the side beside the codes returned.
    let mut z = zstd::stream::read::Decoder::with_buffer(input).ok()?;
    let draw = Value::DRAW.code();
    let mut out = Vec::with_capacity(slots);
    let mut bytes = vec![0u8; 2 * CHUNK];
    for symbols in wdl.chunks(CHUNK) {
        let bytes = &mut bytes[..2 * symbols.len()];
        z.read_exact(bytes).ok()?;
        for (pair, &symbol) in bytes.chunks_exact(2).zip(symbols) {
            let code = u16::from_le_bytes([pair[0], pair[1]]);
            out.push(match super::wdl_of_symbol(u16::from(symbol)) {
                None | Some(Wdl::Draw) => draw,
                // Not a quiet position (the `.wdl` symbol is a filler): nothing reads the code.
                Some(_) if code & NOT_STORED != 0 || code == Value::INVALID.code() => draw,
                Some(w) => {
                    let v = Value::from_code(code)?;
                    if v.is_draw() || v.is_win() != w.is_win() {
                        return None;
                    }
                    code
                }
            });
        }
    }
    // Nothing after the side's values, and the frame's checksum holds.
    if z.read(&mut [0u8; 1]).ok()? != 0 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{Index, Metric, Table};

    /// KQvK with every kind of slot: wins and losses at scrambled distances, draws, positions
    /// with a capture (`NOT_STORED`) and, at every 97th slot, one whose `.wdl` symbol is a filler
    /// (5); and the `.wdl` symbols of side 1 to go with it.
    fn fixture() -> (Table, Vec<u8>) {
        let index = Index::new(Material::parse("KQvK").unwrap());
        let size = index.size();
        let value = |i: u64| match i % 4 {
            0 => Value::win(1 + (i * 7919 % 300) as u16),
            1 => Value::loss(1 + (i * 104_729 % 200) as u16),
            2 => Value::DRAW,
            _ => Value::win(3),
        };
        let capture = |i: u64| i % 4 == 3;
        let codes: Vec<u16> = (0..size).map(|i| value(i).code()).collect();
        let mut quiet = vec![0u64; size.div_ceil(64) as usize];
        for i in (0..size).filter(|&i| !capture(i)) {
            quiet[(i / 64) as usize] |= 1 << (i % 64);
        }
        let wdl = (0..size)
            .map(|i| match i {
                _ if i % 97 == 0 => 5,
                // A position with a capture: the file repeats a symbol there (a filler).
                _ if capture(i) => 0,
                _ => (value(i).wdl().to_i8() + 2) as u8,
            })
            .collect();
        let table = Table {
            index,
            metric: Metric::Dtw,
            values: [codes.clone(), codes],
            quiet: [quiet.clone(), quiet],
        };
        (table, wdl)
    }

    fn scratch(case: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("antitb-sides-{}-{case}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_side_file_reads_back_as_a_stored_side() {
        let (table, wdl) = fixture();
        let m = table.material();
        let dir = scratch("back");
        write(&dir, &table, 1, 0xfeed).unwrap();
        let got = read(&dir, m, 1, 0xfeed, &wdl).expect("the side file is read");
        for (i, (&g, &s)) in got.iter().zip(&wdl).enumerate() {
            let i = i as u64;
            let want = if s == 5 || i % 4 >= 2 {
                Value::DRAW
            } else {
                Value(table.values[1][i as usize])
            };
            assert_eq!(Value(g), want, "slot {i}");
        }
        // Another build of the table, the other side, another material, a different size.
        assert!(read(&dir, m, 1, 0xbeef, &wdl).is_none());
        assert!(read(&dir, m, 0, 0xfeed, &wdl).is_none());
        let other = Material::parse("KRvK").unwrap();
        std::fs::copy(path(&dir, m), path(&dir, other)).unwrap();
        assert!(read(&dir, other, 1, 0xfeed, &wdl).is_none());
        assert!(read(&dir, m, 1, 0xfeed, &wdl[1..]).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_damaged_or_disagreeing_side_file_is_ignored() {
        let (table, wdl) = fixture();
        let m = table.material();
        let dir = scratch("damage");
        write(&dir, &table, 0, 7).unwrap();
        let file = path(&dir, m);
        let good = std::fs::read(&file).unwrap();
        // A flipped bit in the compressed values (the frame's checksum), a truncated file.
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x10;
        std::fs::write(&file, &bad).unwrap();
        assert!(read(&dir, m, 0, 7, &wdl).is_none());
        std::fs::write(&file, &good[..good.len() - 9]).unwrap();
        assert!(read(&dir, m, 0, 7, &wdl).is_none());
        // A win where the `.wdl` file says loss: a bug somewhere, never a value read.
        std::fs::write(&file, &good).unwrap();
        assert!(read(&dir, m, 0, 7, &wdl).is_some());
        let mut flipped = wdl.clone();
        let win = (0..flipped.len())
            .find(|&i| i % 4 == 0 && i % 97 != 0)
            .unwrap();
        flipped[win] = 0;
        assert!(read(&dir, m, 0, 7, &flipped).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
