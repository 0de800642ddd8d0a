//! Attack sets, all computed at compile time by `const fn`.
//!
//! Leapers (king, knight, pawn captures) are plain 64-entry tables. Sliders use the
//! *hyperbola quintessence* trick on files and diagonals (a line with at most one square per rank
//! is mirrored by a byte swap, so `o - 2s` finds blockers in both directions) and a 8×64 table of
//! first-rank attacks for ranks. No runtime initialisation, no lazy statics.

use super::bitboard::Bitboard;
use super::square::{Color, Role, Square};

const fn leaper_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                table[sq] |= 1 << (nr * 8 + nf);
            }
            i += 1;
        }
        sq += 1;
    }
    table
}

static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

/// Masks of the file, diagonal and anti-diagonal through each square, without the square.
const fn line_masks() -> [[u64; 64]; 3] {
    let mut m = [[0u64; 64]; 3];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut t = 0;
        while t < 64 {
            let (tf, tr) = ((t % 8) as i32, (t / 8) as i32);
            if t != sq {
                if tf == f {
                    m[0][sq] |= 1 << t;
                }
                if tf - f == tr - r {
                    m[1][sq] |= 1 << t;
                }
                if tf - f == r - tr {
                    m[2][sq] |= 1 << t;
                }
            }
            t += 1;
        }
        sq += 1;
    }
    m
}

static LINES: [[u64; 64]; 3] = line_masks();

/// `FIRST_RANK[file][inner occupancy]`: attacks along rank 1 of a slider on `file`, where the
/// 6-bit occupancy holds files b..g.
const fn first_rank_table() -> [[u8; 64]; 8] {
    let mut t = [[0u8; 64]; 8];
    let mut f = 0;
    while f < 8 {
        let mut occ = 0;
        while occ < 64 {
            let o = (occ << 1) as u32;
            let mut a = 0u32;
            let mut x = f as i32 + 1;
            while x < 8 {
                a |= 1 << x;
                if o & (1 << x) != 0 {
                    break;
                }
                x += 1;
            }
            x = f as i32 - 1;
            while x >= 0 {
                a |= 1 << x;
                if o & (1 << x) != 0 {
                    break;
                }
                x -= 1;
            }
            t[f][occ] = a as u8;
            occ += 1;
        }
        f += 1;
    }
    t
}

static FIRST_RANK: [[u8; 64]; 8] = first_rank_table();

#[inline]
fn hyperbola(sq: Square, occupied: u64, mask: u64) -> u64 {
    let bit = 1u64 << sq.index();
    let forward = occupied & mask;
    let reverse = forward.swap_bytes();
    let forward = forward.wrapping_sub(bit);
    let reverse = reverse.wrapping_sub(bit.swap_bytes());
    (forward ^ reverse.swap_bytes()) & mask
}

#[inline]
fn rank_attacks(sq: Square, occupied: u64) -> u64 {
    let shift = sq.rank() * 8;
    let inner = ((occupied >> (shift + 1)) & 63) as usize;
    (FIRST_RANK[sq.file() as usize][inner] as u64) << shift
}

#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq.index()])
}

#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks (captures to).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color.index()][sq.index()])
}

#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(
        hyperbola(sq, occupied.0, LINES[1][sq.index()])
            | hyperbola(sq, occupied.0, LINES[2][sq.index()]),
    )
}

#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    Bitboard(hyperbola(sq, occupied.0, LINES[0][sq.index()]) | rank_attacks(sq, occupied.0))
}

#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)
}

/// Attacks of a non-pawn piece (pawns attack differently by colour: use [`pawn_attacks`]).
#[inline]
pub fn piece_attacks(role: Role, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::King => king_attacks(sq),
        Role::Queen => queen_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Knight => knight_attacks(sq),
        Role::Pawn => Bitboard::EMPTY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_slider(sq: Square, occ: Bitboard, dirs: &[(i32, i32)]) -> Bitboard {
        let mut a = Bitboard::EMPTY;
        for &(df, dr) in dirs {
            let (mut f, mut r) = (sq.file() as i32 + df, sq.rank() as i32 + dr);
            while (0..8).contains(&f) && (0..8).contains(&r) {
                let t = Square::from_coords(f as u32, r as u32);
                a = a.with(t);
                if occ.contains(t) {
                    break;
                }
                f += df;
                r += dr;
            }
        }
        a
    }

    #[test]
    fn sliders_match_ray_walk() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = Bitboard(x & (x >> 3));
            for sq in Square::all() {
                let diag = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
                let orth = [(1, 0), (-1, 0), (0, 1), (0, -1)];
                assert_eq!(bishop_attacks(sq, occ), slow_slider(sq, occ, &diag));
                assert_eq!(rook_attacks(sq, occ), slow_slider(sq, occ, &orth));
            }
        }
    }
}
