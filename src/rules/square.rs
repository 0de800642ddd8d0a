//! Squares, colours, roles and pieces: the small value types of the rules core.
//!
//! A [`Square`] is a `u8` in `0..64`, `a1 = 0`, `b1 = 1`, …, `h8 = 63` (little-endian
//! rank-file mapping), so `file = sq & 7` and `rank = sq >> 3`. Flipping the board vertically is
//! `sq ^ 56`, mirroring left-right is `sq ^ 7`, and the a1–h8 transpose swaps file and rank.

use std::fmt;

/// One of the 64 squares; `a1 = 0`, `h8 = 63`.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Square(u8);

impl Square {
    pub const A1: Square = Square(0);
    pub const H8: Square = Square(63);

    /// The square with this number. Panics if `index >= 64` (a bug, never input).
    #[inline]
    pub const fn new(index: u32) -> Square {
        assert!(index < 64);
        Square(index as u8)
    }

    /// Square from file (0 = a) and rank (0 = first rank).
    #[inline]
    pub const fn from_coords(file: u32, rank: u32) -> Square {
        Square::new(rank * 8 + file)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn file(self) -> u32 {
        (self.0 & 7) as u32
    }

    #[inline]
    pub const fn rank(self) -> u32 {
        (self.0 >> 3) as u32
    }

    /// Mirror top to bottom (a1 ↔ a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// Mirror left to right (a1 ↔ h1).
    #[inline]
    pub const fn flip_horizontal(self) -> Square {
        Square(self.0 ^ 7)
    }

    /// Mirror in the a1–h8 diagonal (b1 ↔ a2).
    #[inline]
    pub const fn flip_diagonal(self) -> Square {
        Square(((self.0 >> 3) | (self.0 << 3)) & 63)
    }

    /// Is this a light square (h1 is light, a1 is dark)?
    #[inline]
    pub const fn is_light(self) -> bool {
        (self.file() + self.rank()) % 2 == 1
    }

    /// Square `delta` steps away in index space, if it stays on the board.
    #[inline]
    pub const fn offset(self, delta: i32) -> Option<Square> {
        let s = self.0 as i32 + delta;
        if s >= 0 && s < 64 {
            Some(Square(s as u8))
        } else {
            None
        }
    }

    /// Parse `e4`-style coordinates.
    pub fn from_ascii(s: &[u8]) -> Option<Square> {
        match s {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Some(Square::from_coords(
                u32::from(f - b'a'),
                u32::from(r - b'1'),
            )),
            _ => None,
        }
    }

    /// Iterate over all 64 squares, a1 first.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square::new)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file() as u8) as char,
            (b'1' + self.rank() as u8) as char
        )
    }
}

/// White or Black.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Color {
    White = 0,
    Black = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub const fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    #[inline]
    pub const fn is_white(self) -> bool {
        matches!(self, Color::White)
    }

    /// `white` if White, else `black`.
    #[inline]
    pub fn fold<T>(self, white: T, black: T) -> T {
        if self.is_white() { white } else { black }
    }

    pub const fn char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.other()
    }
}

/// Piece kinds in antitb's canonical order K Q R B N P (SPEC.md §6).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Role {
    King = 0,
    Queen = 1,
    Rook = 2,
    Bishop = 3,
    Knight = 4,
    Pawn = 5,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::King,
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
        Role::Pawn,
    ];
    /// Every role but the pawn, in the order moves are generated.
    pub const PIECES: [Role; 5] = [
        Role::King,
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
    ];
    /// What a pawn may promote to, in the order moves are generated.
    pub const PROMOTIONS: [Role; 5] = [
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
        Role::King,
    ];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub const fn from_index(i: usize) -> Role {
        Role::ALL[i]
    }

    /// Upper-case letter: K Q R B N P.
    pub const fn upper_char(self) -> char {
        match self {
            Role::King => 'K',
            Role::Queen => 'Q',
            Role::Rook => 'R',
            Role::Bishop => 'B',
            Role::Knight => 'N',
            Role::Pawn => 'P',
        }
    }

    pub fn from_char(c: char) -> Option<Role> {
        Some(match c.to_ascii_uppercase() {
            'K' => Role::King,
            'Q' => Role::Queen,
            'R' => Role::Rook,
            'B' => Role::Bishop,
            'N' => Role::Knight,
            'P' => Role::Pawn,
            _ => return None,
        })
    }
}

/// A coloured piece.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    /// FEN letter: upper case for White.
    pub fn char(self) -> char {
        let c = self.role.upper_char();
        if self.color.is_white() {
            c
        } else {
            c.to_ascii_lowercase()
        }
    }

    pub fn from_char(c: char) -> Option<Piece> {
        let role = Role::from_char(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }
}
