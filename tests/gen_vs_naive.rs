//! The fast generator against the deliberately naive solver of `tests/common/naive.rs`: every
//! placement (no symmetry assumed) of every 2- and 3-piece table, both sides to move — WDL,
//! exact DTZ and DTW. Positions are probed through the generator's in-memory tables (capture
//! search + symmetric index), so the index's canonicalisation is checked too, and each
//! position's colour-flipped twin must get the same value.

mod common;

use antitb::r#gen::MemoryTables;
use antitb::rules::{Board, Color, Piece, Position, Role, Square};
use antitb::table::{Material, Metric};
use common::naive;

fn placements(m: Material, f: &mut impl FnMut(Position)) {
    let mut pieces = Vec::new();
    for color in Color::ALL {
        for role in Role::ALL {
            for _ in 0..m.count_of(Piece { color, role }) {
                pieces.push(Piece { color, role });
            }
        }
    }
    fn rec(pieces: &[Piece], board: Board, f: &mut impl FnMut(Position)) {
        let Some((&p, rest)) = pieces.split_first() else {
            f(Position::from_board(board, Color::White));
            f(Position::from_board(board, Color::Black));
            return;
        };
        for sq in Square::all() {
            if board.occupied().contains(sq)
                || (p.role == Role::Pawn && (sq.rank() == 0 || sq.rank() == 7))
            {
                continue;
            }
            let mut b = board;
            b.put(sq, p);
            rec(rest, b, f);
        }
    }
    rec(&pieces, Board::empty(), f);
}

/// The naive solver's tables up to 3 pieces, solved once for the tests of this file.
fn naive_3() -> &'static naive::NaiveTables {
    static NAIVE: std::sync::OnceLock<naive::NaiveTables> = std::sync::OnceLock::new();
    NAIVE.get_or_init(|| naive::solve_all(3))
}

#[test]
fn generator_equals_naive_solver_up_to_3_pieces() {
    let naive = naive_3();
    let mut mem = MemoryTables::new();
    mem.generate_up_to(3, Metric::Dtz).unwrap();
    mem.generate_up_to(3, Metric::Dtw).unwrap();
    let mut checked = 0u64;
    let mut mismatches = 0u64;
    for n in 2..=3 {
        for m in Material::all_with_pieces(n) {
            placements(m, &mut |pos| {
                let dtz = mem.probe(&pos, Metric::Dtz).unwrap();
                let dtw = mem.probe(&pos, Metric::Dtw).unwrap();
                let ours = (
                    dtz.wdl().to_i8(),
                    dtz.signed(),
                    if dtw.is_draw() {
                        None
                    } else {
                        Some(dtw.signed())
                    },
                );
                let expect = naive
                    .value(&pos)
                    .expect("naive solved every material up to 3 pieces");
                let flipped = mem.probe(&pos.swap_colors(), Metric::Dtz).unwrap();
                checked += 1;
                if ours != expect || flipped != dtz {
                    mismatches += 1;
                    if mismatches <= 20 {
                        eprintln!(
                            "{m} {pos}: generator {ours:?} (flipped {flipped:?}), naive {expect:?}"
                        );
                    }
                }
            });
        }
    }
    println!("{checked} positions checked against the naive solver, {mismatches} mismatches");
    assert!(checked > 10_000_000);
    assert_eq!(mismatches, 0);
}

/// Tables with pawns solved one pawn configuration per unit, stopped half way (by a panic in
/// the progress callback, which like a kill leaves the scratch and checkpoint files behind),
/// then solved again: the second solve starts after the checkpointed unit, and every position
/// of the table it finishes equals the naive solver.
#[test]
fn a_resumed_solve_equals_the_naive_solver() {
    use antitb::r#gen::{SolveOptions, solve};
    use std::panic::{AssertUnwindSafe, catch_unwind};
    let naive = naive_3();
    let mut mem = MemoryTables::new();
    mem.generate_up_to(3, Metric::Dtz).unwrap();
    mem.generate_up_to(3, Metric::Dtw).unwrap();
    let dir = common::cli::TempDir::new("antitb-resume-", "naive");
    let opts = SolveOptions {
        scratch: dir.path().to_path_buf(),
        unit_slots: 1,
        resume: true,
        checkpoint_every: std::time::Duration::ZERO,
        // Levels found by scans as in large tables, not from lists of any length.
        list_floor: 0,
        ..SolveOptions::default()
    };
    let mut checked = 0u64;
    for name in ["KPvK", "PvP", "KvKP", "NPvP"] {
        let m = Material::parse(name).unwrap();
        let canonical = m.canonical().to_string();
        for metric in [Metric::Dtz, Metric::Dtw] {
            let ext = if metric == Metric::Dtz { "dtz" } else { "dtw" };
            let checkpoint = dir.path().join(format!("{canonical}.{ext}.resume"));
            let scratch = dir.path().join(format!("{canonical}.{ext}.scratch"));
            let stopped_at = std::sync::Mutex::new(0);
            let first = catch_unwind(AssertUnwindSafe(|| {
                solve(m, metric, &mem, &opts, &|p| {
                    if p.phase == "captures" && p.group == p.groups / 2 {
                        *stopped_at.lock().unwrap() = p.group;
                        panic!("stopped at unit {} of {}", p.group, p.groups);
                    }
                })
            }));
            assert!(
                first.is_err(),
                "{name} {metric:?}: the solve was not stopped"
            );
            let stopped_at = *stopped_at.lock().unwrap();
            assert!(stopped_at >= 2, "{name}: too few units ({stopped_at})");
            assert!(
                checkpoint.exists() && scratch.exists(),
                "{name}: no checkpoint"
            );
            let first_unit = std::sync::Mutex::new(None);
            let resumed = std::sync::Mutex::new(None);
            let solved = solve(m, metric, &mem, &opts, &|p| {
                if p.phase == "resumed" {
                    *resumed.lock().unwrap() = Some(p.group);
                }
                if p.phase == "captures" {
                    first_unit.lock().unwrap().get_or_insert(p.group);
                }
            })
            .unwrap();
            assert_eq!(
                *resumed.lock().unwrap(),
                Some(stopped_at),
                "{name} {metric:?}"
            );
            assert_eq!(
                *first_unit.lock().unwrap(),
                Some(stopped_at),
                "{name} {metric:?}"
            );
            solved.remove_resume_files();
            assert!(
                !checkpoint.exists() && !scratch.exists(),
                "{name}: files left"
            );
            // In place of the uninterrupted solve's table (the source of later solves, which
            // read only other tables).
            mem.insert(solved.into_table().unwrap());
            placements(m, &mut |pos| {
                let v = mem.probe(&pos, metric).unwrap();
                let expect = naive.value(&pos).expect("naive solved it");
                let ours = if metric == Metric::Dtz {
                    (v.wdl().to_i8(), v.signed())
                } else {
                    (expect.0, if v.is_draw() { 0 } else { v.signed() })
                };
                let want = if metric == Metric::Dtz {
                    (expect.0, expect.1)
                } else {
                    (expect.0, expect.2.unwrap_or(0))
                };
                assert_eq!(ours, want, "{name} {metric:?} {pos}");
                checked += 1;
            });
        }
    }
    println!("{checked} positions of resumed solves checked against the naive solver");
    assert!(checked > 100_000);
}

/// A DTW solve given the table's WDL classes (`WdlHint`, as `antitb generate` gives it after
/// the WDL/DTZ solve): draws decided at once, wins never loss candidates. Every 3-piece table
/// solved that way (with small windows and units, so that shifts and pawn units meet the
/// hint), in place of the plain solve's, equals the naive solver on every position.
#[test]
fn a_dtw_solve_with_the_wdl_classes_equals_the_naive_solver() {
    use antitb::r#gen::{SolveOptions, WdlHint, solve};
    use std::sync::Arc;
    let naive = naive_3();
    let mut mem = MemoryTables::new();
    mem.generate_up_to(3, Metric::Dtz).unwrap();
    mem.generate_up_to(3, Metric::Dtw).unwrap();
    let dir = common::cli::TempDir::new("antitb-hint-", "naive");
    let plain = SolveOptions {
        scratch: dir.path().to_path_buf(),
        unit_slots: 1,
        window: Some(6),
        // Levels found by scans as in large tables, not from lists of any length.
        list_floor: 0,
        ..SolveOptions::default()
    };
    let (mut checked, mut tables, mut draws, mut losses) = (0u64, 0, 0u64, 0u64);
    for m in Material::all_with_pieces(3) {
        let wdl = solve(m, Metric::Dtz, &mem, &plain, &|_| {}).unwrap();
        let hint = WdlHint::of(&wdl).unwrap();
        for side in 0..2 {
            for idx in 0..hint.size() {
                match hint.class(side, idx) {
                    antitb::r#gen::WdlClass::Draw => draws += 1,
                    antitb::r#gen::WdlClass::Loss => losses += 1,
                    antitb::r#gen::WdlClass::Win => {}
                }
            }
        }
        let opts = SolveOptions {
            wdl_hint: Some(Arc::new(hint)),
            ..plain.clone()
        };
        let dtw = solve(m, Metric::Dtw, &mem, &opts, &|_| {}).unwrap();
        mem.insert(dtw.into_table().unwrap());
        tables += 1;
        placements(m, &mut |pos| {
            let v = mem.probe(&pos, Metric::Dtw).unwrap();
            let expect = naive.value(&pos).expect("naive solved it");
            let ours = if v.is_draw() { None } else { Some(v.signed()) };
            assert_eq!(ours, expect.2, "{m} {pos}");
            checked += 1;
        });
    }
    println!(
        "{tables} tables, {checked} positions of DTW solves with WDL classes ({draws} draw and \
         {losses} loss slots) checked against the naive solver"
    );
    assert!(checked > 10_000_000 && draws > 0 && losses > 0);
}
