//! The request: a URL query string (`fen=...&by=dtw`) decoded into a position and options.
//!
//! The FEN is read as lichess' tablebase server reads it, so that any client of that API gets
//! the same answer: spaces may be written as `_` (or `+`, or `%20`); fields after the board may
//! be left out (White to move, no en passant, clocks 0 and 1); castling rights, which antichess
//! does not have, are ignored, and so is an en-passant square that does not fit the board. A
//! FEN that still does not describe a legal antichess position (no pieces at all, a pawn on the
//! back rank, more pieces than promotions allow) is a bad request.

use crate::probe::RankBy;
use crate::rules::{Bitboard, Color, FenError, Position, Role, parse_fen};
use std::fmt;

/// A decoded query string.
#[derive(Clone, Debug)]
pub struct Query {
    pub position: Position,
    /// Which metric `/antichess/mainline` follows: DTZ (lila's line, until the game ends or the
    /// halfmove clock reaches 100) or DTW (to the end of the game).
    pub by: RankBy,
}

/// Why a query string was refused (HTTP 400); `Display` is the one-line reason sent back.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum QueryError {
    /// No `fen` parameter.
    MissingFen,
    /// A parameter is not valid percent-encoded UTF-8.
    Encoding(String),
    /// The FEN does not parse.
    Fen(FenError),
    /// The FEN parses but is not a legal antichess position.
    Illegal(&'static str),
    /// `by` is neither `dtz` nor `dtw`.
    By(String),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::MissingFen => f.write_str("missing query parameter: fen"),
            QueryError::Encoding(p) => write!(f, "query parameter {p} is not valid UTF-8"),
            QueryError::Fen(e) => write!(f, "invalid fen: {e}"),
            QueryError::Illegal(why) => write!(f, "illegal position: {why}"),
            QueryError::By(s) => write!(f, "invalid value for by: '{s}' (expected dtz or dtw)"),
        }
    }
}

impl std::error::Error for QueryError {}

/// Decode a query string (without the `?`). Unknown parameters are ignored, as lila ignores
/// them (its `dtc` parameter among them: antitb has no DTC); the last of repeated ones counts.
pub fn parse_query(query: &str) -> Result<Query, QueryError> {
    let mut fen = None;
    let mut by = RankBy::Dtz;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "fen" => fen = Some(percent_decode(value).ok_or(QueryError::Encoding("fen".into()))?),
            "by" => {
                by = percent_decode(value)
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| QueryError::By(value.to_string()))?
            }
            _ => {}
        }
    }
    let fen = fen.ok_or(QueryError::MissingFen)?;
    Ok(Query {
        position: parse_lenient_fen(&fen)?,
        by,
    })
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; the bytes must be
/// UTF-8. A `%` not followed by two hex digits stands for itself.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let hex = |j: usize| bytes.get(j).and_then(|&c| (c as char).to_digit(16));
        match b {
            b'+' => out.push(b' '),
            b'%' => match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b),
            },
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Parse a FEN the way lila reads one (see the module doc).
pub fn parse_lenient_fen(fen: &str) -> Result<Position, QueryError> {
    let text = fen.replace('_', " ");
    let mut fields: Vec<&str> = text.split_whitespace().collect();
    if fields.is_empty() || fields.len() > 6 {
        return Err(QueryError::Fen(FenError::FieldCount(fields.len())));
    }
    const DEFAULTS: [&str; 6] = ["", "w", "-", "-", "0", "1"];
    while fields.len() < 6 {
        fields.push(DEFAULTS[fields.len()]);
    }
    // Castling rights (standard or Shredder letters) mean nothing in antichess: dropped.
    if fields[2]
        .chars()
        .all(|c| matches!(c, 'K' | 'Q' | 'k' | 'q' | 'A'..='H' | 'a'..='h'))
    {
        fields[2] = "-";
    }
    let pos = match parse_fen(&fields.join(" ")) {
        Err(FenError::EnPassantInconsistent(_)) => {
            fields[3] = "-";
            parse_fen(&fields.join(" "))
        }
        other => other,
    }
    .map_err(QueryError::Fen)?;
    validate(&pos)?;
    Ok(pos)
}

/// What a FEN cannot describe even in antichess (shakmaty's checks, which lila applies).
fn validate(pos: &Position) -> Result<(), QueryError> {
    let board = pos.board();
    if board.occupied().is_empty() {
        return Err(QueryError::Illegal("empty board"));
    }
    for color in [Color::White, Color::Black] {
        let ours = |role| board.by_role(role) & board.by_color(color);
        let extra = |b: Bitboard, originals: u32| b.count().saturating_sub(originals);
        let promoted = extra(ours(Role::Queen), 1)
            + extra(ours(Role::Rook), 2)
            + extra(ours(Role::Knight), 2)
            + extra(ours(Role::Bishop) & Bitboard::LIGHT_SQUARES, 1)
            + extra(ours(Role::Bishop) & Bitboard::DARK_SQUARES, 1);
        if ours(Role::Pawn).count() + promoted > 8 {
            return Err(QueryError::Illegal("too much material"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fen_of(q: &str) -> String {
        parse_query(q).expect("query").position.to_string()
    }

    #[test]
    fn lenient_fens() {
        assert_eq!(
            fen_of("fen=8/8/8/8/8/8/8/K6k_w_-_-_0_1"),
            "8/8/8/8/8/8/8/K6k w - - 0 1"
        );
        assert_eq!(
            fen_of("fen=8/8/8/8/8/8/8/K6k%20b"),
            "8/8/8/8/8/8/8/K6k b - - 0 1"
        );
        assert_eq!(
            fen_of("fen=8/8/8/8/8/8/8/K6k+w+KQkq"),
            "8/8/8/8/8/8/8/K6k w - - 0 1"
        );
        // An en-passant square that does not fit is dropped, as lila drops it.
        assert_eq!(
            fen_of("fen=8/8/8/8/8/8/8/K6k w - e3 0 1&dtc=never"),
            "8/8/8/8/8/8/8/K6k w - - 0 1"
        );
        assert_eq!(
            parse_query("by=dtw&fen=8/8/8/8/8/8/8/K6k").map(|q| q.by),
            Ok(RankBy::Dtw)
        );
    }

    #[test]
    fn bad_queries() {
        let err = |q: &str| parse_query(q).expect_err(q);
        assert_eq!(err(""), QueryError::MissingFen);
        assert_eq!(
            err("fen=8/8/8/8/8/8/8/8"),
            QueryError::Illegal("empty board")
        );
        assert_eq!(
            err("fen=KP6/8/8/8/8/8/8/7k"),
            QueryError::Fen(FenError::PawnOnBackRank(crate::rules::Square::new(57)))
        );
        assert!(matches!(err("fen=garbage"), QueryError::Fen(_)));
        assert!(matches!(err("fen=%FF%FE"), QueryError::Encoding(_)));
        assert!(matches!(
            err("fen=8/8/8/8/8/8/8/K6k&by=dtm"),
            QueryError::By(_)
        ));
        assert_eq!(
            err("fen=QQQQQQQQ/QQ6/8/8/8/8/8/7k"),
            QueryError::Illegal("too much material")
        );
        // Every error is one line.
        for q in [
            "",
            "fen=garbage",
            "fen=8/8/8/8/8/8/8/8",
            "fen=1_2_3_4_5_6_7",
        ] {
            assert!(!err(q).to_string().contains('\n'));
        }
    }
}
