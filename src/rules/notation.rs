//! Move text: UCI (`e2e4`, `a7a8k`) and SAN as lichess writes antichess moves (`exd5`, `a8=K`,
//! `Kxe2`; no check marks, since antichess has no check).

use super::position::{Move, Position};
use super::square::{Role, Square};
use std::fmt;

/// Why a move text was not accepted.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MoveTextError {
    Syntax(String),
    Illegal(String),
    Ambiguous(String),
}

impl fmt::Display for MoveTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveTextError::Syntax(s) => write!(f, "cannot read move '{s}'"),
            MoveTextError::Illegal(s) => write!(f, "illegal move '{s}' in this position"),
            MoveTextError::Ambiguous(s) => write!(f, "ambiguous move '{s}'"),
        }
    }
}

impl std::error::Error for MoveTextError {}

/// Parse a UCI move and check that it is legal here.
pub fn parse_uci(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    let b = text.as_bytes();
    if !(b.len() == 4 || b.len() == 5) {
        return Err(MoveTextError::Syntax(text.to_string()));
    }
    let from =
        Square::from_ascii(&b[0..2]).ok_or_else(|| MoveTextError::Syntax(text.to_string()))?;
    let to = Square::from_ascii(&b[2..4]).ok_or_else(|| MoveTextError::Syntax(text.to_string()))?;
    let promotion = match b.get(4) {
        None => None,
        Some(&c) => match Role::from_char(c as char) {
            Some(Role::Pawn) | None => return Err(MoveTextError::Syntax(text.to_string())),
            r => r,
        },
    };
    pos.find_move(from, to, promotion)
        .ok_or_else(|| MoveTextError::Illegal(text.to_string()))
}

/// SAN of a legal move.
pub fn san(pos: &Position, m: &Move) -> String {
    let mut s = String::new();
    if m.role == Role::Pawn {
        if m.is_capture() {
            s.push((b'a' + m.from.file() as u8) as char);
            s.push('x');
        }
        s.push_str(&m.to.to_string());
        if let Some(p) = m.promotion {
            s.push('=');
            s.push(p.upper_char());
        }
        return s;
    }
    s.push(m.role.upper_char());
    let others: Vec<Move> = pos
        .legal_moves()
        .iter()
        .copied()
        .filter(|o| o.role == m.role && o.to == m.to && o.from != m.from)
        .collect();
    if !others.is_empty() {
        let same_file = others.iter().any(|o| o.from.file() == m.from.file());
        let same_rank = others.iter().any(|o| o.from.rank() == m.from.rank());
        let file = (b'a' + m.from.file() as u8) as char;
        let rank = (b'1' + m.from.rank() as u8) as char;
        if !same_file {
            s.push(file);
        } else if !same_rank {
            s.push(rank);
        } else {
            s.push(file);
            s.push(rank);
        }
    }
    if m.is_capture() {
        s.push('x');
    }
    s.push_str(&m.to.to_string());
    s
}

/// Parse SAN (check marks `+`/`#` and annotations `!?` are ignored) and check legality.
pub fn parse_san(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    let clean = text.trim_end_matches(['+', '#', '!', '?']);
    let matches: Vec<Move> = pos
        .legal_moves()
        .iter()
        .copied()
        .filter(|m| san(pos, m) == clean)
        .collect();
    match matches.len() {
        1 => Ok(matches[0]),
        0 => {
            // Accept over-specified or under-specified forms by looser matching.
            let loose: Vec<Move> = pos
                .legal_moves()
                .iter()
                .copied()
                .filter(|m| loose_san_match(m, clean))
                .collect();
            match loose.len() {
                1 => Ok(loose[0]),
                0 if is_san_syntax(clean) => Err(MoveTextError::Illegal(text.to_string())),
                0 => Err(MoveTextError::Syntax(text.to_string())),
                _ => Err(MoveTextError::Ambiguous(text.to_string())),
            }
        }
        _ => Err(MoveTextError::Ambiguous(text.to_string())),
    }
}

fn is_san_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'x' || *c == b'=')
}

fn loose_san_match(m: &Move, s: &str) -> bool {
    let b = s.as_bytes();
    let (role, rest) = match b.first() {
        Some(c) if c.is_ascii_uppercase() => match Role::from_char(*c as char) {
            Some(r) => (r, &b[1..]),
            None => return false,
        },
        _ => (Role::Pawn, b),
    };
    if role != m.role {
        return false;
    }
    let (rest, promo) = match rest.iter().position(|&c| c == b'=') {
        Some(i) => (
            &rest[..i],
            rest.get(i + 1).and_then(|&c| Role::from_char(c as char)),
        ),
        None => (rest, None),
    };
    if promo != m.promotion {
        return false;
    }
    let rest: Vec<u8> = rest.iter().copied().filter(|&c| c != b'x').collect();
    if rest.len() < 2 {
        return false;
    }
    let Some(to) = Square::from_ascii(&rest[rest.len() - 2..]) else {
        return false;
    };
    if to != m.to {
        return false;
    }
    rest[..rest.len() - 2].iter().all(|&c| match c {
        b'a'..=b'h' => u32::from(c - b'a') == m.from.file(),
        b'1'..=b'8' => u32::from(c - b'1') == m.from.rank(),
        _ => false,
    })
}
