//! Position ↔ index for one material, per side to move.
//!
//! # Layout
//! The pieces of the canonical material are put in a fixed order of *groups* (identical
//! coloured pieces). With pawns, the pawn groups come first (the leading group is White's pawns
//! if White has any, else Black's), so the index prefix is the pawn configuration and every
//! configuration is one contiguous range. Without pawns the leading group is a unique piece if
//! there is one. Each piece has a 6-bit square digit, except the first, whose square is replaced
//! by its number in the *leading domain*:
//!
//! ```text
//! index = d(sq0) · 64^(k-1) + sq1 · 64^(k-2) + … + sq(k-1)
//! ```
//!
//! * pawnless: domain = the 10 squares of the a1–d1–d4 triangle (8-fold symmetry); the
//!   leading group is a unique piece if there is one, else the smallest group (2 or 3 identical
//!   pieces, whose lowest square is the leading one);
//! * with pawns: domain = files a–d, ranks 2–7, 24 squares (left–right mirror).
//!
//! This is a *sparse* index (DESIGN.md): moving a piece changes one digit. Within a group the
//! squares are strictly increasing. A slot is **valid** iff its squares are distinct, no pawn
//! stands on rank 1 or 8, groups are sorted, and it is the *canonical* representative: the
//! smallest index among the images of the position under the symmetries that keep the first
//! piece in the domain. Other slots are never used (the generator marks them invalid).
//!
//! The side to move is a separate dimension (`side` 0 = White to move in the canonical
//! orientation). A position whose material is the colour swap of the table's is flipped upside
//! down and colour-swapped first. Symmetric materials store both sides.

use crate::rules::{Bitboard, Board, Color, Piece, Position, Role, Square};
use crate::table::Material;

/// The 10 squares of the a1–d1–d4 triangle.
const TRIANGLE: [u8; 10] = [0, 1, 2, 3, 9, 10, 11, 18, 19, 27];

/// One group of identical pieces.
#[derive(Clone, Copy, Debug)]
struct Group {
    piece: Piece,
    count: usize,
}

/// How the leading piece is restricted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Domain {
    Triangle,
    PawnHalf,
}

/// The index of one material. Cheap to build; build once per table.
#[derive(Clone, Debug)]
pub struct Index {
    material: Material,
    groups: Vec<Group>,
    domain: Domain,
    /// Domain number of each square (`u8::MAX` outside the domain).
    domain_of: [u8; 64],
    /// Square of each domain number.
    domain_squares: Vec<u8>,
    pieces: usize,
    /// Number of slots per side.
    size: u64,
    /// Symmetries to try (bit 2 = transpose, bit 1 = flip vertical, bit 0 = mirror).
    transforms: Vec<u8>,
    /// With a unique leading piece on a triangle domain: for each square of that piece, a bit
    /// mask of the symmetries that bring it into the triangle (1 or 2 of them).
    lead_transforms: Option<[u8; 64]>,
    /// Piece of each digit, and whether it is alone in its group.
    digits: Vec<(Piece, bool)>,
}

/// Apply symmetry `t` to a square.
#[inline]
pub fn transform_square(t: u8, sq: Square) -> Square {
    let mut s = sq;
    if t & 4 != 0 {
        s = s.flip_diagonal();
    }
    if t & 2 != 0 {
        s = s.flip_vertical();
    }
    if t & 1 != 0 {
        s = s.flip_horizontal();
    }
    s
}

#[inline]
fn flip_h(x: u64) -> u64 {
    let x = ((x >> 1) & 0x5555_5555_5555_5555) | ((x & 0x5555_5555_5555_5555) << 1);
    let x = ((x >> 2) & 0x3333_3333_3333_3333) | ((x & 0x3333_3333_3333_3333) << 2);
    ((x >> 4) & 0x0f0f_0f0f_0f0f_0f0f) | ((x & 0x0f0f_0f0f_0f0f_0f0f) << 4)
}

#[inline]
fn flip_diag(mut x: u64) -> u64 {
    const K1: u64 = 0x5500_5500_5500_5500;
    const K2: u64 = 0x3333_0000_3333_0000;
    const K4: u64 = 0x0f0f_0f0f_0000_0000;
    let mut t = K4 & (x ^ (x << 28));
    x ^= t ^ (t >> 28);
    t = K2 & (x ^ (x << 14));
    x ^= t ^ (t >> 14);
    t = K1 & (x ^ (x << 7));
    x ^= t ^ (t >> 7);
    x
}

/// Apply symmetry `t` to a set of squares.
#[inline]
pub fn transform_bb(t: u8, bb: Bitboard) -> Bitboard {
    let mut x = bb.0;
    if t & 4 != 0 {
        x = flip_diag(x);
    }
    if t & 2 != 0 {
        x = x.swap_bytes();
    }
    if t & 1 != 0 {
        x = flip_h(x);
    }
    Bitboard(x)
}

/// The side to move of section `side` (0 = White).
#[inline]
fn side_color(side: usize) -> Color {
    if side == 0 {
        Color::White
    } else {
        Color::Black
    }
}

impl Index {
    /// The index of a canonical material. Panics if `material` is not canonical or not a table
    /// (callers canonicalise first; this is a programming error, not input).
    pub fn new(material: Material) -> Index {
        assert!(material.is_table() && material == material.canonical());
        let mut groups: Vec<Group> = Vec::new();
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece { color, role };
                let count = material.count_of(piece) as usize;
                if count > 0 {
                    groups.push(Group { piece, count });
                }
            }
        }
        let domain = if material.has_pawns() {
            // Pawn groups first, White's before Black's.
            groups.sort_by_key(|g| (g.piece.role != Role::Pawn, g.piece.color, g.piece.role));
            Domain::PawnHalf
        } else {
            // The leading group is a unique piece if there is one, else the smallest group. The
            // triangle domain works for groups of up to 3 identical pieces: for every set of 2
            // or 3 squares some symmetry puts the lowest of them into the triangle (checked
            // exhaustively), and no table of up to 7 pieces needs a larger leading group.
            let pos = (0..groups.len())
                .min_by_key(|&i| groups[i].count)
                .expect("a table has pieces");
            let g = groups.remove(pos);
            assert!(
                g.count <= 3,
                "no index for a leading group of {} identical pieces",
                g.count
            );
            groups.insert(0, g);
            Domain::Triangle
        };
        let mut domain_of = [u8::MAX; 64];
        let domain_squares: Vec<u8> = match domain {
            Domain::Triangle => TRIANGLE.to_vec(),
            Domain::PawnHalf => (8..56).filter(|s| s % 8 < 4).collect(),
        };
        for (i, &s) in domain_squares.iter().enumerate() {
            domain_of[s as usize] = i as u8;
        }
        let pieces = material.count();
        let size = domain_squares.len() as u64 * 64u64.pow(pieces as u32 - 1);
        let transforms: Vec<u8> = if material.has_pawns() {
            vec![0, 1]
        } else {
            (0..8).collect()
        };
        let lead_transforms = (domain == Domain::Triangle && groups[0].count == 1).then(|| {
            let mut t = [0u8; 64];
            for sq in Square::all() {
                for &x in &transforms {
                    if domain_of[transform_square(x, sq).index()] != u8::MAX {
                        t[sq.index()] |= 1 << x;
                    }
                }
            }
            t
        });
        let digits = groups
            .iter()
            .flat_map(|g| std::iter::repeat_n((g.piece, g.count == 1), g.count))
            .collect();
        Index {
            material,
            groups,
            domain,
            domain_of,
            domain_squares,
            pieces,
            size,
            transforms,
            lead_transforms,
            digits,
        }
    }

    pub fn material(&self) -> Material {
        self.material
    }

    /// Slots per side to move.
    #[inline]
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of pieces.
    pub fn pieces(&self) -> usize {
        self.pieces
    }

    /// Number of leading pawn-configuration digits (0 without pawns): the pawns come first, so a
    /// configuration is the range of indices sharing the top `pawn_digits` digits.
    pub fn pawn_digits(&self) -> usize {
        self.groups
            .iter()
            .filter(|g| g.piece.role == Role::Pawn)
            .map(|g| g.count)
            .sum()
    }

    /// Slots in one pawn configuration (`64^(pieces - pawns)`).
    pub fn config_size(&self) -> u64 {
        64u64.pow((self.pieces - self.pawn_digits()) as u32)
    }

    /// The pawns of pawn configuration `config` (the top [`Index::pawn_digits`] digits of an
    /// index), or `None` if no valid slot has it (overlapping pawns, back rank, unsorted group).
    pub fn config_pawns(&self, config: u64) -> Option<Vec<(Color, Square)>> {
        let p = self.pawn_digits();
        let mut squares = vec![0u8; p];
        let mut rest = config;
        for i in (1..p).rev() {
            squares[i] = (rest % 64) as u8;
            rest /= 64;
        }
        squares[0] = *self.domain_squares.get(rest as usize)?;
        let mut out = Vec::with_capacity(p);
        let mut i = 0;
        for group in self.groups.iter().filter(|g| g.piece.role == Role::Pawn) {
            let mut prev: i32 = -1;
            for _ in 0..group.count {
                let s = squares[i];
                i += 1;
                if (s as i32) <= prev
                    || !(8..56).contains(&s)
                    || out
                        .iter()
                        .any(|&(_, q): &(Color, Square)| q.index() == s as usize)
                {
                    return None;
                }
                prev = s as i32;
                out.push((group.piece.color, Square::new(s as u32)));
            }
        }
        Some(out)
    }

    /// The square digits of a slot (the first digit already mapped from its domain number).
    #[inline]
    pub fn squares(&self, idx: u64) -> [u8; 16] {
        let mut squares = [0u8; 16];
        let mut rest = idx;
        for i in (1..self.pieces).rev() {
            squares[i] = (rest % 64) as u8;
            rest /= 64;
        }
        squares[0] = self.domain_squares[rest as usize];
        squares
    }

    /// The piece of digit `j` and whether it is alone in its group.
    #[inline]
    pub fn digit_piece(&self, j: usize) -> (Piece, bool) {
        self.digits[j]
    }

    /// Domain number of a square for the leading piece (`u8::MAX` outside the domain).
    #[inline]
    pub fn domain_number(&self, sq: Square) -> u8 {
        self.domain_of[sq.index()]
    }

    /// Weight of digit `j ≥ 1` in the index (`64^(pieces−1−j)`).
    #[inline]
    pub fn weight(&self, j: usize) -> u64 {
        1 << (6 * (self.pieces - 1 - j))
    }

    /// With the leading piece on `lead`, is the identity the only symmetry to try? Then moving a
    /// piece that is alone in its group, other than the leading one, changes just its digit.
    #[inline]
    pub fn identity_only(&self, lead: u8) -> bool {
        match self.domain {
            Domain::Triangle => self.lead_transforms.is_some_and(|t| t[lead as usize] == 1),
            Domain::PawnHalf => self.groups[0].count == 1,
        }
    }

    /// With a unique leading piece on `lead`: the bit mask of symmetries to try (bit `t` for
    /// symmetry `t`; the identity is always in it). `None` when the leading group has several
    /// pieces.
    #[inline]
    pub fn lead_symmetries(&self, lead: u8) -> Option<u8> {
        match self.domain {
            Domain::Triangle => self.lead_transforms.map(|t| t[lead as usize]),
            Domain::PawnHalf => (self.groups[0].count == 1).then_some(1),
        }
    }

    /// The index a board would have under symmetry `t` alone, if its leading piece lands in the
    /// domain (not necessarily canonical).
    #[inline]
    pub fn encode_under(&self, board: &Board, t: u8) -> Option<u64> {
        let mut sets = [Bitboard::EMPTY; 12];
        for (g, group) in self.groups.iter().enumerate() {
            sets[g] = board.by_piece(group.piece);
        }
        self.encode_sets(&sets, t)
    }

    /// Decode a slot known to be valid (no validity check: for the generator's hot loops).
    #[inline]
    pub fn decode_valid(&self, side: usize, idx: u64) -> Position {
        let board = self
            .board_of(idx, |_, _, _| true)
            .expect("nothing is refused");
        Position::from_board(board, side_color(side))
    }

    /// The board of slot `idx`: the pieces group by group on their digits' squares. `accept`
    /// sees each piece, its square and the square of the piece before it in its group, and
    /// may refuse the slot.
    #[inline]
    fn board_of(
        &self,
        idx: u64,
        mut accept: impl FnMut(Piece, u8, Option<u8>) -> bool,
    ) -> Option<Board> {
        let squares = self.squares(idx);
        let mut board = Board::empty();
        let mut i = 0;
        for group in &self.groups {
            let mut prev = None;
            for _ in 0..group.count {
                let s = squares[i];
                i += 1;
                if !accept(group.piece, s, prev) {
                    return None;
                }
                prev = Some(s);
                board.put(Square::new(s as u32), group.piece);
            }
        }
        Some(board)
    }

    /// The index of a placement given group by group (each group's squares as a bitboard), under
    /// symmetry `t`, if the first piece lands in the domain.
    #[inline]
    fn encode_sets(&self, sets: &[Bitboard; 12], t: u8) -> Option<u64> {
        let mut idx: u64 = 0;
        let mut first = true;
        for (g, group) in self.groups.iter().enumerate() {
            let bb = transform_bb(t, sets[g]);
            debug_assert_eq!(bb.count() as usize, group.count);
            for sq in bb {
                if first {
                    let d = self.domain_of[sq.index()];
                    if d == u8::MAX {
                        return None;
                    }
                    idx = d as u64;
                    first = false;
                } else {
                    idx = idx * 64 + sq.index() as u64;
                }
            }
        }
        Some(idx)
    }

    /// `(side, index)` of a position of this material (either colour orientation), or `None`
    /// if the material does not match. En-passant rights are ignored.
    #[inline]
    pub fn encode(&self, pos: &Position) -> Option<(usize, u64)> {
        let mat = Material::of_position(pos);
        let (board, turn) = if mat == self.material {
            (*pos.board(), pos.turn())
        } else if mat.swapped() == self.material {
            (pos.board().swap_colors(), !pos.turn())
        } else {
            return None;
        };
        Some((turn.index(), self.encode_board(&board)))
    }

    /// Index of a board whose material is exactly the table's (canonical orientation).
    #[inline]
    pub fn encode_board(&self, board: &Board) -> u64 {
        let mut sets = [Bitboard::EMPTY; 12];
        for (g, group) in self.groups.iter().enumerate() {
            sets[g] = board.by_piece(group.piece);
        }
        let mut best = u64::MAX;
        if let Some(lead) = &self.lead_transforms {
            let sq = sets[0].first().expect("the leading group is not empty");
            let mut mask = lead[sq.index()];
            while mask != 0 {
                let t = mask.trailing_zeros() as u8;
                mask &= mask - 1;
                if let Some(i) = self.encode_sets(&sets, t) {
                    best = best.min(i);
                }
            }
            return best;
        }
        for &t in &self.transforms {
            if let Some(i) = self.encode_sets(&sets, t) {
                best = best.min(i);
            }
        }
        debug_assert!(
            best != u64::MAX,
            "no symmetry puts the leading piece in its domain"
        );
        best
    }

    /// The position of a slot, if the slot is valid (distinct squares, pawns on ranks 2–7,
    /// sorted groups, canonical).
    pub fn decode(&self, side: usize, idx: u64) -> Option<Position> {
        if idx >= self.size {
            return None;
        }
        let mut occupied = 0u64;
        let mut lead = 0;
        let board = self.board_of(idx, |piece, s, prev| {
            if occupied == 0 {
                lead = s;
            }
            let ok = prev.is_none_or(|p| s > p)
                && occupied & (1 << s) == 0
                && (piece.role != Role::Pawn || (8..56).contains(&s));
            occupied |= 1 << s;
            ok
        })?;
        if !self.identity_only(lead) && self.encode_board(&board) != idx {
            return None;
        }
        Some(Position::from_board(board, side_color(side)))
    }

    /// Description of the index for file headers: domain kind, group order.
    pub fn params(&self) -> Vec<u8> {
        let mut v = vec![
            match self.domain {
                Domain::Triangle => 0,
                Domain::PawnHalf => 2,
            },
            self.groups.len() as u8,
        ];
        for g in &self.groups {
            v.push(g.piece.color.index() as u8);
            v.push(g.piece.role.index() as u8);
            v.push(g.count as u8);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitboard_transforms_match_square_transforms() {
        for t in 0..8 {
            for sq in Square::all() {
                assert_eq!(
                    transform_bb(t, Bitboard::from_square(sq)),
                    Bitboard::from_square(transform_square(t, sq))
                );
            }
        }
    }

    #[test]
    fn round_trip_small_materials() {
        for n in 2..=3 {
            for m in Material::all_with_pieces(n) {
                let index = Index::new(m);
                let mut valid = 0u64;
                for idx in 0..index.size() {
                    if let Some(pos) = index.decode(0, idx) {
                        valid += 1;
                        assert_eq!(index.encode(&pos), Some((0, idx)));
                        // Every symmetric image and the colour swap map back to the same slot.
                        for t in index.transforms.clone() {
                            let mut b = Board::empty();
                            for (sq, p) in pos.board().pieces() {
                                b.put(transform_square(t, sq), p);
                            }
                            let img = Position::from_board(b, Color::White);
                            assert_eq!(index.encode(&img), Some((0, idx)), "{m} t={t}");
                            if !m.is_symmetric() {
                                assert_eq!(index.encode(&img.swap_colors()), Some((0, idx)));
                            }
                        }
                    }
                }
                assert!(valid > 0, "{m}");
            }
        }
    }
}
