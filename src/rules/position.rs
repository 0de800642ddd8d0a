//! An antichess position and its legal moves (lichess rules, SPEC.md §1).
//!
//! Captures are compulsory: if the side to move has any capture (en passant included), only
//! captures are legal. The king is an ordinary piece: it can be captured, it is never "in
//! check", and a side may have any number of kings. Pawns promote to Q, R, B, N or K. There is no
//! castling. The side to move **wins** when it has no pieces or no legal move.

use super::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, piece_attacks, rook_attacks,
};
use super::bitboard::Bitboard;
use super::board::Board;
use super::square::{Color, Piece, Role, Square};
use std::fmt;
use std::mem::MaybeUninit;

/// A move. `role` is the moving piece's role before the move.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Move {
    pub from: Square,
    pub to: Square,
    pub role: Role,
    /// Role of the captured piece (a pawn for en passant).
    pub capture: Option<Role>,
    pub promotion: Option<Role>,
    pub en_passant: bool,
}

impl Move {
    /// Zeroing moves reset the 50-move counter: captures and pawn moves.
    #[inline]
    pub fn is_zeroing(&self) -> bool {
        self.capture.is_some() || self.role == Role::Pawn
    }

    #[inline]
    pub fn is_capture(&self) -> bool {
        self.capture.is_some()
    }

    /// UCI text (`e2e4`, `a7a8k`).
    pub fn uci(&self) -> String {
        let mut s = format!("{}{}", self.from, self.to);
        if let Some(p) = self.promotion {
            s.push(p.upper_char().to_ascii_lowercase());
        }
        s
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.uci())
    }
}

/// A fixed-capacity list of moves (no heap allocation in move generation).
///
/// The storage is left uninitialised: filling all 320 slots at every node took more than half
/// of the move generator's time (see the `SAFETY` note in [`MoveList::as_slice`]). Only the
/// first `len` entries are ever read.
#[derive(Clone)]
pub struct MoveList {
    len: usize,
    moves: [MaybeUninit<Move>; MoveList::CAPACITY],
}

impl MoveList {
    /// More than any reachable antichess position can have (chess's maximum is 218; promotions
    /// to king add at most 25%).
    pub const CAPACITY: usize = 320;

    #[inline]
    pub fn new() -> MoveList {
        MoveList {
            len: 0,
            moves: [const { MaybeUninit::uninit() }; MoveList::CAPACITY],
        }
    }

    /// Append a move. Panics when the list is full (a bug: no position has that many moves).
    #[inline]
    pub fn push(&mut self, m: Move) {
        self.moves[self.len].write(m);
        self.len += 1;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn as_slice(&self) -> &[Move] {
        let init = &self.moves[..self.len];
        // SAFETY: `push` is the only writer and it initialises `moves[len]` before incrementing
        // `len` (`clear` only lowers `len`), so the first `len` entries are initialised, and
        // `MaybeUninit<Move>` has the layout of `Move`. Measured with scripts/bench-perft.sh,
        // "movegen" table (every node builds its move list): ours/shakmaty went from 1.0–1.2
        // with an initialised `[Move; 320]` to 2.9–3.0 with this (noisy 2-core machine); by
        // callgrind over 27M nodes, 209 → 86 instructions per node (shakmaty: 221).
        // Exercised by every move generation: tests/rules_perft.rs `antichess_suite` and
        // tests/rules_shakmaty.rs compare the moves read through it with shakmaty's.
        unsafe { &*(init as *const [MaybeUninit<Move>] as *const [Move]) }
    }

    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, Move> {
        self.as_slice().iter()
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// How a game ended.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Outcome {
    /// The winner (in antichess the side to move wins when it has no pieces or no legal move).
    Win(Color),
    Draw,
}

/// A position: placement, side to move, en-passant square, move counters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    pub(crate) board: Board,
    pub(crate) turn: Color,
    /// Set after a double pawn push: the square jumped over. Only kept when the side to move has
    /// a pawn that could capture there (so equal positions compare equal).
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
}

impl Default for Position {
    fn default() -> Self {
        Position::startpos()
    }
}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        super::fen::parse_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1")
            .expect("start position FEN is valid")
    }

    /// A position from a board and side to move, no en passant, counters 0 and 1.
    pub fn from_board(board: Board, turn: Color) -> Position {
        Position {
            board,
            turn,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }

    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }

    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// The position with its move counters cleared: what makes two positions the same for
    /// proofs and repetitions (placement, side to move, en-passant square), as a value to
    /// compare or hash.
    #[inline]
    pub fn without_counters(&self) -> Position {
        Position {
            halfmoves: 0,
            fullmoves: 1,
            ..*self
        }
    }

    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    pub fn set_halfmoves(&mut self, n: u32) {
        self.halfmoves = n;
    }

    #[inline]
    pub fn us(&self) -> Bitboard {
        self.board.by_color(self.turn)
    }

    #[inline]
    pub fn them(&self) -> Bitboard {
        self.board.by_color(!self.turn)
    }

    /// Number of pieces on the board.
    pub fn piece_count(&self) -> u32 {
        self.board.occupied().count()
    }

    /// The same position with colours swapped and the board flipped upside down.
    pub fn swap_colors(&self) -> Position {
        Position {
            board: self.board.swap_colors(),
            turn: !self.turn,
            ep_square: self.ep_square.map(Square::flip_vertical),
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }

    /// Squares holding pawns of the side to move that can capture en passant.
    #[inline]
    fn ep_capturers(&self) -> Bitboard {
        match self.ep_square {
            Some(ep) => pawn_attacks(!self.turn, ep) & self.us() & self.board.by_role(Role::Pawn),
            None => Bitboard::EMPTY,
        }
    }

    /// Does the side to move have a capture (en passant included)? Then only captures are legal.
    #[inline]
    pub fn has_capture(&self) -> bool {
        let us = self.us();
        let them = self.them();
        let occ = self.board.occupied();
        let pawns = self.board.by_role(Role::Pawn) & us;
        if pawn_attacks_set(self.turn, pawns).0 & them.0 != 0 || self.ep_capturers().any() {
            return true;
        }
        for role in Role::PIECES {
            for sq in self.board.by_role(role) & us {
                if (piece_attacks(role, sq, occ) & them).any() {
                    return true;
                }
            }
        }
        false
    }

    fn push_pawn_move(&self, list: &mut MoveList, from: Square, to: Square, capture: Option<Role>) {
        if to.rank() == 0 || to.rank() == 7 {
            for p in Role::PROMOTIONS {
                list.push(Move {
                    from,
                    to,
                    role: Role::Pawn,
                    capture,
                    promotion: Some(p),
                    en_passant: false,
                });
            }
        } else {
            list.push(Move {
                from,
                to,
                role: Role::Pawn,
                capture,
                promotion: None,
                en_passant: false,
            });
        }
    }

    /// Every capture of the side to move (en passant included).
    pub fn captures(&self, list: &mut MoveList) {
        let us = self.us();
        let them = self.them();
        let occ = self.board.occupied();
        for role in Role::PIECES {
            for from in self.board.by_role(role) & us {
                for to in piece_attacks(role, from, occ) & them {
                    list.push(Move {
                        from,
                        to,
                        role,
                        capture: self.board.role_at(to),
                        promotion: None,
                        en_passant: false,
                    });
                }
            }
        }
        for from in self.board.by_role(Role::Pawn) & us {
            for to in pawn_attacks(self.turn, from) & them {
                self.push_pawn_move(list, from, to, self.board.role_at(to));
            }
        }
        if let Some(ep) = self.ep_square {
            for from in self.ep_capturers() {
                list.push(Move {
                    from,
                    to: ep,
                    role: Role::Pawn,
                    capture: Some(Role::Pawn),
                    promotion: None,
                    en_passant: true,
                });
            }
        }
    }

    /// Does the side to move have a non-capturing move (legal only if
    /// [`Position::has_capture`] is false)? Without one, and without a capture, it has won.
    #[inline]
    pub fn has_quiet_move(&self) -> bool {
        let pawns = self.board.by_role(Role::Pawn) & self.us();
        self.has_quiet_piece_move()
            || (pawns.shift_forward(self.turn.is_white()) & !self.board.occupied()).any()
    }

    /// Does the side to move have a non-capturing move of a piece other than a pawn?
    #[inline]
    pub fn has_quiet_piece_move(&self) -> bool {
        let us = self.us();
        let occ = self.board.occupied();
        for role in Role::PIECES {
            for from in self.board.by_role(role) & us {
                if (piece_attacks(role, from, occ) & !occ).any() {
                    return true;
                }
            }
        }
        false
    }

    /// Every non-capturing move (legal only if [`Position::has_capture`] is false): the
    /// pieces' moves, then the pawns' ([`Position::quiet_pawn_moves`]).
    pub fn quiet_moves(&self, list: &mut MoveList) {
        let us = self.us();
        let occ = self.board.occupied();
        for role in Role::PIECES {
            for from in self.board.by_role(role) & us {
                for to in piece_attacks(role, from, occ) & !occ {
                    list.push(Move {
                        from,
                        to,
                        role,
                        capture: None,
                        promotion: None,
                        en_passant: false,
                    });
                }
            }
        }
        self.quiet_pawn_moves(list);
    }

    /// The non-capturing pawn moves (pushes, double steps and promotions): the zeroing
    /// moves of a position without a capture.
    pub fn quiet_pawn_moves(&self, list: &mut MoveList) {
        let empty = !self.board.occupied();
        let white = self.turn.is_white();
        let step: i32 = if white { 8 } else { -8 };
        let start_rank = if white { 1 } else { 6 };
        for from in self.board.by_role(Role::Pawn) & self.us() {
            let Some(to) = from.offset(step) else {
                continue;
            };
            if empty.contains(to) {
                self.push_pawn_move(list, from, to, None);
                if from.rank() == start_rank {
                    let to2 = to.offset(step).expect("double step stays on the board");
                    if empty.contains(to2) {
                        list.push(Move {
                            from,
                            to: to2,
                            role: Role::Pawn,
                            capture: None,
                            promotion: None,
                            en_passant: false,
                        });
                    }
                }
            }
        }
    }

    /// All legal moves: the captures if there are any, else the quiet moves.
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// [`Position::legal_moves`] written into `list` (emptied first), which the caller keeps:
    /// a hot loop saves copying the returned list.
    #[inline]
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        list.clear();
        self.captures(list);
        if list.is_empty() {
            self.quiet_moves(list);
        }
    }

    /// Number of legal moves, counted from attack sets without building any move (perft's last
    /// ply). A promotion counts 5 (Q, R, B, N, K).
    pub fn count_legal_moves(&self) -> usize {
        let captures = self.count_captures();
        if captures > 0 {
            captures
        } else {
            self.count_quiet_moves()
        }
    }

    /// Number of captures (en passant included), promotions counted 5 times.
    fn count_captures(&self) -> usize {
        let b = &self.board;
        let us = self.us();
        let them = self.them();
        let occ = b.occupied();
        let queens = b.by_role(Role::Queen);
        let mut n = 0;
        for sq in b.by_role(Role::King) & us {
            n += (king_attacks(sq) & them).count();
        }
        for sq in b.by_role(Role::Knight) & us {
            n += (knight_attacks(sq) & them).count();
        }
        for sq in (b.by_role(Role::Bishop) | queens) & us {
            n += (bishop_attacks(sq, occ) & them).count();
        }
        for sq in (b.by_role(Role::Rook) | queens) & us {
            n += (rook_attacks(sq, occ) & them).count();
        }
        // Each target square of one capture direction belongs to exactly one pawn.
        let (left, right) = pawn_attacks_split(self.turn, b.by_role(Role::Pawn) & us);
        for targets in [left & them, right & them] {
            n += (targets & !Bitboard::BACKRANKS).count()
                + 5 * (targets & Bitboard::BACKRANKS).count();
        }
        n as usize + self.ep_capturers().count() as usize
    }

    /// Number of non-capturing moves, promotions counted 5 times.
    fn count_quiet_moves(&self) -> usize {
        let b = &self.board;
        let us = self.us();
        let occ = b.occupied();
        let empty = !occ;
        let queens = b.by_role(Role::Queen);
        let mut n = 0;
        for sq in b.by_role(Role::King) & us {
            n += (king_attacks(sq) & empty).count();
        }
        for sq in b.by_role(Role::Knight) & us {
            n += (knight_attacks(sq) & empty).count();
        }
        for sq in (b.by_role(Role::Bishop) | queens) & us {
            n += (bishop_attacks(sq, occ) & empty).count();
        }
        for sq in (b.by_role(Role::Rook) | queens) & us {
            n += (rook_attacks(sq, occ) & empty).count();
        }
        let white = self.turn.is_white();
        let single = (b.by_role(Role::Pawn) & us).shift_forward(white) & empty;
        let third_rank = Bitboard::rank(if white { 2 } else { 5 });
        let double = (single & third_rank).shift_forward(white) & empty;
        n += (single & !Bitboard::BACKRANKS).count() + 5 * (single & Bitboard::BACKRANKS).count();
        n += double.count();
        n as usize
    }

    /// Play a move known to be legal in this position.
    pub fn play(&mut self, m: &Move) {
        let us = self.turn;
        if m.en_passant {
            let victim = Square::from_coords(m.to.file(), m.from.rank());
            self.board.clear(victim);
        } else if m.capture.is_some() {
            self.board.clear(m.to);
        }
        self.board.clear(m.from);
        let role = m.promotion.unwrap_or(m.role);
        self.board.put(m.to, Piece { color: us, role });
        self.ep_square = None;
        if m.role == Role::Pawn && m.from.rank().abs_diff(m.to.rank()) == 2 {
            let ep = Square::from_coords(m.from.file(), (m.from.rank() + m.to.rank()) / 2);
            // Keep the square only when an en-passant capture is really possible.
            if (pawn_attacks(us, ep) & self.board.by_color(!us) & self.board.by_role(Role::Pawn))
                .any()
            {
                self.ep_square = Some(ep);
            }
        }
        self.halfmoves = if m.is_zeroing() {
            0
        } else {
            self.halfmoves + 1
        };
        if !us.is_white() {
            self.fullmoves += 1;
        }
        self.turn = !us;
    }

    /// The position after `m`.
    #[inline]
    pub fn after(&self, m: &Move) -> Position {
        let mut p = *self;
        p.play(m);
        p
    }

    /// Is the game over with the side to move winning (no pieces or no legal move)?
    pub fn is_won_by_side_to_move(&self) -> bool {
        self.us().is_empty() || self.legal_moves().is_empty()
    }

    /// The bishops rule (SPEC.md §1): only bishops on the board, White's all on one colour of
    /// square and Black's all on the other. No capture can ever happen.
    pub fn is_insufficient_material(&self) -> bool {
        let occ = self.board.occupied();
        if occ != self.board.by_role(Role::Bishop) {
            return false;
        }
        let (w, b) = (
            self.board.by_color(Color::White),
            self.board.by_color(Color::Black),
        );
        if w.is_empty() || b.is_empty() {
            return false;
        }
        let light = Bitboard::LIGHT_SQUARES;
        let dark = Bitboard::DARK_SQUARES;
        ((w & dark).is_empty() && (b & light).is_empty())
            || ((w & light).is_empty() && (b & dark).is_empty())
    }

    /// The outcome by the rules that depend on this position alone: a side with no pieces or no
    /// legal move wins; the bishops rule and the 50-move rule (halfmove clock ≥ 100) draw.
    /// Threefold repetition needs the game history: see [`super::game::Game`].
    pub fn outcome(&self) -> Option<Outcome> {
        if self.is_won_by_side_to_move() {
            Some(Outcome::Win(self.turn))
        } else if self.is_insufficient_material() || self.halfmoves >= 100 {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    /// Find the legal move from `from` to `to` (with `promotion`), if there is one.
    pub fn find_move(&self, from: Square, to: Square, promotion: Option<Role>) -> Option<Move> {
        self.legal_moves()
            .iter()
            .copied()
            .find(|m| m.from == from && m.to == to && m.promotion == promotion)
    }
}

/// Union of squares attacked by a set of pawns of `color`.
#[inline]
pub fn pawn_attacks_set(color: Color, pawns: Bitboard) -> Bitboard {
    let (left, right) = pawn_attacks_split(color, pawns);
    left | right
}

/// Squares attacked by a set of pawns of `color`, towards the a-file and towards the h-file.
/// Each square of either set is attacked by exactly one pawn in that direction.
#[inline]
fn pawn_attacks_split(color: Color, pawns: Bitboard) -> (Bitboard, Bitboard) {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let p = pawns.0;
    if color.is_white() {
        (Bitboard((p & NOT_A) << 7), Bitboard((p & NOT_H) << 9))
    } else {
        (Bitboard((p & NOT_A) >> 9), Bitboard((p & NOT_H) >> 7))
    }
}

/// Count leaf nodes of the legal move tree to `depth` plies (move generator check). The last ply
/// is counted by [`Position::count_legal_moves`], without building moves.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if depth == 1 {
        return pos.count_legal_moves() as u64;
    }
    pos.legal_moves()
        .iter()
        .map(|m| perft(&pos.after(m), depth - 1))
        .sum()
}
