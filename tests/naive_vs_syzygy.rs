//! The evidence that the naive solver (tests/common/naive.rs) is right: it agrees with de Man's
//! independent Syzygy antichess tables on every 2- and 3-piece position.
//!
//! For each canonical material, every placement with both sides to move is valued by the naive
//! solver. One position of each board-symmetry class (the 8 symmetries without pawns, the
//! left–right mirror with pawns) is probed in the Syzygy tables: WDL must be equal, DTZ is
//! classified by `classify_dtz` and no class may be `Mismatch`. Every other member of the class,
//! and the colour-swapped position (which lies in the naive solver's other, separately solved
//! orientation of the material), must have exactly the naive value of the probed one — so every
//! naive position is checked. Set `ANTITB_NO_SYMMETRY=1` to probe every position instead.

mod common;

use antitb::rules::{Board, Color, Piece, Position, Role, Square, parse_fen};
use common::naive::{Material, NaiveTables, all_materials, exact_materials, solve_all};
use common::syzygy::{DtzClass, DtzTally, Reference, SKIPPED};
use rayon::prelude::*;
use std::time::Instant;

#[test]
fn material_counts_and_names() {
    assert_eq!(all_materials(2).len(), 21);
    assert_eq!(all_materials(3).len(), 126);
    assert_eq!(all_materials(4).len(), 567);
    let pawnless = |n| all_materials(n).iter().filter(|m| !m.has_pawns()).count();
    assert_eq!((pawnless(2), pawnless(3), pawnless(4)), (15, 75, 295));
    // Every exact material is one orientation of exactly one canonical material.
    for n in 2..=4 {
        let canon = all_materials(n);
        for m in exact_materials(n) {
            assert!(canon.contains(&m.canonical()), "{m}");
        }
    }
    for (name, canonical) in [
        ("QvK", "KvQ"),
        ("KvK", "KvK"),
        ("KNvKB", "KBvKN"),
        ("KvBB", "BBvK"),
        ("NvQR", "QRvN"),
    ] {
        let m = Material::parse(name).unwrap();
        assert_eq!(m.to_string(), name);
        assert_eq!(m.canonical().to_string(), canonical, "{name}");
    }
    assert_eq!(Material::parse("RQKvP").unwrap().to_string(), "KQRvP");
    for bad in ["KQR", "vK", "Kv", "KxvK", "kvK"] {
        assert!(Material::parse(bad).is_err(), "{bad}");
    }
}

/// Every valid placement of `material` (identical pieces in ascending square order, pawns on
/// ranks 2–7), as boards.
fn placements(material: &Material) -> Vec<Board> {
    fn rec(pieces: &[Piece], min_sq: u32, board: Board, out: &mut Vec<Board>) {
        let Some((&p, rest)) = pieces.split_first() else {
            out.push(board);
            return;
        };
        for s in min_sq..64 {
            let sq = Square::new(s);
            if board.occupied().contains(sq)
                || (p.role == Role::Pawn && !(1..=6).contains(&sq.rank()))
            {
                continue;
            }
            let mut b = board;
            b.put(sq, p);
            let next_min = if rest.first() == Some(&p) { s + 1 } else { 0 };
            rec(rest, next_min, b, out);
        }
    }
    let mut out = Vec::new();
    rec(&material.pieces(), 0, Board::empty(), &mut out);
    out
}

/// The board with every square mapped by `f`.
fn map_board(board: &Board, f: impl Fn(Square) -> Square) -> Board {
    let mut b = Board::empty();
    for (sq, p) in board.pieces() {
        b.put(f(sq), p);
    }
    b
}

/// The board-symmetry images of a board (itself included): 8 without pawns, 2 with.
fn images(board: &Board) -> Vec<Board> {
    let mut out = vec![*board, map_board(board, Square::flip_horizontal)];
    if board.by_role(Role::Pawn).is_empty() {
        for b in out.clone() {
            out.push(map_board(&b, Square::flip_vertical));
        }
        for b in out.clone() {
            out.push(map_board(&b, Square::flip_diagonal));
        }
    }
    out
}

/// A total order key of boards (to pick one representative per symmetry class).
fn board_key(board: &Board) -> [u64; 12] {
    let mut key = [0u64; 12];
    for (i, color) in Color::ALL.into_iter().enumerate() {
        for role in Role::ALL {
            key[i * 6 + role.index()] = board.by_piece(Piece { color, role }).0;
        }
    }
    key
}

#[derive(Default)]
struct Outcome {
    tally: DtzTally,
    probed: u64,
    positions: u64,
    wdl_mismatches: Vec<String>,
    naive_inconsistencies: Vec<String>,
}

impl Outcome {
    fn merge(mut self, other: Outcome) -> Outcome {
        self.tally.merge(other.tally);
        self.probed += other.probed;
        self.positions += other.positions;
        self.wdl_mismatches
            .extend(other.wdl_mismatches.into_iter().take(10));
        self.naive_inconsistencies
            .extend(other.naive_inconsistencies.into_iter().take(10));
        self
    }
}

/// Check both sides to move of one placement.
fn check_board(naive: &NaiveTables, reference: &Reference, board: &Board, all: bool) -> Outcome {
    let mut out = Outcome::default();
    let imgs = images(board);
    let key = board_key(board);
    let representative = all || imgs.iter().all(|b| board_key(b) >= key);
    for turn in Color::ALL {
        let pos = Position::from_board(*board, turn);
        out.positions += 1;
        let value = naive.eval(&pos).expect("naive value of a table position");
        let (wdl, dtz, dtw) = (value.wdl(), value.dtz(), value.dtw());
        // DTW: a win exactly when WDL is +2 or +1, 0 only when terminal (SPEC.md §3).
        let dtw_ok = match dtw {
            None => wdl == 0,
            Some(0) => wdl == 2 && dtz == 0,
            Some(d) => wdl != 0 && (d > 0) == (wdl > 0) && dtz != 0,
        };
        if !dtw_ok {
            out.naive_inconsistencies
                .push(format!("{pos}: wdl {wdl} dtz {dtz} dtw {dtw:?}"));
        }
        // Symmetric and colour-swapped positions have the same value.
        let mut twins: Vec<Position> = imgs
            .iter()
            .map(|b| Position::from_board(*b, turn))
            .collect();
        twins.push(pos.swap_colors());
        for t in twins {
            let v = naive.eval(&t);
            if v != Some(value) {
                out.naive_inconsistencies
                    .push(format!("{pos} = {value:?} but {t} = {v:?}"));
            }
        }
        if !representative {
            continue;
        }
        // The stored value is the recurrence applied to the children's stored values.
        let again = naive.eval_from_moves(&pos);
        if again != Some(value) {
            out.naive_inconsistencies
                .push(format!("{pos}: stored {value:?}, from its moves {again:?}"));
        }
        out.probed += 1;
        let probe = reference
            .probe(&pos)
            .unwrap_or_else(|e| panic!("syzygy probe failed: {e}"));
        if probe.wdl != wdl {
            out.wdl_mismatches.push(format!(
                "{pos}: naive wdl {wdl} dtz {dtz}, syzygy wdl {} dtz {}",
                probe.wdl, probe.dtz
            ));
            continue;
        }
        let class = reference
            .classify(dtz, wdl, probe.dtz, &pos)
            .unwrap_or_else(|e| panic!("{e}"));
        out.tally.add(class, &pos, wdl, dtz, probe.dtz);
    }
    out
}

#[test]
fn naive_agrees_with_syzygy() {
    let Some(reference) = Reference::open() else {
        println!("{SKIPPED}");
        return;
    };
    let all = std::env::var_os("ANTITB_NO_SYMMETRY").is_some();
    let start = Instant::now();
    let naive = solve_all(3);
    println!(
        "naive solver, every 2- and 3-piece material (both orientations): {:.1?}",
        start.elapsed()
    );
    let check_start = Instant::now();
    let mut total = Outcome::default();
    let mut failures = Vec::new();
    for n in 2..=3 {
        let mut tally_n = DtzTally::default();
        for material in all_materials(n) {
            let boards = placements(&material);
            let out = boards
                .par_iter()
                .map(|b| check_board(&naive, &reference, b, all))
                .reduce(Outcome::default, Outcome::merge);
            let mismatches = out.tally.count(DtzClass::Mismatch);
            if !out.wdl_mismatches.is_empty()
                || !out.naive_inconsistencies.is_empty()
                || mismatches > 0
            {
                failures.push(format!(
                    "{material}: WDL mismatches {:?}, DTZ mismatches {mismatches} {:?}, naive inconsistencies {:?}",
                    out.wdl_mismatches,
                    out.tally.examples.get(&DtzClass::Mismatch),
                    out.naive_inconsistencies,
                ));
            }
            let counts: Vec<String> = DtzClass::ALL
                .iter()
                .filter(|&&c| c != DtzClass::Exact && out.tally.count(c) > 0)
                .map(|&c| format!("{c} {}", out.tally.count(c)))
                .collect();
            if !counts.is_empty() {
                println!("  {material}: {} probed, {}", out.probed, counts.join(", "));
            }
            let Outcome {
                tally,
                probed,
                positions,
                ..
            } = out;
            tally_n.merge(tally);
            total.probed += probed;
            total.positions += positions;
        }
        println!("{n} pieces: DTZ classes\n{tally_n}");
        total.tally.merge(tally_n);
    }
    println!(
        "all: {} positions valued, {} probed ({}), {:.1?} checking\n{}",
        total.positions,
        total.probed,
        if all {
            "every position"
        } else {
            "one per symmetry class"
        },
        check_start.elapsed(),
        total.tally
    );
    println!("single-valued sub-tables (key: (exact, syzygy) pairs):");
    for (k, v) in &total.tally.single_valued {
        println!("  {k}: {v:?}");
    }
    let violations = total.tally.single_valued_violations();
    assert!(
        failures.is_empty(),
        "disagreements:\n{}",
        failures.join("\n")
    );
    assert!(
        violations.is_empty(),
        "single-valued sub-tables with several values: {violations:?}"
    );
    assert_eq!(total.tally.count(DtzClass::Mismatch), 0);
}

/// tests/data/known.csv (fen,wdl,dtz) against the naive solver (rows with up to 3 pieces; a
/// row with more pieces is checked against the Syzygy reference instead, and against the naive
/// solver too when `ANTITB_NAIVE_4=1`, which solves its 4-piece tables: minutes).
#[test]
fn known_positions() {
    let csv = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/known.csv"))
        .unwrap();
    let rows: Vec<(Position, i8, i32)> = csv
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 3, "bad row {l:?}");
            let pos = parse_fen(f[0]).unwrap_or_else(|e| panic!("{l}: {e}"));
            (
                pos,
                f[1].trim().parse().unwrap(),
                f[2].trim().parse().unwrap(),
            )
        })
        .collect();
    assert!(!rows.is_empty());
    let big_naive = std::env::var_os("ANTITB_NAIVE_4").is_some();
    let by_naive = |pos: &Position| pos.piece_count() <= 3 || big_naive;
    let materials: Vec<Material> = rows
        .iter()
        .filter(|r| by_naive(&r.0))
        .map(|r| Material::of_board(r.0.board()))
        .collect();
    let naive = NaiveTables::solve(&materials);
    let reference = Reference::open();
    let (mut n_naive, mut n_syzygy) = (0, 0);
    for (pos, wdl, dtz) in &rows {
        if by_naive(pos) {
            let (w, d, _) = naive
                .value(pos)
                .unwrap_or_else(|| panic!("{pos}: no naive value"));
            assert_eq!((w, d), (*wdl, *dtz), "{pos}: naive vs known.csv");
            n_naive += 1;
        }
        if pos.piece_count() > 3 {
            match &reference {
                Some(r) => {
                    let p = r.probe(pos).unwrap();
                    assert_eq!(p.wdl, *wdl, "{pos}: syzygy wdl vs known.csv");
                    let class = r.classify(*dtz, *wdl, p.dtz, pos).unwrap();
                    assert!(
                        !matches!(class, DtzClass::Mismatch | DtzClass::SingleValued),
                        "{pos}: {class:?}"
                    );
                    println!(
                        "{pos}: {} pieces, checked against Syzygy: dtz {} vs {dtz}: {class}",
                        pos.piece_count(),
                        p.dtz
                    );
                    n_syzygy += 1;
                }
                None if !by_naive(pos) => {
                    println!("{pos}: {} pieces: {SKIPPED}", pos.piece_count())
                }
                None => {}
            }
        }
    }
    println!(
        "known.csv: {} rows, {n_naive} agree with the naive solver, {n_syzygy} with Syzygy",
        rows.len()
    );
}
