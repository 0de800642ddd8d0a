//! Un-moves: the retrograde step of the generator.
//!
//! Inside one table only quiet moves of non-pawn pieces link positions (DESIGN.md): captures and
//! pawn moves leave the table or the pawn configuration. So the generator needs just one kind of
//! un-move: the side that did *not* move in `child` (it moved last) takes one of its K/Q/R/B/N
//! pieces back to an empty square from which that piece reaches its current square. Non-pawn
//! movement is symmetric, so the origin squares are the piece's attacks from its current square
//! that are empty. Whether the predecessor is a legal *quiet* move position (the mover had no
//! capture) is the caller's business.

use super::attacks::piece_attacks;
use super::position::Position;
use super::square::{Piece, Role, Square};

/// One un-move: the piece on `to` goes back to `from`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct UnMove {
    pub from: Square,
    pub to: Square,
    pub role: Role,
}

/// Call `f` for every quiet non-pawn un-move of the side that moved last, with the predecessor.
/// The predecessor has no en-passant square and the halfmove clock of `child` minus one
/// (saturating).
#[inline]
pub fn for_each_unmove(child: &Position, mut f: impl FnMut(UnMove, &Position)) {
    let mover = !child.turn;
    let occ = child.board.occupied();
    let empty = !occ;
    for role in Role::PIECES {
        for to in child.board.by_role(role) & child.board.by_color(mover) {
            for from in piece_attacks(role, to, occ) & empty {
                let mut p = *child;
                p.board.clear(to);
                p.board.put(from, Piece { color: mover, role });
                p.turn = mover;
                p.ep_square = None;
                p.halfmoves = child.halfmoves.saturating_sub(1);
                f(UnMove { from, to, role }, &p);
            }
        }
    }
}
