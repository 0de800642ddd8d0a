//! The rules of antichess (lichess rules; SPEC.md §1): pure, no I/O.
//!
//! `square` (Square, Color, Role, Piece) → `bitboard` → `attacks` (const-fn tables) → `board` →
//! `position` (legal moves, make move, outcome) → `fen`, `notation` (UCI, SAN), `unmove` (the
//! generator's retrograde step), `game` (threefold repetition).

pub mod attacks;
pub mod bitboard;
pub mod board;
pub mod fen;
pub mod game;
pub mod notation;
pub mod position;
pub mod square;
pub mod unmove;

pub use bitboard::Bitboard;
pub use board::Board;
pub use fen::{FenError, parse_fen};
pub use game::Game;
pub use position::{Move, MoveList, Outcome, Position, perft};
pub use square::{Color, Piece, Role, Square};
pub use unmove::{UnMove, for_each_unmove};
