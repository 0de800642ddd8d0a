//! FEN in and out, with one error variant per kind of mistake.
//!
//! Accepts 4 to 6 fields (halfmove clock and fullmove number default to 0 and 1). Castling rights
//! must be `-`: antichess has no castling. An en-passant square must fit the board (right rank,
//! an enemy pawn just in front of it, the square and the one behind it empty); it is then kept
//! only if the side to move can actually capture there, so equal positions compare equal.

use super::attacks::pawn_attacks;
use super::board::Board;
use super::position::Position;
use super::square::{Color, Piece, Role, Square};
use std::fmt;

/// What is wrong with a FEN.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FenError {
    /// Not 4 to 6 space-separated fields.
    FieldCount(usize),
    /// The board does not have 8 ranks.
    RankCount(usize),
    /// A rank does not describe exactly 8 squares (rank number 1..8 as printed).
    RankLength(u32),
    /// A character that is neither a piece letter nor a digit 1..8.
    PieceLetter(char),
    /// A pawn on the first or last rank.
    PawnOnBackRank(Square),
    /// Side to move is not `w` or `b`.
    SideToMove(String),
    /// Castling rights other than `-`.
    CastlingRights(String),
    /// The en-passant field is not `-` or a square.
    EnPassantSyntax(String),
    /// The en-passant square does not fit the board.
    EnPassantInconsistent(Square),
    HalfmoveClock(String),
    FullmoveNumber(String),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::FieldCount(n) => write!(f, "expected 4 to 6 fields, found {n}"),
            FenError::RankCount(n) => write!(f, "board has {n} ranks, expected 8"),
            FenError::RankLength(r) => write!(f, "rank {r} does not describe exactly 8 squares"),
            FenError::PieceLetter(c) => write!(f, "invalid piece letter '{c}'"),
            FenError::PawnOnBackRank(sq) => write!(f, "pawn on back rank ({sq})"),
            FenError::SideToMove(s) => write!(f, "side to move must be 'w' or 'b', found '{s}'"),
            FenError::CastlingRights(s) => {
                write!(
                    f,
                    "castling rights '{s}' given, but antichess has no castling (use '-')"
                )
            }
            FenError::EnPassantSyntax(s) => write!(f, "invalid en-passant field '{s}'"),
            FenError::EnPassantInconsistent(sq) => {
                write!(
                    f,
                    "en-passant square {sq} is inconsistent with the board and side to move"
                )
            }
            FenError::HalfmoveClock(s) => write!(f, "invalid halfmove clock '{s}'"),
            FenError::FullmoveNumber(s) => write!(f, "invalid fullmove number '{s}'"),
        }
    }
}

impl std::error::Error for FenError {}

fn parse_board(s: &str) -> Result<Board, FenError> {
    let ranks: Vec<&str> = s.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::RankCount(ranks.len()));
    }
    let mut board = Board::empty();
    for (i, text) in ranks.iter().enumerate() {
        let rank = 7 - i as u32;
        let mut file = 0u32;
        for c in text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(FenError::PieceLetter(c));
                }
                file += d;
            } else {
                let piece = Piece::from_char(c).ok_or(FenError::PieceLetter(c))?;
                if file >= 8 {
                    return Err(FenError::RankLength(rank + 1));
                }
                let sq = Square::from_coords(file, rank);
                if piece.role == Role::Pawn && (rank == 0 || rank == 7) {
                    return Err(FenError::PawnOnBackRank(sq));
                }
                board.put(sq, piece);
                file += 1;
            }
            if file > 8 {
                return Err(FenError::RankLength(rank + 1));
            }
        }
        if file != 8 {
            return Err(FenError::RankLength(rank + 1));
        }
    }
    Ok(board)
}

/// Parse a FEN (antichess: castling must be `-`).
pub fn parse_fen(fen: &str) -> Result<Position, FenError> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    if !(4..=6).contains(&fields.len()) {
        return Err(FenError::FieldCount(fields.len()));
    }
    let board = parse_board(fields[0])?;
    let turn = match fields[1] {
        "w" => Color::White,
        "b" => Color::Black,
        s => return Err(FenError::SideToMove(s.to_string())),
    };
    if fields[2] != "-" {
        return Err(FenError::CastlingRights(fields[2].to_string()));
    }
    let ep_square = match fields[3] {
        "-" => None,
        s => {
            let sq = Square::from_ascii(s.as_bytes())
                .ok_or_else(|| FenError::EnPassantSyntax(s.to_string()))?;
            // White to move: the square is on rank 6, a black pawn on rank 5 just passed it.
            // The rank is checked first: a square on the edge has no square beyond it.
            let (rank, dir) = if turn.is_white() { (5, -8) } else { (2, 8) };
            let occ = board.occupied();
            let ok = sq.rank() == rank
                && match (sq.offset(dir), sq.offset(-dir)) {
                    (Some(pusher), Some(origin)) => {
                        board
                            .by_piece(Piece {
                                color: !turn,
                                role: Role::Pawn,
                            })
                            .contains(pusher)
                            && !occ.contains(sq)
                            && !occ.contains(origin)
                    }
                    _ => false,
                };
            if !ok {
                return Err(FenError::EnPassantInconsistent(sq));
            }
            let capturers = pawn_attacks(!turn, sq)
                & board.by_piece(Piece {
                    color: turn,
                    role: Role::Pawn,
                });
            capturers.any().then_some(sq)
        }
    };
    let halfmoves = match fields.get(4) {
        Some(s) => s
            .parse::<u32>()
            .map_err(|_| FenError::HalfmoveClock(s.to_string()))?,
        None => 0,
    };
    let fullmoves = match fields.get(5) {
        Some(s) => match s.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(FenError::FullmoveNumber(s.to_string())),
        },
        None => 1,
    };
    Ok(Position {
        board,
        turn,
        ep_square,
        halfmoves,
        fullmoves,
    })
}

/// The board part of a FEN.
pub fn board_fen(board: &Board) -> String {
    let mut s = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board.piece_at(Square::from_coords(file, rank)) {
                Some(p) => {
                    if empty > 0 {
                        s.push(char::from_digit(empty, 10).expect("digit"));
                        empty = 0;
                    }
                    s.push(p.char());
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            s.push(char::from_digit(empty, 10).expect("digit"));
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s
}

impl fmt::Display for Position {
    /// The full six-field FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ep = self.ep_square.map_or("-".to_string(), |s| s.to_string());
        write!(
            f,
            "{} {} - {} {} {}",
            board_fen(&self.board),
            self.turn.char(),
            ep,
            self.halfmoves,
            self.fullmoves
        )
    }
}

impl std::str::FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        parse_fen(s)
    }
}
