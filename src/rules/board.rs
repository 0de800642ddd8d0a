//! Piece placement: one bitboard per colour and one per role.

use super::bitboard::Bitboard;
use super::square::{Color, Piece, Role, Square};

/// Where the pieces stand. Invariant: the colour sets are disjoint, the role sets are disjoint,
/// and their unions are equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Board {
    by_color: [Bitboard; 2],
    by_role: [Bitboard; 6],
}

impl Board {
    pub const fn empty() -> Board {
        Board {
            by_color: [Bitboard::EMPTY; 2],
            by_role: [Bitboard::EMPTY; 6],
        }
    }

    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    #[inline]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.by_color(piece.color) & self.by_role(piece.role)
    }

    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|r| self.by_role[r.index()].contains(sq))
    }

    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].contains(sq) {
            Some(Color::White)
        } else if self.by_color[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Some(Piece {
            color: self.color_at(sq)?,
            role: self.role_at(sq)?,
        })
    }

    /// Put a piece on an empty square.
    #[inline]
    pub fn put(&mut self, sq: Square, piece: Piece) {
        debug_assert!(!self.occupied().contains(sq));
        self.by_color[piece.color.index()] = self.by_color[piece.color.index()].with(sq);
        self.by_role[piece.role.index()] = self.by_role[piece.role.index()].with(sq);
    }

    /// Remove whatever stands on `sq`.
    #[inline]
    pub fn clear(&mut self, sq: Square) {
        let m = !Bitboard::from_square(sq);
        for b in &mut self.by_color {
            *b &= m;
        }
        for b in &mut self.by_role {
            *b &= m;
        }
    }

    /// Colour-swapped and upside-down board (White's pieces become Black's on mirrored squares).
    pub fn swap_colors(&self) -> Board {
        let mut b = Board::empty();
        b.by_color = [
            self.by_color[1].flip_vertical(),
            self.by_color[0].flip_vertical(),
        ];
        for (i, r) in self.by_role.iter().enumerate() {
            b.by_role[i] = r.flip_vertical();
        }
        b
    }

    /// Every piece with its square, White first, then by role and square.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        Color::ALL.into_iter().flat_map(move |color| {
            Role::ALL.into_iter().flat_map(move |role| {
                self.by_piece(Piece { color, role })
                    .map(move |sq| (sq, Piece { color, role }))
            })
        })
    }
}
