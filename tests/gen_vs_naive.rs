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

#[test]
fn generator_equals_naive_solver_up_to_3_pieces() {
    let naive = naive::solve_all(3);
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
