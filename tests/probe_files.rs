//! Probing through the files: every ≤3-piece table is built into a temporary directory with
//! `antitb::build` and read back with [`Tablebase`].
//!
//! - Every valid slot of every ≤3-piece table, both sides to move and colour-swapped: the
//!   probed DTZ value (WDL class and exact distance) equals the generator's in-memory value, and
//!   `probe_wdl` equals that value's WDL.
//! - tests/data/known.csv through the files (its 4-piece row with the closure of its material).
//! - `rank_moves` obeys SPEC.md §5 and `best_line` plays an optimal line to the end of the game,
//!   on a few hundred random positions.
//! - The Syzygy comparison (tests/gen_vs_syzygy.rs) through the files: a sample of every
//!   ≤3-piece table and of the 4-piece tables above (skipped, saying so, without the reference).
//! - The generator's source of smaller tables (`DecodedTables`, whole tables decoded in
//!   memory) answers as the files read through their block caches, for WDL, DTZ and DTW.
//! - Errors: a missing table, too many pieces, a missing directory, a flipped byte in a block,
//!   a truncated file, a wrong magic, an older index scheme: an error naming the material or
//!   the file, never a panic.

mod common;

use antitb::r#gen::MemoryTables;
use antitb::probe::{ProbeError, RankBy, Tablebase};
use antitb::rules::Position;
use antitb::store::StoredTable;
use antitb::table::{Index, Material, Metric, Value, Wdl};
use common::cli::{TempDir, remove_stale_dirs, temp_path};
use common::files::{build_into, up_to};
use common::syzygy::{DtzTally, Reference, SKIPPED};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

const TEMP_PREFIX: &str = "antitb-probe-files-";

fn m(name: &str) -> Material {
    Material::parse(name).expect("material")
}

fn pos(fen: &str) -> Position {
    fen.parse().expect("FEN")
}

fn up_to_3() -> Vec<Material> {
    up_to(3)
}

/// Every table up to 3 pieces (WDL + DTZ files), built once per process. The directory lives as
/// long as the process and is removed by a later run.
fn tables3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        remove_stale_dirs(TEMP_PREFIX);
        let dir = temp_path(TEMP_PREFIX, "tb3");
        build_into(&dir, &up_to_3(), &[], false);
        dir
    })
}

/// The 4-piece row of known.csv needs KKPvK and the 4-piece tables it promotes into: built into
/// their own directory, with the ≤3-piece tables taken from [`tables3`].
fn tables4() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = tables3();
        let dir = temp_path(TEMP_PREFIX, "tb4");
        build_into(&dir, &[m("KKPvK")], &[base.to_path_buf()], false);
        dir
    })
}

/// The generator's in-memory ≤3-piece DTZ tables, generated once per process.
fn memory3() -> &'static MemoryTables {
    static MEM: OnceLock<MemoryTables> = OnceLock::new();
    MEM.get_or_init(|| {
        let mut mem = MemoryTables::new();
        mem.generate_up_to(3, Metric::Dtz)
            .expect("generate in memory");
        mem
    })
}

fn open(dirs: &[&Path]) -> Tablebase {
    Tablebase::open(dirs).expect("open table directories")
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random valid position of one of `materials` (either side to move).
fn random_position(rng: &mut Rng, materials: &[Material]) -> Position {
    loop {
        let mat = materials[rng.below(materials.len() as u64) as usize];
        let index = Index::new(mat);
        let side = rng.below(2) as usize;
        if let Some(p) = index.decode(side, rng.below(index.size())) {
            return p;
        }
    }
}

#[test]
fn every_slot_up_to_3_pieces_matches_memory() {
    let tb = open(&[tables3()]);
    let mem = memory3();
    const CHUNK: u64 = 1 << 13;
    let mut tasks = Vec::new();
    for mat in up_to_3() {
        let size = Index::new(mat).size();
        for side in 0..2 {
            for c in 0..size.div_ceil(CHUNK) {
                tasks.push((mat, side, c * CHUNK, ((c + 1) * CHUNK).min(size)));
            }
        }
    }
    let bad = Mutex::new(Vec::<String>::new());
    let counts: (u64, u64) = tasks
        .par_iter()
        .map(|&(mat, side, from, to)| {
            let index = Index::new(mat);
            let report = |what: String| {
                let mut b = bad.lock().unwrap();
                if b.len() < 20 {
                    b.push(what);
                }
            };
            let (mut n, mut decisive) = (0u64, 0u64);
            for idx in from..to {
                let Some(p) = index.decode(side, idx) else {
                    continue;
                };
                n += 1;
                let want = mem.probe(&p, Metric::Dtz).expect("memory probe");
                if !want.is_draw() {
                    decisive += 1;
                }
                for (what, q) in [("", p), (" (colour-swapped)", p.swap_colors())] {
                    match tb.probe_dtz(&q) {
                        Ok(v) if v.value() == want => {}
                        Ok(v) => {
                            report(format!("{mat} {q}{what}: file DTZ {v:?}, memory {want:?}"))
                        }
                        Err(e) => report(format!("{mat} {q}{what}: DTZ probe failed: {e}")),
                    }
                    match tb.probe_wdl(&q) {
                        Ok(w) if w == want.wdl() => {}
                        Ok(w) => report(format!(
                            "{mat} {q}{what}: file WDL {w:?}, memory {want:?} (WDL {:?})",
                            want.wdl()
                        )),
                        Err(e) => report(format!("{mat} {q}{what}: WDL probe failed: {e}")),
                    }
                }
            }
            (n, decisive)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let bad = bad.into_inner().unwrap();
    assert!(
        bad.is_empty(),
        "files and memory disagree:\n{}",
        bad.join("\n")
    );
    println!(
        "{} tables, {} positions (both sides, each also colour-swapped), {} decisive: files = memory",
        up_to_3().len(),
        counts.0,
        counts.1
    );
    // 2-piece tables alone have over 4 000 valid positions per side.
    assert!(
        counts.0 > 1_000_000 && counts.1 > 0,
        "too few positions: {counts:?}"
    );
}

/// `.dtz` files leave the short values out (`W(0)`, `W(1)`, `W(2)`, `L(1)`: their slots read
/// as a neighbour's distance) and the prober finds them by at most two plies of search: the
/// test above checks the values; this one checks, slot by slot against the memory tables, that
/// every other decisive value is stored exactly and that the search is really needed.
/// The generator's source of smaller tables answers as the files do, for every metric it
/// reads: through whole decoded tables (WDL classes at one byte a slot for WDL and DTZ,
/// value codes for DTW) and through the files' block caches, two independent read paths.
#[test]
fn decoded_sources_answer_as_the_files() {
    use antitb::build::DecodedTables;
    use antitb::r#gen::TableSource;
    let dtw_dir = TempDir::new(TEMP_PREFIX, "dtw");
    let dtw_targets = [m("KPvK"), m("NvP"), m("BBvK")];
    build_into(dtw_dir.path(), &dtw_targets, &[], true);
    let cases: [(&Path, Vec<Material>, Metric); 3] = [
        (tables3(), up_to_3(), Metric::Wdl),
        (tables3(), up_to_3(), Metric::Dtz),
        (dtw_dir.path(), dtw_targets.to_vec(), Metric::Dtw),
    ];
    for (dir, materials, metric) in cases {
        let tb = open(&[dir]);
        // The sampled tables decoded; the rest decoded as lookups reach them.
        let mut decoded = DecodedTables::new(&tb);
        decoded.preload(&materials, metric).expect("decode");
        // Every table read through its files, as those too large to decode are: a left-out
        // `.dtw` side is searched through this source, not the prober. A DTW build decodes
        // the classes of such tables (`outcomes`) where it may, else reads them slot by slot.
        let mut files = DecodedTables::files_only(&tb);
        files.preload(&materials, metric).expect("open");
        let mut per_read = DecodedTables::files_only(&tb).with_outcome_bytes(0);
        per_read.preload(&materials, metric).expect("open");
        // Each side reached decoded whole (WDL/DTZ; a DTW build's classes, with no outcomes),
        // as a WDL/DTZ build reads the tables its promotions reach.
        let mut sides = DecodedTables::files_only(&tb)
            .with_outcome_bytes(0)
            .with_side_bytes(u64::MAX);
        sides.preload(&materials, metric).expect("open");
        let mut rng = Rng(17);
        let mut checked = 0;
        while checked < 3000 {
            let p = random_position(&mut rng, &materials);
            if p.has_capture() || p.ep_square().is_some() {
                continue;
            }
            let want = tb.stored_value(&p, metric).expect("prober");
            let a = decoded.stored_value(&p, metric).expect("decoded source");
            assert_eq!(a, want, "decoded {metric:?} {p}");
            // Twice: the second lookup of a searched slot reads what the first kept.
            for _ in 0..2 {
                let b = files.stored_value(&p, metric).expect("files source");
                assert_eq!(b, want, "through the files {metric:?} {p}");
                let c = per_read.stored_value(&p, metric).expect("files source");
                assert_eq!(c, want, "through the files, classes read {metric:?} {p}");
                let d = sides.stored_value(&p, metric).expect("files source");
                assert_eq!(d, want, "through the files, sides decoded {metric:?} {p}");
            }
            // The class alone, as a DTW build's search reads it first.
            for source in [&files, &per_read, &sides] {
                let o = source.outcome(&p, metric).expect("files source");
                assert_eq!(o, want.outcome(), "class through the files {metric:?} {p}");
            }
            checked += 1;
        }
    }
}

#[test]
fn dtz_files_leave_short_values_out() {
    let mem = memory3();
    let short = [Value::win(0), Value::win(1), Value::win(2), Value::loss(1)];
    let (mut left_out, mut read_otherwise, mut stored) = ([0u64; 4], 0u64, 0u64);
    for mat in up_to_3() {
        let path = tables3().join(antitb::store::file_name(mat, Metric::Dtz));
        let t = StoredTable::open(&path, mat, Metric::Dtz, &Default::default()).expect("open");
        assert!(t.short_by_search(), "{mat}: short values stored");
        let index = &t.index;
        for side in (0..2).filter(|&s| t.stores_side(s)) {
            for idx in 0..index.size() {
                let Some(p) = index.decode(side, idx) else {
                    continue;
                };
                let want = mem.probe(&p, Metric::Dtz).expect("memory probe");
                if p.has_capture() || want.is_draw() {
                    continue;
                }
                let d = t.distance(side, idx).expect("read");
                if let Some(k) = short.iter().position(|&v| v == want) {
                    left_out[k] += 1;
                    read_otherwise += u64::from(d != want.distance());
                } else {
                    stored += 1;
                    let n = if matches!(want.wdl(), Wdl::CursedWin | Wdl::BlessedLoss) {
                        want.distance() - 100
                    } else {
                        want.distance()
                    };
                    assert_eq!(d, n, "{mat} {p}: stored distance of {want:?}");
                }
            }
        }
    }
    println!(
        "stored sides: W(0) W(1) W(2) L(1) left out {left_out:?}, {read_otherwise} of them \
         read as another distance; {stored} other decisive values stored exactly"
    );
    assert!(
        left_out.iter().all(|&n| n > 0) && read_otherwise > 1_000 && stored > 10_000,
        "{left_out:?} {read_otherwise} {stored}"
    );
}

#[test]
fn known_positions_through_the_files() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/known.csv");
    let text = std::fs::read_to_string(&path).expect("read tests/data/known.csv");
    let tb = open(&[tables3(), tables4()]);
    let mut rows = 0;
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let mut f = line.rsplitn(3, ',');
        let dtz: i32 = f.next().unwrap().trim().parse().expect("dtz column");
        let wdl: i8 = f.next().unwrap().trim().parse().expect("wdl column");
        let p = pos(f.next().expect("fen column"));
        let v = tb
            .probe_dtz(&p)
            .unwrap_or_else(|e| panic!("{p}: {e}"))
            .value();
        assert_eq!(
            (v.wdl().to_i8(), v.signed()),
            (wdl, dtz),
            "{p}: DTZ probe {v:?}"
        );
        assert_eq!(
            tb.probe_wdl(&p).expect("WDL probe").to_i8(),
            wdl,
            "{p}: WDL probe"
        );
        let swapped = p.swap_colors();
        assert_eq!(
            tb.probe_dtz(&swapped).expect("probe").value(),
            v,
            "{swapped} (colour-swapped {p})"
        );
        let full = tb.probe(&p).expect("probe");
        assert_eq!(
            (full.wdl.to_i8(), full.dtz.value(), full.dtw),
            (wdl, v, None),
            "{p}: probe()"
        );
        rows += 1;
    }
    assert!(rows >= 6, "known.csv has {rows} rows");
}

/// The score of `mv` for the mover from the probed child (SPEC.md §2).
fn score_from_child(tb: &Tablebase, p: &Position, mv: &antitb::rules::Move) -> Value {
    let child = tb.probe_dtz(&p.after(mv)).expect("probe child").value();
    if mv.is_zeroing() {
        Metric::Dtz.zeroing(child)
    } else {
        child.after_move()
    }
}

/// Is `a` allowed before `b` in a DTZ ranking (SPEC.md §5)?
fn ordered(a: Value, a_zeroing: bool, b: Value, b_zeroing: bool) -> bool {
    if a.wdl() != b.wdl() {
        return a.wdl() > b.wdl();
    }
    if a.is_win() {
        // Zeroing moves that keep the win first, then the shorter win.
        if a_zeroing != b_zeroing {
            return a_zeroing;
        }
        return a.distance() <= b.distance();
    }
    if a.is_loss() {
        return a.distance() >= b.distance();
    }
    true
}

/// Check the ranked moves of `p`; returns the number of moves.
fn check_ranking(tb: &Tablebase, mem: Option<&MemoryTables>, p: &Position) -> usize {
    let ranked = tb
        .rank_moves(p, RankBy::Dtz)
        .unwrap_or_else(|e| panic!("{p}: {e}"));
    let legal = p.legal_moves();
    assert_eq!(
        ranked.len(),
        legal.len(),
        "{p}: every legal move ranked once"
    );
    for mv in legal.iter() {
        assert!(
            ranked.iter().any(|r| r.mv == *mv),
            "{p}: {} not ranked",
            mv.uci()
        );
    }
    for r in &ranked {
        let want = score_from_child(tb, p, &r.mv);
        assert_eq!(
            r.dtz.value(),
            want,
            "{p}: {} scores {:?}, child gives {want:?}",
            r.mv.uci(),
            r.dtz
        );
        assert_eq!(r.dtw, None, "{p}: no DTW files, no DTW score");
        if let Some(mem) = mem {
            let child = mem
                .probe(&p.after(&r.mv), Metric::Dtz)
                .expect("memory probe");
            let want = if r.mv.is_zeroing() {
                Metric::Dtz.zeroing(child)
            } else {
                child.after_move()
            };
            assert_eq!(
                r.dtz.value(),
                want,
                "{p}: {} against the in-memory child",
                r.mv.uci()
            );
        }
    }
    for w in ranked.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            ordered(
                a.dtz.value(),
                a.mv.is_zeroing(),
                b.dtz.value(),
                b.mv.is_zeroing()
            ),
            "{p}: {} ({:?}{}) ranked before {} ({:?}{})",
            a.mv.uci(),
            a.dtz,
            if a.mv.is_zeroing() { ", zeroing" } else { "" },
            b.mv.uci(),
            b.dtz,
            if b.mv.is_zeroing() { ", zeroing" } else { "" },
        );
    }
    let own = tb.probe_dtz(p).expect("probe").value();
    match ranked.first() {
        Some(best) => assert_eq!(
            best.dtz.value(),
            own,
            "{p}: best move {} vs the position",
            best.mv.uci()
        ),
        None => assert_eq!(
            own,
            Value::win(0),
            "{p}: no legal move is a win for the side to move"
        ),
    }
    ranked.len()
}

/// Check `best_line` from a decisive position: legal, optimal move by move, each phase between
/// zeroing moves exactly as long as the DTZ predicts, and ending in a finished game won by the
/// side the value says. Returns the line's length.
fn check_line(tb: &Tablebase, start: &Position) -> usize {
    let v0 = tb.probe_dtz(start).expect("probe").value();
    assert!(!v0.is_draw());
    let line = tb
        .best_line(start, RankBy::Dtz, 5000)
        .unwrap_or_else(|e| panic!("{start}: {e}"));
    let mut cur = *start;
    // Plies left in this phase: the distance of the value at the phase's start.
    let mut left = v0.distance();
    for (ply, mv) in line.iter().enumerate() {
        assert!(
            cur.legal_moves().iter().any(|m| m == mv),
            "{start}: ply {ply} {} is not legal in {cur}",
            mv.uci()
        );
        let v = tb.probe_dtz(&cur).expect("probe").value();
        assert_eq!(
            v.distance(),
            left,
            "{start}: ply {ply} in {cur}: {v:?}, phase predicted {left} plies"
        );
        assert_eq!(
            score_from_child(tb, &cur, mv),
            v,
            "{start}: ply {ply} {} in {cur} is not optimal",
            mv.uci()
        );
        cur.play(mv);
        if mv.is_zeroing() {
            assert!(
                left == 1 || left == 101,
                "{start}: zeroing move at {left} plies left"
            );
            left = tb.probe_dtz(&cur).expect("probe").value().distance();
        } else {
            left -= 1;
        }
    }
    assert!(
        cur.is_won_by_side_to_move(),
        "{start}: line {} ends in {cur}, not a finished game",
        uci(&line)
    );
    assert_eq!(
        left, 0,
        "{start}: game over but the phase had {left} plies left"
    );
    let mover_wins = line.len().is_multiple_of(2);
    assert_eq!(
        mover_wins,
        v0.is_win(),
        "{start} ({v0:?}): line {} ends with the wrong winner",
        uci(&line)
    );
    line.len()
}

fn uci(line: &[antitb::rules::Move]) -> String {
    line.iter().map(|m| m.uci()).collect::<Vec<_>>().join(" ")
}

#[test]
fn ranked_moves_and_best_lines() {
    let tb = open(&[tables3()]);
    let mem = memory3();
    let materials = up_to_3();
    let mut rng = Rng(0x5eed_0001);
    let (mut positions, mut moves, mut lines, mut plies) = (0, 0, 0, 0);
    let mut classes = [0usize; 5];
    while positions < 400 {
        let p = random_position(&mut rng, &materials);
        positions += 1;
        moves += check_ranking(&tb, Some(mem), &p);
        let v = tb.probe_dtz(&p).expect("probe").value();
        classes[v.wdl().index()] += 1;
        if !v.is_draw() {
            plies += check_line(&tb, &p);
            lines += 1;
        } else {
            assert!(
                tb.best_line(&p, RankBy::Dtz, 100).expect("line").is_empty(),
                "{p}: draw, no line"
            );
        }
    }
    // A few chosen ones: a cursed win from known.csv needs 4 pieces; these are ≤3-piece
    // positions with long lines and pawn phases.
    for fen in [
        "8/8/8/3K4/8/8/8/5r2 b - - 0 1",
        "8/8/8/3K4/8/8/8/5r2 w - - 0 1",
        "8/8/8/8/8/8/1P6/k1K5 w - - 0 1",
        "8/8/8/8/8/8/1P6/k1K5 b - - 0 1",
    ] {
        let p = pos(fen);
        moves += check_ranking(&tb, Some(mem), &p);
        if !tb.probe_dtz(&p).expect("probe").value().is_draw() {
            plies += check_line(&tb, &p);
            lines += 1;
        }
    }
    println!(
        "{positions} random positions (loss/blessed/draw/cursed/win {classes:?}), {moves} ranked moves, {lines} lines, {plies} plies"
    );
    assert!(lines >= 100, "too few decisive positions: {lines}");
}

#[test]
fn ranked_moves_and_best_lines_4_pieces() {
    // The 4-piece tables of the KKPvK closure: pawn phases, promotions, longer lines.
    let tb = open(&[tables3(), tables4()]);
    let four: Vec<Material> = Material::closure(&[m("KKPvK")])
        .into_iter()
        .filter(|m| m.count() == 4)
        .collect();
    assert!(four.len() >= 2, "{four:?}");
    let mut rng = Rng(0x5eed_0004);
    let mut lines = 0;
    for _ in 0..150 {
        let p = random_position(&mut rng, &four);
        check_ranking(&tb, None, &p);
        if !tb.probe_dtz(&p).expect("probe").value().is_draw() {
            check_line(&tb, &p);
            lines += 1;
        }
    }
    let known = pos("5k1K/8/8/8/8/8/p1k5/8 b - - 0 1");
    check_ranking(&tb, None, &known);
    let n = check_line(&tb, &known);
    assert!(n >= 12, "the line of {known} has {n} plies, its DTZ is 12");
    assert!(lines >= 30, "too few decisive positions: {lines}");
}

/// Every `stride`-th slot of `materials` (both sides), probed through `tb`, against Syzygy:
/// (positions, WDL mismatches, DTZ tally).
fn against_syzygy(
    r: &Reference,
    tb: &Tablebase,
    materials: &[Material],
    stride: u64,
) -> (u64, u64, DtzTally) {
    let bad = Mutex::new(Vec::<String>::new());
    let results: Vec<(u64, u64, DtzTally)> = materials
        .par_iter()
        .map(|&mat| {
            let index = Index::new(mat);
            let (mut n, mut wdl_bad, mut tally) = (0, 0, DtzTally::default());
            for idx in (0..index.size()).step_by(stride as usize) {
                for side in 0..2 {
                    let Some(p) = index.decode(side, idx) else {
                        continue;
                    };
                    n += 1;
                    let v = tb
                        .probe_dtz(&p)
                        .unwrap_or_else(|e| panic!("{p}: {e}"))
                        .value();
                    let v_wdl = v.wdl().to_i8();
                    let theirs = r.probe(&p).expect("reference probe");
                    if theirs.wdl != v_wdl {
                        wdl_bad += 1;
                        bad.lock()
                            .unwrap()
                            .push(format!("{mat} {p}: files {v:?}, Syzygy WDL {}", theirs.wdl));
                        continue;
                    }
                    if v_wdl != 0 {
                        let class = r
                            .classify(v.signed(), v_wdl, theirs.dtz, &p)
                            .expect("reference probe");
                        tally.add(class, &p, v_wdl, v.signed(), theirs.dtz);
                    }
                }
            }
            (n, wdl_bad, tally)
        })
        .collect();
    let mut total = (0, 0, DtzTally::default());
    for (n, w, t) in results {
        total.0 += n;
        total.1 += w;
        total.2.merge(t);
    }
    let bad = bad.into_inner().unwrap();
    assert!(
        bad.is_empty(),
        "WDL differs from Syzygy:\n{}",
        bad[..bad.len().min(10)].join("\n")
    );
    total
}

#[test]
fn files_against_syzygy() {
    let Some(r) = Reference::open() else {
        println!("{SKIPPED}");
        return;
    };
    let tb = open(&[tables3(), tables4()]);
    let four: Vec<Material> = Material::closure(&[m("KKPvK")])
        .into_iter()
        .filter(|m| m.count() == 4)
        .collect();
    for (what, materials, stride) in [
        ("≤3-piece", up_to_3(), 23),
        ("4-piece (KKPvK closure)", four, 211),
    ] {
        let (n, wdl_bad, tally) = against_syzygy(&r, &tb, &materials, stride);
        println!(
            "{what} tables through the files, every {stride}th slot: {n} positions, WDL mismatches {wdl_bad}"
        );
        println!("DTZ classes of decisive positions:\n{tally}");
        assert_eq!(wdl_bad, 0);
        assert_eq!(
            tally.failures(),
            0,
            "DTZ disagreements beyond the documented ones"
        );
        assert!(n > 10_000, "{what}: only {n} positions");
    }
}

#[test]
fn finished_games() {
    let tb = open(&[tables3()]);
    // Black has no pieces: Black (to move) has won.
    let p = pos("8/8/8/8/8/8/8/K7 b - - 0 1");
    assert_eq!(tb.probe_dtz(&p).expect("probe").value(), Value::win(0));
    assert_eq!(tb.probe_wdl(&p).expect("probe"), Wdl::Win);
    assert!(tb.rank_moves(&p, RankBy::Dtz).expect("rank").is_empty());
    assert!(tb.best_line(&p, RankBy::Dtz, 10).expect("line").is_empty());
    // White's pawn is blocked and White has no other piece: stalemated, White wins.
    let p = pos("8/8/8/8/8/p7/P7/8 w - - 0 1");
    assert!(p.legal_moves().is_empty());
    assert_eq!(tb.probe_dtz(&p).expect("probe").value(), Value::win(0));
    assert_eq!(tb.probe_wdl(&p).expect("probe"), Wdl::Win);
}

/// Copy every file of `from` into a fresh temp dir, except the files `skip` says.
fn copy_dir(from: &Path, name: &str, skip: impl Fn(&str) -> bool) -> TempDir {
    let dir = TempDir::new(TEMP_PREFIX, name);
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if !skip(&n) {
            std::fs::copy(e.path(), dir.0.join(&n)).expect("copy table");
        }
    }
    dir
}

#[test]
fn missing_table_names_the_material() {
    // The DTZ file alone missing: a DTZ probe names it, a WDL probe does not need it.
    let dir = copy_dir(tables3(), "missing-dtz", |n| n == "KRvN.dtz");
    let tb = open(&[&dir.0]);
    let p = pos("8/8/8/8/3n4/8/8/R3K3 w - - 0 1");
    for q in [p, p.swap_colors()] {
        match tb.probe_dtz(&q) {
            Err(ProbeError::MissingTable { material, metric }) => {
                assert_eq!((material, metric), (m("KRvN"), Metric::Dtz), "{q}");
            }
            other => panic!("{q}: expected MissingTable, got {other:?}"),
        }
        assert!(
            tb.probe_wdl(&q).is_ok(),
            "{q}: WDL needs only the .wdl file"
        );
    }
    let dir = copy_dir(tables3(), "missing", |n| n.starts_with("KRvN."));
    let tb = open(&[&dir.0]);
    // White K and R, Black N, no capture: the KRvN table is needed.
    let p = pos("8/8/8/8/3n4/8/8/R3K3 w - - 0 1");
    for (i, q) in [p, p.swap_colors()].iter().enumerate() {
        match tb.probe_dtz(q) {
            Err(e @ ProbeError::MissingTable { material, metric }) => {
                assert_eq!((material, metric), (m("KRvN"), Metric::Dtz), "{q}");
                assert!(
                    e.to_string().contains("KRvN"),
                    "message names the material: {e}"
                );
            }
            other => panic!("{q} ({i}): expected MissingTable, got {other:?}"),
        }
        match tb.probe_wdl(q) {
            Err(ProbeError::MissingTable { material, metric }) => {
                assert_eq!((material, metric), (m("KRvN"), Metric::Wdl), "{q}")
            }
            other => panic!("{q}: expected MissingTable, got {other:?}"),
        }
    }
    // A 4-piece position whose only capture leads into KRvN.
    let q = pos("8/8/8/1P6/3n4/8/8/R3K3 b - - 0 1");
    assert!(
        matches!(tb.probe_dtz(&q), Err(ProbeError::MissingTable { material, .. }) if material == m("KRvN"))
    );
    // Other tables still answer.
    let other = pos("8/8/8/8/3b4/8/8/R3K3 w - - 0 1");
    assert!(tb.probe_dtz(&other).is_ok() && tb.rank_moves(&other, RankBy::Dtz).is_ok());

    // Only the DTZ file missing: WDL probes work, DTZ probes name the DTZ file.
    let dir = copy_dir(tables3(), "missing-dtz", |n| n == "KRvN.dtz");
    let tb = open(&[&dir.0]);
    assert!(tb.probe_wdl(&p).is_ok());
    match tb.probe_dtz(&p) {
        Err(
            e @ ProbeError::MissingTable {
                metric: Metric::Dtz,
                ..
            },
        ) => {
            assert!(e.to_string().contains("KRvN.dtz"), "{e}")
        }
        other => panic!("expected MissingTable, got {other:?}"),
    }
}

#[test]
fn too_many_pieces_and_bad_directory() {
    let tb = open(&[tables3()]);
    assert_eq!(tb.max_pieces(), 3);
    // Six pieces, no capture for White.
    let p = pos("r6n/8/8/8/8/8/8/K1B1N2b w - - 0 1");
    assert!(
        !p.legal_moves().iter().any(|m| m.is_capture()),
        "{p} has a capture"
    );
    for r in [
        tb.probe_dtz(&p).map(|_| ()),
        tb.probe_wdl(&p).map(|_| ()),
        tb.rank_moves(&p, RankBy::Dtz).map(|_| ()),
    ] {
        match r {
            Err(e @ ProbeError::TooManyPieces { pieces: 6, max: 3 }) => {
                let msg = e.to_string();
                assert!(msg.contains('6') && msg.contains('3'), "{msg}");
            }
            other => panic!("expected TooManyPieces, got {other:?}"),
        }
    }
    let missing = temp_path(TEMP_PREFIX, "no-such-dir");
    match Tablebase::open(&[&missing]) {
        Err(e @ ProbeError::BadDirectory(..)) => {
            assert!(e.to_string().contains(&*missing.to_string_lossy()), "{e}")
        }
        Err(e) => panic!("expected BadDirectory, got {e:?}"),
        Ok(_) => panic!("a missing directory opened"),
    }
}

/// Header fields of a table file (tables/FORMAT.md, version 4 or 5): start of the blocks and of
/// the trailer.
fn block_area(bytes: &[u8]) -> (usize, usize) {
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    let sections = u32_at(20);
    let var = u32_at(40) + u32_at(44) + u32_at(48);
    let mpos = 64 + var.div_ceil(8) * 8;
    let len = u64_at(32);
    let data_start = if u32_at(8) == 5 {
        // Version 5 (pairs): 32-byte section descriptors (blocks at +8), blocks of the size in
        // the header's field 16, ending 8 bytes before the end.
        let blocks: usize = (0..sections).map(|s| u64_at(mpos + 32 * s + 8)).sum();
        len - 8 - u32_at(16) * blocks
    } else {
        u64_at(mpos + 8 * sections)
    };
    assert_eq!(len, bytes.len());
    (data_start, len - 8)
}

/// Every valid position of `material`, both sides.
fn all_positions(material: Material) -> Vec<Position> {
    let index = Index::new(material);
    let mut out = Vec::new();
    for side in 0..2 {
        out.extend((0..index.size()).filter_map(|i| index.decode(side, i)));
    }
    out
}

#[test]
fn flipped_byte_in_a_block_names_the_file() {
    let mat = m("KPvK");
    let positions: Vec<Position> = all_positions(mat)
        .into_iter()
        .filter(|p| !p.has_capture())
        .collect();
    for kind in [Metric::Dtz, Metric::Wdl] {
        let dir = copy_dir(tables3(), &format!("flip-{}", kind_name(kind)), |_| false);
        let file = dir.0.join(format!("{mat}.{}", kind_name(kind)));
        let mut bytes = std::fs::read(&file).expect("read table");
        let (start, end) = block_area(&bytes);
        assert!(
            end - start > 1000,
            "{}: block area {start}..{end}",
            file.display()
        );
        bytes[(start + end) / 2] ^= 0x40;
        std::fs::write(&file, &bytes).expect("write table");
        let tb = open(&[&dir.0]);
        let (mut ok, mut errors) = (0, 0);
        for p in &positions {
            let r = match kind {
                Metric::Wdl => tb.probe_wdl(p).map(|_| ()),
                _ => tb.probe_dtz(p).map(|_| ()),
            };
            match r {
                Ok(()) => ok += 1,
                Err(e) => {
                    errors += 1;
                    let msg = e.to_string();
                    assert!(matches!(e, ProbeError::Store(_)), "{p}: {e:?}");
                    assert!(
                        msg.contains(&*file.to_string_lossy()),
                        "names the file: {msg}"
                    );
                    assert!(msg.contains("block"), "names the block: {msg}");
                }
            }
        }
        assert!(
            errors > 0,
            "{}: a flipped byte went unnoticed ({ok} probes fine)",
            file.display()
        );
        // The damage stays in its block: positions elsewhere still answer.
        assert!(ok > 0, "{}: every probe failed", file.display());
        println!("{}: {errors} probes failed, {ok} answered", file.display());
        // Through the file layer directly: the whole-file check finds it too.
        let t = StoredTable::open(&file, mat, kind, &Default::default()).expect("header intact");
        let e = t
            .file()
            .verify_checksums()
            .expect_err("checksums catch the flip");
        assert!(e.to_string().contains(&*file.to_string_lossy()), "{e}");
    }
}

fn kind_name(kind: Metric) -> &'static str {
    kind.extension()
}

#[test]
fn truncated_file_names_the_file() {
    let mat = m("KPvK");
    let dir = copy_dir(tables3(), "truncated", |_| false);
    let p = pos("8/8/8/8/8/8/1P6/k1K5 w - - 0 1");
    for (kind, cut) in [
        (Metric::Dtz, 2usize),
        (Metric::Wdl, 2),
        (Metric::Dtz, 1000),
        (Metric::Wdl, 30),
    ] {
        let file = dir.0.join(format!("{mat}.{}", kind.extension()));
        let copy = tables3().join(format!("{mat}.{}", kind.extension()));
        let bytes = std::fs::read(&copy).expect("read table");
        let keep = if cut <= 2 {
            bytes.len() / cut
        } else {
            cut.min(bytes.len() - 1)
        };
        std::fs::write(&file, &bytes[..keep]).expect("write truncated table");
        // At open, in the file layer.
        let e = StoredTable::open(&file, mat, kind, &Default::default())
            .err()
            .expect("a truncated file does not open");
        assert!(e.to_string().contains(&*file.to_string_lossy()), "{e}");
        // Through a probe (the tablebase opens files on first use).
        let tb = open(&[&dir.0]);
        let r = match kind {
            Metric::Wdl => tb.probe_wdl(&p).map(|_| ()),
            _ => tb.probe_dtz(&p).map(|_| ()),
        };
        match r {
            Err(e @ ProbeError::Store(_)) => {
                let msg = e.to_string();
                assert!(msg.contains(&*file.to_string_lossy()), "{msg}");
                if cut == 2 {
                    assert!(msg.contains("truncated"), "{msg}");
                }
            }
            other => panic!(
                "{}: kept {keep} bytes: expected an error, got {other:?}",
                file.display()
            ),
        }
        std::fs::copy(&copy, &file).expect("restore");
    }
}

/// `r` is a store error whose message names `file` and contains `word`.
fn expect_store_error<T: std::fmt::Debug>(r: Result<T, ProbeError>, file: &Path, word: &str) {
    match r {
        Err(e @ ProbeError::Store(_)) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&*file.to_string_lossy()) && msg.contains(word),
                "{msg}"
            );
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn wrong_magic_names_the_file() {
    let mat = m("KPvK");
    let dir = copy_dir(tables3(), "magic", |_| false);
    let file = dir.0.join(format!("{mat}.dtz"));
    let mut bytes = std::fs::read(&file).expect("read table");
    bytes[0] ^= 0x01;
    std::fs::write(&file, &bytes).expect("write table");
    let tb = open(&[&dir.0]);
    expect_store_error(
        tb.probe_dtz(&pos("8/8/8/8/8/8/1P6/k1K5 w - - 0 1")),
        &file,
        "magic",
    );
}

/// A file of an older index scheme (4: the rest groups in material order, every piece's
/// squares in square order) is refused, with the scheme named, even where the rest of its
/// index parameters are this version's (KBvN: one rest group, a knight).
#[test]
fn older_index_scheme_is_refused() {
    let mat = m("KBvN");
    let dir = copy_dir(tables3(), "scheme", |_| false);
    let file = dir.0.join(format!("{mat}.wdl"));
    let mut bytes = std::fs::read(&file).expect("read table");
    let params = Index::new(mat.canonical()).params();
    let at = bytes
        .windows(params.len())
        .position(|w| w == params.as_slice())
        .expect("the header holds the index parameters");
    bytes[at] = 4;
    antitb::format::reseal(&mut bytes);
    std::fs::write(&file, &bytes).expect("write table");
    let tb = open(&[&dir.0]);
    expect_store_error(
        tb.probe_wdl(&pos("8/8/8/8/8/2n5/8/1B5K w - - 0 1")),
        &file,
        "index scheme 4",
    );
}

/// A `.dtz` file whose rest groups come in another order than its `.wdl` file's is refused,
/// with the file named: its values take their class from the `.wdl` file slot by slot. The
/// writer picks the order of each table; the test takes a 3-piece table written in another
/// order than the index's default one and gives its `.dtz` file the default order.
#[test]
fn dtz_ordered_unlike_its_wdl_is_refused() {
    use antitb::format::TableFile;
    let dir = copy_dir(tables3(), "order", |_| false);
    let params_of = |path: &Path| {
        TableFile::open(path)
            .expect("open")
            .meta()
            .index_params
            .clone()
    };
    let mat = up_to_3()
        .into_iter()
        .map(|m| m.canonical())
        .find(|&m| params_of(&dir.0.join(format!("{m}.wdl"))) != Index::new(m).params())
        .expect("a 3-piece table written in another rest order");
    let file = dir.0.join(format!("{mat}.dtz"));
    let params = params_of(&file);
    let mut bytes = std::fs::read(&file).expect("read table");
    let at = bytes
        .windows(params.len())
        .position(|w| w == params.as_slice())
        .expect("the header holds the index parameters");
    bytes[at..at + params.len()].copy_from_slice(&Index::new(mat).params());
    antitb::format::reseal(&mut bytes);
    std::fs::write(&file, &bytes).expect("write table");
    let quiet = all_positions(mat)
        .into_iter()
        .find(|p| !p.has_capture())
        .expect("a quiet position");
    expect_store_error(open(&[&dir.0]).probe_dtz(&quiet), &file, "ordered unlike");
}

/// `.wdl` and `.dtz` files of zstd blocks (format version 4, the codec of `.dtw` files, and how
/// earlier antitb releases wrote every file) are read as well: the
/// `.wdl` and `.dtz` files of every 3-piece table with a pawn, rewritten with zstd (same values,
/// same metadata), probe exactly as the pairs files do, at every 11th position.
#[test]
fn zstd_wdl_and_dtz_files_are_read() {
    use antitb::format::{Compression, TableFile, WriteOptions};
    let dir = copy_dir(tables3(), "zstd", |_| false);
    let materials: Vec<Material> = up_to_3()
        .into_iter()
        .filter(|m| m.to_string().contains('P') && m.to_string().len() == 4)
        .collect();
    assert!(materials.len() > 10, "{materials:?}");
    let zstd = WriteOptions {
        compression: Compression::Zstd,
        level: 3,
        values_per_block: 1 << 12,
    };
    for &mat in &materials {
        for kind in [Metric::Wdl, Metric::Dtz] {
            let path = dir
                .0
                .join(format!("{}.{}", mat.canonical(), kind_name(kind)));
            let f = TableFile::open(&path).expect("open");
            assert_eq!(f.compression(), Compression::Pairs { block_bytes: 128 });
            let secs: Vec<Vec<u16>> = (0..f.section_count())
                .map(|s| f.decode_section(s).expect("decode"))
                .collect();
            let secs: Vec<&[u16]> = secs.iter().map(|v| v.as_slice()).collect();
            // Replaced by rename: the open map keeps the old file.
            common::files::write_like(&f, &secs, &path, &zstd);
            let f = TableFile::open(&path).expect("open rewritten");
            assert_eq!(f.compression(), Compression::Zstd);
        }
    }
    let (pairs, zstd) = (open(&[tables3()]), open(&[&dir.0]));
    let mut n = 0;
    for &mat in &materials {
        for p in all_positions(mat).into_iter().step_by(11) {
            assert_eq!(zstd.probe_wdl(&p).ok(), pairs.probe_wdl(&p).ok(), "{p}");
            assert_eq!(zstd.probe_dtz(&p).ok(), pairs.probe_dtz(&p).ok(), "{p}");
            n += 1;
        }
    }
    println!(
        "{} tables, {n} positions: zstd (version 4) and pairs (version 5) files agree",
        materials.len()
    );
}
