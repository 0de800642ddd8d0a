//! Zobrist keys of positions, for the transposition table and the repetition check.
//!
//! A key is the XOR of one random 64-bit word per (colour, role, square) of every piece, one word
//! if Black is to move, and one word per file of the en-passant square (the rules core keeps that
//! square only when an en-passant capture is really possible, so equal positions get equal keys).
//! The move counters are left out: the prover ignores the 50-move rule. The words come from
//! SplitMix64 run at compile time, so keys are the same in every build.

use crate::rules::{Color, Piece, Position, Role};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

/// 2 × 6 × 64 piece words, then 1 side word, then 8 en-passant file words, then 2 prover words.
const WORDS: usize = 2 * 6 * 64 + 1 + 8 + 2;
const SIDE: usize = 2 * 6 * 64;
const EP: usize = SIDE + 1;
const PROVER: usize = EP + 8;

static KEYS: [u64; WORDS] = {
    let mut keys = [0u64; WORDS];
    let mut state = 0x616e_7469_7462_u64; // "antitb"
    let mut i = 0;
    while i < WORDS {
        let (s, k) = splitmix(state);
        state = s;
        keys[i] = k;
        i += 1;
    }
    keys
};

/// The Zobrist key of a position: placement, side to move and en-passant square.
#[inline]
pub fn key(pos: &Position) -> u64 {
    let board = pos.board();
    let mut h = 0;
    for color in Color::ALL {
        for role in Role::ALL {
            let base = (color.index() * 6 + role.index()) * 64;
            for sq in board.by_piece(Piece { color, role }) {
                h ^= KEYS[base + sq.index()];
            }
        }
    }
    if !pos.turn().is_white() {
        h ^= KEYS[SIDE];
    }
    if let Some(ep) = pos.ep_square() {
        h ^= KEYS[EP + ep.file() as usize];
    }
    h
}

/// The key of `child`, a position one move after `parent` (whose key is `parent_key`): only
/// the squares whose piece changed are mixed in again, so it costs a few words where
/// [`key`] costs one per piece. Equal to `key(child)` for any two positions with opposite
/// sides to move.
#[inline]
pub fn key_after(parent_key: u64, parent: &Position, child: &Position) -> u64 {
    let (a, b) = (parent.board(), child.board());
    let mut h = parent_key ^ KEYS[SIDE];
    for color in Color::ALL {
        let (ca, cb) = (a.by_color(color), b.by_color(color));
        for role in Role::ALL {
            let base = (color.index() * 6 + role.index()) * 64;
            for sq in (ca & a.by_role(role)) ^ (cb & b.by_role(role)) {
                h ^= KEYS[base + sq.index()];
            }
        }
    }
    if let Some(ep) = parent.ep_square() {
        h ^= KEYS[EP + ep.file() as usize];
    }
    if let Some(ep) = child.ep_square() {
        h ^= KEYS[EP + ep.file() as usize];
    }
    h
}

/// The word mixed into transposition-table keys for the side trying to win, so that searches
/// for either side can share one table.
#[inline]
pub fn prover_word(prover: Color) -> u64 {
    KEYS[PROVER + prover.index()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct_and_follow_the_position() {
        let mut seen = std::collections::HashSet::new();
        assert!(KEYS.iter().all(|k| seen.insert(*k)));
        let start = Position::startpos();
        let same: Position = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 7 30"
            .parse()
            .unwrap();
        assert_eq!(key(&start), key(&same));
        let moves = start.legal_moves();
        let children: std::collections::HashSet<u64> =
            moves.iter().map(|m| key(&start.after(m))).collect();
        assert_eq!(children.len(), moves.len());
        assert_ne!(key(&start), key(&start.swap_colors()));
    }

    /// `key_after` against the key computed from scratch, on every move of positions with
    /// captures, en passant, promotions and double pushes (two plies from each).
    #[test]
    fn key_after_a_move_equals_the_key_from_scratch() {
        let fens = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
            "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b - e3 0 3",
            "8/P1k5/8/8/4Pp2/8/1p4K1/8 b - e3 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w - - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        ];
        let agrees = |parent: &Position, child: &Position, line: &dyn std::fmt::Display| {
            assert_eq!(key_after(key(parent), parent, child), key(child), "{line}");
        };
        let mut checked = 0;
        for fen in fens {
            let root: Position = fen.parse().unwrap();
            for m in root.legal_moves().iter() {
                let child = root.after(m);
                agrees(&root, &child, &format_args!("{fen} {m:?}"));
                for n in child.legal_moves().iter() {
                    agrees(&child, &child.after(n), &format_args!("{fen} {m:?} {n:?}"));
                    checked += 1;
                }
            }
        }
        assert!(checked > 400, "{checked}");
    }
}
