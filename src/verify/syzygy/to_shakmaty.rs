//! A position of ours as a shakmaty antichess position, without going through FEN text.
//!
//! One copy, shared: the `syzygy` feature's comparison uses it as a module, and the tests
//! (`tests/common/mod.rs`) and `examples/bench_probe.rs`, which cannot reach a feature-gated
//! module, include this file with `#[path]`. So that the same text compiles in the library and
//! outside it, it names antitb's types through `super::`: whoever includes it brings `Color`,
//! `Position` and `Role` (from `rules`) into scope.

use super::{Color, Position, Role};
use shakmaty::variant::Antichess;
use shakmaty::{CastlingMode, FromSetup, PositionError, Setup};

/// `pos` for shakmaty (halfmove clock 0, en-passant square kept), or why shakmaty refuses it.
pub fn to_shakmaty(pos: &Position) -> Result<Antichess, Box<PositionError<Antichess>>> {
    let color = |c: Color| {
        if c == Color::White {
            shakmaty::Color::White
        } else {
            shakmaty::Color::Black
        }
    };
    let mut setup = Setup::empty();
    for (sq, piece) in pos.board().pieces() {
        let role = match piece.role {
            Role::King => shakmaty::Role::King,
            Role::Queen => shakmaty::Role::Queen,
            Role::Rook => shakmaty::Role::Rook,
            Role::Bishop => shakmaty::Role::Bishop,
            Role::Knight => shakmaty::Role::Knight,
            Role::Pawn => shakmaty::Role::Pawn,
        };
        setup.board.set_piece_at(
            shakmaty::Square::new(sq.index() as u32),
            shakmaty::Piece {
                color: color(piece.color),
                role,
            },
        );
    }
    setup.turn = color(pos.turn());
    setup.ep_square = pos
        .ep_square()
        .map(|s| shakmaty::Square::new(s.index() as u32));
    Antichess::from_setup(setup, CastlingMode::Standard).map_err(Box::new)
}
