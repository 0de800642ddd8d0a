//! `antitb::verify` and `antitb verify`: every ≤3-piece table (WDL, DTZ, DTW) is consistent;
//! one changed value in a re-checksummed copy is reported at exactly that position; a corrupted
//! block is a checksum error; the known results of tests/data/known.csv hold; bad input gives a
//! one-line error. With the cargo feature `syzygy`, the ≤3-piece tables are also compared with
//! de Man's Syzygy tables in ../shared/reference/syzygy.
//!
//! The tables are generated once per test process with the library build driver (this test is
//! not the verifier, so it may use the generator).

mod common;

use antitb::format::{FormatError, Region, TableFile, WriteOptions};
use antitb::store::file_name;
use antitb::table::{Index, Material, Metric, Value, Wdl};
use antitb::verify::{
    Check, Disagreement, Reading, Report, VerifyError, VerifyEvent, VerifyOptions, verify_tables,
};
use common::cli::{TempDir, antitb, remove_stale_dirs, temp_path, text};
use common::files::{build_into, up_to};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const TEMP_PREFIX: &str = "antitb-verify-";

/// Every table up to 3 pieces with WDL, DTZ and DTW files, built once per process. The
/// directory is left for the process's lifetime and removed by a later run.
fn tables3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        remove_stale_dirs(TEMP_PREFIX);
        let dir = temp_path(TEMP_PREFIX, "tb3");
        build_into(&dir, &up_to(3), &[], true);
        dir
    })
}

fn m(name: &str) -> Material {
    Material::parse(name).expect("material")
}

fn verify(dirs: &[&Path], materials: &[Material], fast: bool) -> Report {
    verify_held(dirs, materials, fast, false)
}

/// [`verify`], with every checked table held one byte a slot (`compact`, as tables too large
/// for 2-byte values are) or as small tables are.
fn verify_held(dirs: &[&Path], materials: &[Material], fast: bool, compact: bool) -> Report {
    let dirs: Vec<PathBuf> = dirs.iter().map(|d| d.to_path_buf()).collect();
    let opts = VerifyOptions {
        fast,
        max_reports: 0,
        compact_above: if compact { 0 } else { u64::MAX },
        ..VerifyOptions::default()
    };
    verify_tables(&dirs, materials, &opts, &|_| {}).expect("table directories readable")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn every_table_up_to_3_pieces_is_consistent() {
    let dir = tables3();
    let tables = up_to(3);
    let report = verify(&[dir], &tables, false);
    for t in &report.tables {
        assert!(
            t.is_ok(),
            "{}: {:?} {:?}",
            t.material,
            t.errors,
            t.shown.first()
        );
        assert_eq!(t.files.len(), 3, "{}: wdl, dtz and dtw files", t.material);
        assert!(t.positions > 0, "{}", t.material);
    }
    assert_eq!(report.tables.len(), 147);
    // Stored (quiet) positions of the 147 tables, both sides to move.
    println!(
        "{} positions checked in {:.1} s",
        report.positions(),
        report.time.as_secs_f64()
    );
    assert!(report.positions() > 8_000_000, "{}", report.positions());

    // Held one byte a slot, the `.wdl` files read section by section: the same positions.
    let compact = verify_held(&[dir], &tables, false, true);
    for (t, full) in compact.tables.iter().zip(&report.tables) {
        assert!(
            t.is_ok(),
            "{} compact: {:?} {:?}",
            t.material,
            t.errors,
            t.shown.first()
        );
        assert_eq!(t.positions, full.positions, "{}", t.material);
    }

    let fast = verify(&[dir], &tables, true);
    assert!(fast.is_ok());
    assert_eq!((fast.positions(), fast.files()), (0, 3 * 147));
}

/// A table checked alone reads its dependencies' `.dtw` files as stored, one side to move
/// left out, and the one-ply search of that side goes on through a promotion of a promotion
/// into tables of the checked table's size outside its view (KPvP: KQvP's left-out side, a
/// black pawn promoting to a knight, reaches KQvN). Those are read through the prober of the
/// same directories; without it these checks stopped with a false 'missing table' error.
/// (Checked together with the whole set, the dependencies come both sides filled from their
/// own checks, and the search never runs.)
#[test]
fn a_table_checked_alone_reads_what_promotions_of_promotions_reach() {
    let dir = tables3();
    for t in ["KPvP", "NPvP", "PPvP", "QPvP"] {
        let report = verify(&[dir], &[m(t)], false);
        let r = &report.tables[0];
        assert!(r.is_ok(), "{t}: {:?} {:?}", r.errors, r.shown.first());
        assert!(r.positions > 0, "{t}");
    }
}

/// Raw symbols of a file, per side to move (`None`: a side a `.dtz` file does not store).
/// The index a file's slots are in (its header names the order of the rest groups).
fn file_index(f: &TableFile) -> Index {
    let m = Material::parse(&f.meta().material).expect("material");
    Index::from_params(m, &f.meta().index_params).expect("an index of this version")
}

fn raw_sections(path: &Path) -> (TableFile, [Option<Vec<u16>>; 2]) {
    let f = TableFile::open(path).expect("open table");
    let mask = match f.meta().metric {
        antitb::table::Metric::Wdl => 3,
        _ => f.meta().encoding[0],
    };
    let mut next = 0;
    let secs = [0, 1].map(|side| {
        (mask >> side & 1 != 0).then(|| {
            next += 1;
            f.decode_section(next - 1).expect("decode")
        })
    });
    (f, secs)
}

/// Write `secs` with the metadata and value width of `original` to `path` (fresh checksums).
fn rewrite(original: &TableFile, secs: &[Option<Vec<u16>>; 2], path: &Path) {
    let stored: Vec<&[u16]> = secs.iter().flatten().map(|v| v.as_slice()).collect();
    common::files::write_like(original, &stored, path, &WriteOptions::default());
}

/// The distances of a DTZ/DTW file's symbols.
fn distance_map(f: &TableFile) -> Vec<u16> {
    f.meta().encoding[1..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// The first stored (quiet) slot of `material` on a side `secs` holds for which
/// `pick(side, slot)` holds.
fn find_slot(
    index: &Index,
    secs: &[Option<Vec<u16>>; 2],
    pick: impl Fn(usize, usize) -> bool,
) -> (usize, u64) {
    for (side, sec) in secs.iter().enumerate() {
        if sec.is_none() {
            continue;
        }
        for idx in 0..index.size() {
            if let Some(pos) = index.decode(side, idx)
                && !pos.has_capture()
                && pick(side, idx as usize)
            {
                return (side, idx);
            }
        }
    }
    panic!("no such slot in {}", index.material());
}

/// Does `pos` reach slot `(side, idx)` of `index` by one or two non-zeroing moves?
fn reaches(index: &Index, pos: &antitb::rules::Position, side: usize, idx: u64) -> bool {
    pos.legal_moves()
        .iter()
        .filter(|m| !m.is_zeroing())
        .any(|m| {
            let c = pos.after(m);
            index.encode(&c) == Some((side, idx))
                || c.legal_moves()
                    .iter()
                    .filter(|m| !m.is_zeroing())
                    .any(|m| index.encode(&c.after(m)) == Some((side, idx)))
        })
}

#[test]
fn a_changed_wdl_value_is_reported_at_exactly_that_position() {
    let dir = tables3();
    let mutated = TempDir::new(TEMP_PREFIX, "wdl");
    let krvk = m("KRvK");
    let name = file_name(krvk, Metric::Wdl);
    let (f, mut secs) = raw_sections(&dir.join(&name));
    let index = file_index(&f);
    // A plain win (stored WDL + 2 = 4) becomes a draw.
    let (side, idx) = find_slot(&index, &secs, |s, i| secs[s].as_ref().unwrap()[i] == 4);
    secs[side].as_mut().unwrap()[idx as usize] = 2;
    rewrite(&f, &secs, &mutated.0.join(&name));

    // The mutated directory comes first, so its KRvK.wdl is the one read. Held either way.
    let report = verify_held(&[&mutated.0, dir], &[krvk], false, true);
    wdl_change_reported(&index, side, idx, &report);
    let report = verify(&[&mutated.0, dir], &[krvk], false);
    let d = wdl_change_reported(&index, side, idx, &report);
    let t = &report.tables[0];

    // The command line names the position with both values and fails.
    let out = antitb(&[
        "verify",
        "KRvK",
        "--tables",
        s(&mutated.0),
        "--tables",
        s(dir),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let line = format!(
        "disagreement: KRvK {}: wdl stored +0, derived +2",
        d.position
    );
    assert!(stdout.contains(&line), "{stdout}");
    assert!(
        stdout.contains(&format!("{} disagreements", t.disagreements)),
        "{stdout}"
    );
}

/// The reports of a check of KRvK with the WDL of slot `(side, idx)` changed from a win to a
/// draw ([`a_changed_wdl_value_is_reported_at_exactly_that_position`]); the report at that
/// slot.
fn wdl_change_reported(index: &Index, side: usize, idx: u64, report: &Report) -> Disagreement {
    let t = &report.tables[0];
    assert!(
        t.errors.is_empty(),
        "checksums were recomputed: {:?}",
        t.errors
    );
    // At that position: the WDL against the one its successors derive, and the DTZ and DTW,
    // which take their class from the WDL, now draws against the wins derived. Any other
    // report is a position whose derivation read it (one or two quiet moves away).
    let at: Vec<(Check, Reading, Reading)> = t
        .shown
        .iter()
        .filter(|d| (d.side, d.index) == (side, idx))
        .map(|d| (d.check, d.stored, d.derived))
        .collect();
    assert_eq!(at.len(), 3, "{:?}", t.shown);
    assert_eq!(at[0], (Check::Dtz, Reading::Value(Value::DRAW), at[0].2));
    assert!(
        matches!(at[0].2, Reading::Value(v) if v.wdl() == Wdl::Win),
        "{at:?}"
    );
    assert_eq!(
        at[1],
        (Check::Wdl, Reading::Wdl(Wdl::Draw), Reading::Wdl(Wdl::Win))
    );
    assert!(
        matches!(at[2], (Check::Dtw, Reading::Value(Value::DRAW), Reading::Value(v)) if v.is_win()),
        "{at:?}"
    );
    for d in t.shown.iter().filter(|d| (d.side, d.index) != (side, idx)) {
        assert!(
            reaches(index, &d.position, side, idx),
            "unexpected report {d}"
        );
    }
    let d = t
        .shown
        .iter()
        .find(|d| (d.side, d.index) == (side, idx))
        .unwrap();
    assert_eq!(index.encode(&d.position), Some((side, idx)));
    d.clone()
}

/// Change one stored DTZ or DTW distance of a KRvK win to another: that position is reported
/// with both values; any other report is a position whose derivation read the changed value
/// (one quiet move away; for DTZ two, through the side to move the file does not store, which
/// is derived from the stored side).
fn changed_distance_is_reported(kind: Metric, check: Check) {
    let dir = tables3();
    let mutated = TempDir::new(TEMP_PREFIX, kind.extension());
    let krvk = m("KRvK");
    let (_, wdl) = raw_sections(&dir.join(file_name(krvk, Metric::Wdl)));
    let name = file_name(krvk, kind);
    let (f, mut secs) = raw_sections(&dir.join(&name));
    let index = file_index(&f);
    let map = distance_map(&f);
    let ok = |d: u16| (3..=90).contains(&d);
    // A slot that stores its position's value: `.dtz` files leave the short values out, and
    // their slots hold a neighbour's distance, which nothing reads.
    let tb = antitb::probe::Tablebase::open(&[dir]).expect("open the tables");
    let (side, idx) = find_slot(&index, &secs, |s, i| {
        let d = map[secs[s].as_ref().unwrap()[i] as usize];
        let value = |pos: &antitb::rules::Position| match kind {
            Metric::Dtz => tb.probe_dtz(pos).expect("probe").value(),
            _ => tb.probe_dtw(pos).expect("probe").value(),
        };
        wdl[s].as_ref().unwrap()[i] == 4
            && ok(d)
            && index
                .decode(s, i as u64)
                .is_some_and(|pos| value(&pos) == Value::win(d))
    });
    let sym = &mut secs[side].as_mut().unwrap()[idx as usize];
    let old = Value::win(map[*sym as usize]);
    let new_sym = (0..map.len() as u16)
        .find(|&x| ok(map[x as usize]) && Value::win(map[x as usize]) != old)
        .expect("another win distance in the map");
    let new = Value::win(map[new_sym as usize]);
    *sym = new_sym;
    rewrite(&f, &secs, &mutated.0.join(&name));

    // Held one byte a slot (as tables too large for 2-byte values are) and as small tables are.
    for compact in [true, false] {
        let report = verify_held(&[&mutated.0, dir], &[krvk], false, compact);
        let t = &report.tables[0];
        assert!(t.errors.is_empty(), "{:?}", t.errors);
        let at: Vec<_> = t
            .shown
            .iter()
            .filter(|d| (d.side, d.index) == (side, idx))
            .collect();
        assert_eq!(at.len(), 1, "{:?}", t.shown);
        assert_eq!(
            (at[0].check, at[0].stored, at[0].derived),
            (check, Reading::Value(new), Reading::Value(old))
        );
        for d in t.shown.iter().filter(|d| (d.side, d.index) != (side, idx)) {
            assert!(
                reaches(&index, &d.position, side, idx),
                "unexpected report {d}"
            );
        }
        println!(
            "{kind:?}: {old:?} -> {new:?}: {} reports (compact: {compact})",
            t.disagreements
        );
    }
}

#[test]
fn a_changed_dtz_value_is_reported_with_both_values() {
    changed_distance_is_reported(Metric::Dtz, Check::Dtz);
}

#[test]
fn a_changed_dtw_value_is_reported_with_both_values() {
    changed_distance_is_reported(Metric::Dtw, Check::Dtw);
}

/// A copy of `name` from `src` in `dst` with one byte of block data flipped such that `accept`
/// holds for the error the format layer then reports; the last blocks are tried first.
fn corrupt_copy(src: &Path, dst: &Path, name: &str, accept: impl Fn(&FormatError) -> bool) {
    let original = std::fs::read(src.join(name)).expect("read");
    let path = dst.join(name);
    // The file ends with the block data, then an 8-byte checksum.
    let end = original.len() - 8;
    for at in (end.saturating_sub(8192)..end).rev() {
        let mut bytes = original.clone();
        bytes[at] ^= 0x01;
        std::fs::write(&path, &bytes).expect("write");
        if let Err(e) = TableFile::open(&path).and_then(|f| f.verify_checksums())
            && accept(&e)
        {
            return;
        }
    }
    panic!("no byte flip of {name} gives the wanted error");
}

/// Verify KRvK from `bad` (then the good tables): the file error, never a position check.
fn file_error(bad: &Path, fast: bool) -> String {
    let report = verify(&[bad, tables3()], &[m("KRvK")], fast);
    let t = &report.tables[0];
    assert!(!t.is_ok());
    assert_eq!(
        t.positions, 0,
        "a table with a bad file is not checked position by position"
    );
    assert!(
        matches!(t.errors[..], [VerifyError::Store(_)]),
        "{:?}",
        t.errors
    );
    t.errors[0].to_string()
}

#[test]
fn a_corrupted_block_is_a_checksum_error() {
    let dir = tables3();
    let bad = TempDir::new(TEMP_PREFIX, "corrupt");
    let name = file_name(m("KRvK"), Metric::Dtz);
    // A flip of block data: the block's (pairs: chunk's) checksum sees it.
    corrupt_copy(dir, &bad.0, &name, |e| {
        matches!(
            e,
            FormatError::BadChecksum {
                region: Region::Block(_),
                ..
            }
        )
    });
    for fast in [true, false] {
        let msg = file_error(&bad.0, fast);
        assert!(
            msg.contains("KRvK.dtz") && msg.contains("block") && msg.contains("checksum"),
            "{msg}"
        );
        println!("fast={fast}: {msg}");
    }
    let out = antitb(&[
        "verify",
        "--fast",
        "KRvK",
        "--tables",
        s(&bad.0),
        "--tables",
        s(dir),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("error: KRvK:") && stdout.contains("checksum"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("antitb: error:"))
            .count(),
        1,
        "{stderr}"
    );

    // A flip zstd itself rejects (in a `.dtw` file, the zstd codec) is a corrupt block, named
    // too. (In a pairs file every flip of block data is a checksum error: chunks are checked
    // before they are decoded.)
    std::fs::remove_file(bad.0.join(&name)).expect("remove");
    let dtw = file_name(m("KRvK"), Metric::Dtw);
    corrupt_copy(dir, &bad.0, &dtw, |e| {
        matches!(e, FormatError::Corrupt { block: Some(_), .. })
    });
    let msg = file_error(&bad.0, false);
    assert!(msg.contains("KRvK.dtw") && msg.contains("block"), "{msg}");
    std::fs::remove_file(bad.0.join(&dtw)).expect("remove");
    // A truncated file.
    let bytes = std::fs::read(dir.join(&name)).expect("read");
    std::fs::write(bad.0.join(&name), &bytes[..bytes.len() / 2]).expect("write");
    let msg = file_error(&bad.0, true);
    assert!(msg.contains("KRvK.dtz"), "{msg}");
}

/// A check of a table held compact, saved in a checkpoint directory and interrupted after its
/// first section, resumes there: its values are loaded, not built again, the finished section
/// is not checked again, and the report is the uninterrupted one. A damaged state is built
/// again; a checkpoint directory that cannot be written is a one-line error before any work.
#[test]
fn a_compact_check_resumes_from_its_checkpoint() {
    let dir = tables3();
    let table = m("KRvB");
    let full = verify_held(&[dir], &[table], false, true);
    let positions = full.tables[0].positions;
    assert!(full.is_ok() && positions > 0, "{:?}", full.tables[0].errors);

    let checkpoint = TempDir::new(TEMP_PREFIX, "checkpoint");
    let opts = VerifyOptions {
        max_reports: 0,
        compact_above: 0,
        checkpoint: Some(checkpoint.0.clone()),
        ..VerifyOptions::default()
    };
    let dirs = [dir.to_path_buf()];
    let state = checkpoint.0.join("KRvB.verify-state");
    let done = checkpoint.0.join("KRvB.verify-done");
    // Interrupted: a panic at each section's progress event (rayon goes on with the other
    // sections, then passes the panic on), and the done list cut back to its first section,
    // as a kill after that section leaves it.
    let interrupt = || {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            verify_tables(&dirs, &[table], &opts, &|ev| {
                if matches!(ev, VerifyEvent::Progress { .. }) {
                    panic!("interrupted");
                }
            })
        }));
        assert!(run.is_err(), "the check was interrupted");
        assert!(state.exists(), "the values were saved");
        let list = std::fs::read_to_string(&done).expect("done list");
        // The stamp, then both sides' one section.
        assert_eq!(list.lines().count(), 3, "{list}");
        let first: Vec<&str> = list.lines().take(2).collect();
        std::fs::write(&done, first.join("\n") + "\n").expect("write");
    };
    let resume = || {
        let resumed = std::sync::Mutex::new(Vec::new());
        let report = verify_tables(&dirs, &[table], &opts, &|ev| {
            if let VerifyEvent::Resumed { values, slots, .. } = ev {
                resumed.lock().unwrap().push((*values, *slots));
            }
        })
        .expect("readable");
        let t = &report.tables[0];
        assert!(t.is_ok(), "{:?} {:?}", t.errors, t.shown.first());
        assert_eq!(t.positions, positions);
        assert!(!state.exists() && !done.exists(), "removed once complete");
        let events = resumed.into_inner().unwrap();
        // The report counts the positions the earlier run checked apart.
        match events[..] {
            [] => assert_eq!(t.resumed, 0),
            _ => assert!(t.resumed > 0 && t.resumed < t.positions, "{}", t.resumed),
        }
        events
    };

    interrupt();
    let size = Index::new(table).size();
    let resumed = resume();
    assert!(
        matches!(resumed[..], [(true, slots)] if slots > 0 && slots < 2 * size),
        "{resumed:?}"
    );

    // A damaged state is not used: the values are built again (and the done list, which
    // belongs to the state they were saved with, goes).
    interrupt();
    let mut bytes = std::fs::read(&state).expect("state");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&state, &bytes).expect("write");
    assert_eq!(resume(), []);

    // A checkpoint directory under a file cannot be made: one line, nothing checked.
    let blocked = VerifyOptions {
        checkpoint: Some(checkpoint.0.join("file").join("sub")),
        ..opts.clone()
    };
    std::fs::write(checkpoint.0.join("file"), b"").expect("write");
    let report = verify_tables(&dirs, &[table], &blocked, &|_| {}).expect("readable");
    let t = &report.tables[0];
    assert_eq!(t.positions, 0);
    assert!(
        matches!(t.errors[..], [VerifyError::Checkpoint(..)]),
        "{:?}",
        t.errors
    );
    let msg = t.errors[0].to_string();
    assert!(
        msg.starts_with("cannot write checkpoint") && !msg.contains('\n'),
        "{msg}"
    );
}

#[test]
fn known_results_hold() {
    let dir = tables3();
    // One row has 4 pieces (KKPvK): build its closure next to the ≤3-piece tables.
    let four = TempDir::new(TEMP_PREFIX, "known");
    build_into(&four.0, &[m("KKPvK")], &[dir.to_path_buf()], false);
    let csv = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/known.csv");
    let out = antitb(&[
        "verify",
        "--known",
        csv,
        "--tables",
        s(dir),
        "--tables",
        s(&four.0),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("known: 6 rows") && stdout.contains("0 mismatches, 0 errors: OK"),
        "{stdout}"
    );

    // The 4-piece table itself is consistent too.
    let report = verify(&[&four.0, dir], &[m("KKPvK")], false);
    assert!(report.is_ok(), "{:?}", report.tables[0].shown.first());

    // A wrong row is printed with both values; a row whose table is missing is an error.
    let wrong = TempDir::new(TEMP_PREFIX, "csv");
    let path = wrong.0.join("wrong.csv");
    std::fs::write(
        &path,
        "fen,wdl,dtz,dtw\n8/8/8/3K4/8/8/8/5r2 b - - 0 1,2,30,none\n8/8/8/8/8/8/8/KQRB1k2 w - - 0 1,2,1\n",
    )
    .expect("write csv");
    let out = antitb(&["verify", "--known", s(&path), "--tables", s(dir)]);
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("line 2: 8/8/8/3K4/8/8/8/5r2 b - - 0 1: expected wdl +2 dtz +30 dtw none, tables say wdl +2 dtz +32 dtw +"), "{stdout}");
    assert!(
        stdout.contains("known error:") && stdout.contains(":3:"),
        "{stdout}"
    );
}

#[test]
fn the_command_line_checks_and_summarises() {
    let dir = tables3();
    let out = antitb(&["verify", "--max-pieces", "2", "--tables", s(dir)]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(
        summary.starts_with("verify: 21 tables, 63 files")
            && summary.contains("positions/s")
            && summary.ends_with("0 disagreements, 0 errors: OK"),
        "{summary}"
    );

    let out = antitb(&[
        "verify",
        "KvK",
        "KQvK",
        "--fast",
        "--json",
        "--tables",
        s(dir),
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["ok"], true);
    assert_eq!(v["tables"]["files"], 6);
    assert_eq!(v["tables"]["positions"], 0);
}

#[test]
fn bad_input_is_one_line_and_a_failure() {
    let dir = tables3();
    let missing = temp_path(TEMP_PREFIX, "nonexistent");
    let empty = TempDir::new(TEMP_PREFIX, "empty");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["verify", "--tables", s(&missing)],
            "cannot read table directory",
        ),
        (
            vec!["verify", "KXvK", "--tables", s(dir)],
            "unknown piece letter",
        ),
        (
            vec!["verify", "--max-pieces", "9", "--tables", s(dir)],
            "--max-pieces",
        ),
        (vec!["verify", "--tables", s(&empty.0)], "no table files"),
        (
            vec!["verify", "--known", s(&missing), "--tables", s(dir)],
            "nonexistent",
        ),
        (
            vec!["verify", "--syzygy", s(&missing), "--tables", s(dir)],
            "yzygy",
        ),
    ];
    for (args, needle) in cases {
        let out = antitb(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("antitb: error:") && stderr.contains(needle),
            "{args:?}: {stderr}"
        );
    }
    // A requested table whose files are missing is reported and fails.
    let out = antitb(&["verify", "KQvK", "--tables", s(&empty.0)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains("error: KQvK: missing table KQvK (no file KQvK.wdl"),
        "{}",
        text(&out.stdout)
    );
}

#[cfg(feature = "syzygy")]
#[test]
fn tables_up_to_3_pieces_agree_with_syzygy() {
    use antitb::verify::syzygy::{DtzClass, SyzygyOptions, compare_syzygy};
    let reference = match std::env::var_os("ANTITB_SYZYGY_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/syzygy"),
    };
    if !reference.is_dir() {
        println!(
            "skipped: Syzygy reference tables not found at {}",
            reference.display()
        );
        return;
    }
    let dir = tables3();
    let report = compare_syzygy(
        &[dir.to_path_buf()],
        &reference,
        &up_to(3),
        &SyzygyOptions::default(),
        &|_| {},
    )
    .expect("directories readable");
    let classes = report.classes();
    for t in &report.tables {
        assert!(t.is_ok(), "{}: {:?} {:?}", t.material, t.error, t.examples);
    }
    println!(
        "{} positions compared in {:.1} s",
        report.positions(),
        report.time.as_secs_f64()
    );
    for c in DtzClass::ALL {
        println!("  {c:<15} {}", classes[c as usize]);
    }
    assert_eq!(report.wdl_mismatches(), 0);
    assert_eq!(classes[DtzClass::Mismatch as usize], 0);
    // Every valid slot of every table, both sides to move.
    assert!(report.positions() > 12_000_000, "{}", report.positions());
    assert!(classes[DtzClass::Exact as usize] > report.positions() * 9 / 10);
}
