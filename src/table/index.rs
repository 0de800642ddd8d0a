//! Position ↔ index for one material, per side to move: a near-dense index.
//!
//! # Layout
//! The pieces of the canonical material form *groups* of identical coloured pieces. A slot is
//!
//! ```text
//! index = lead · rest_size + rest
//! ```
//!
//! * **lead** numbers the configuration of the *lead groups*, canonical under the board's
//!   symmetries:
//!   * pawnless tables (8 symmetries): the first one or two groups (unique pieces first, then
//!     groups by size), as long as their raw placements number at most 2^18 — a pair of unique
//!     pieces (4 096 raw, 518 canonical: 8.0 slots of raw placements per canonical one), a unique
//!     piece and a pair, a pair or a triple of identical pieces, or else the first group alone.
//!     A table built once per *shape* (group sizes) lists the canonical configurations (the
//!     smallest raw code in each orbit) and maps every raw configuration to its number and to
//!     a symmetry that makes it canonical;
//!   * tables with pawns (the left–right mirror): every pawn. The 48 pawn squares are ordered by
//!     *key* = (distance of the file from the edge, advancement of the lead colour, file). The
//!     *lead pawn* is the lowest-key pawn of the lead colour (White's pawns if any, else
//!     Black's), mirrored onto files a–d; its 24 squares come in key order, the other pawns of
//!     its colour are a combination of the squares of higher key, the other colour's pawns a
//!     combination of the squares left. Every pawn move raises its pawn's key, so the lead
//!     pawn's key never falls: all configurations with one lead-pawn square are one contiguous
//!     range (a *slice*), and a pawn push leads into the same slice or one of higher key.
//!     When both mirror images encode (the lead colour has two lowest-key pawns mirror to each
//!     other), the smaller configuration number is canonical.
//! * **rest** is a mixed-radix number over the remaining groups in *reverse* order (groups
//!   are in material order, White's then Black's, K Q R B N; pawnless tables sort them by size
//!   first): Black's pieces are the most significant digits, and the last digit, the fastest,
//!   is one of White's (KQRBvN's rest digits are N, B, R; KNPvK's are K, N, K); each group
//!   is a combination (the combinatorial number system) of *compressed* squares: a square's
//!   number among the squares not taken by the lead and earlier groups. So pieces never
//!   overlap, and `k` identical pieces take `C(n, k)` slots, not `n^k`. Squares are numbered
//!   in square order (a1 = 0, b1 = 1, …), except for bishops: the dark squares first (a1, c1,
//!   …, h8), then the light ones (b1, d1, …, g8). A bishop never changes colour, and the values
//!   of a table with bishops depend on their colours (opposite-coloured bishops never meet), so
//!   numbering its squares colour by colour turns a value pattern that alternates square by
//!   square into two long runs: `.wdl` files of tables with a bishop in the rest are about half
//!   as large (KQBvB 0.28x, KRBvB 0.34x, BPvBP 0.52x; knights, which change colour every move,
//!   gain on some tables and lose on others, and stay in square order).
//!
//!   The order of the rest decides which values stand side by side, and so the file sizes.
//!   Measured against material order (`.wdl` + `.dtz` bytes, bishops in colour order in
//!   both): reverse order takes 0.85x on 329 tables of three and four pieces (0.88x pawnless,
//!   0.84x with pawns; 74 tables larger, most of them small or with pawns: QRNvP 1.58x,
//!   KKvRP 1.45x), and KQRBvN's `.wdl` from 4.88 MB to 2.64 MB (0.54x). That is the order of
//!   [`Index::new`], which the generator solves in. Files may order the rest groups otherwise
//!   ([`Index::rest_orders`], [`Index::with_rest_order`]): the writer tries the orders on a
//!   sample of the table and writes the one that compresses best, as Syzygy's compressor
//!   tries piece orders, and the header's [`Index::params`] name it ([`Index::from_params`]).
//!
//! Every slot is a position with the pieces on distinct squares and pawns on ranks 2–7. A slot
//! is **valid** iff it is the canonical representative: where the lead configuration is fixed
//! by a symmetry (both pieces of a pawnless lead pair on the long diagonal, say, or a pawn
//! configuration equal to its mirror image), the smallest index among the images. Other slots
//! are few (KQRvKBN: 1.9 %) and never used.
//!
//! The side to move is a separate dimension (`side` 0 = White to move in the canonical
//! orientation). A position whose material is the colour swap of the table's is flipped upside
//! down and colour-swapped first. Symmetric materials store both sides.
//!
//! # Moving a piece
//! The generator moves pieces other than pawns ([`Index::placement`], [`Index::moved`]): a
//! piece of the rest changes the rest only (re-encoded from the squares, a popcount per piece),
//! a lead piece looks its new configuration up in the lead table. The solver's loops go through
//! a [`Mover`] ([`Index::mover`]), made once per piece and slot: where no symmetry fixes the lead
//! configuration before or after the move, a destination costs a popcount for the moving
//! piece's own group and a bit test per later piece, not a re-encoding of the rest. With it
//! and a decoding of [`Index::placement`] free of divisions and bit loops, KQRBvN's WDL+DTZ
//! generation took 0.78x the wall and CPU time, same files (`scripts/bench-ab.sh`, best of two
//! runs each, interleaved).

use crate::rules::{Bitboard, Board, Color, Piece, Position, Role, Square};
use crate::table::{MAX_PIECES, Material};
use std::sync::OnceLock;

/// Binomial coefficients `C(n, k)` for `n ≤ 64`, `k ≤ 7`.
const BINOM: [[u64; 8]; 65] = {
    let mut t = [[0u64; 8]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k < 8 {
            t[n][k] = if n == 0 {
                0
            } else {
                t[n - 1][k - 1] + t[n - 1][k]
            };
            k += 1;
        }
        n += 1;
    }
    t
};

#[inline]
fn binom(n: u32, k: usize) -> u64 {
    BINOM[n as usize][k]
}

/// The largest number of raw placements a lead table may have.
const MAX_LEAD_RAW: u64 = 1 << 18;

/// One group of identical pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Group {
    piece: Piece,
    count: usize,
}

/// Apply symmetry `t` to a square (bit 2 = transpose, bit 1 = flip vertical, bit 0 = mirror).
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

/// `TRANSFORM[t][sq]`: square `sq` under symmetry `t` (a table: the hot paths map squares one
/// at a time).
const TRANSFORM: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut x = 0;
    while x < 8 {
        let mut sq = 0;
        while sq < 64 {
            let (mut f, mut r) = (sq % 8, sq / 8);
            if x & 4 != 0 {
                (f, r) = (r, f);
            }
            if x & 2 != 0 {
                r = 7 - r;
            }
            if x & 1 != 0 {
                f = 7 - f;
            }
            t[x][sq] = (r * 8 + f) as u8;
            sq += 1;
        }
        x += 1;
    }
    t
};

/// The combination code of a set of squares (`Σ C(sq_i, i + 1)`, squares ascending).
#[inline]
fn comb_code(set: u64) -> u64 {
    let mut code = 0;
    let mut s = set;
    let mut i = 1;
    while s != 0 {
        code += binom(s.trailing_zeros(), i);
        s &= s - 1;
        i += 1;
    }
    code
}

/// The compressed combination code of `set` among the squares not in `taken`.
#[inline]
fn comb_code_free(set: u64, taken: u64) -> u64 {
    let mut code = 0;
    let mut s = set;
    let mut i = 1;
    while s != 0 {
        let sq = s.trailing_zeros();
        let below = taken & ((1u64 << sq) - 1);
        code += binom(sq - below.count_ones(), i);
        s &= s - 1;
        i += 1;
    }
    code
}

/// The `k` values `c_1 < … < c_k` of a combination code (inverse of the code).
#[inline]
fn comb_values(mut code: u64, k: usize, out: &mut [u32; 8]) {
    for i in (1..=k).rev() {
        // Largest c with C(c, i) <= code; c >= i - 1.
        let mut c = (i - 1) as u32;
        let mut hi = 64u32;
        while hi - c > 1 {
            let mid = (c + hi) / 2;
            if binom(mid, i) <= code {
                c = mid;
            } else {
                hi = mid;
            }
        }
        code -= binom(c, i);
        out[i - 1] = c;
    }
}

/// `SELECT8[b][c]`: the position of the `c`-th (0-based) set bit of the byte `b` (8 where `b`
/// has no such bit).
const SELECT8: [[u8; 8]; 256] = {
    let mut t = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut c) = (0, 0);
        while bit < 8 {
            if b >> bit & 1 == 1 {
                t[b][c] = bit as u8;
                c += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
};

/// The square of the `c`-th (0-based) bit of `free` (`c` < the number of bits): halves,
/// quarters and a byte by popcount, then a table (no data-dependent loop).
///
/// Tried and dropped (2026-12-03, KQRBvN, one thread): BMI2's PDEP here, behind a run-time
/// check, decoded a slot in 0.88–0.92x the time (about 40 ns a slot before) but left the
/// generator's wall time within noise (194 s against 196 s); packing the rest's squares in a
/// `u64` instead of a `u128` changed nothing measurable. Decoding is about a quarter of the
/// generator's time; what would remove it is a build index whose digits are squares.
#[inline]
fn select(free: u64, mut c: u32) -> u32 {
    let mut shift = 0;
    for width in [32, 16, 8] {
        let low = (free >> shift & ((1u64 << width) - 1)).count_ones();
        if c >= low {
            c -= low;
            shift += width;
        }
    }
    shift + u32::from(SELECT8[(free >> shift & 0xff) as usize][c as usize])
}

/// The dark squares (a1 is dark).
const DARK: u64 = 0xaa55_aa55_aa55_aa55;

/// Squares before each square in colour order: the dark squares in square order, then the
/// light ones.
const BEFORE_BY_COLOUR: [u64; 64] = {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let dark = DARK >> sq & 1 == 1;
        let below = (1u64 << sq) - 1;
        t[sq] = if dark {
            DARK & below
        } else {
            DARK | (!DARK & below)
        };
        sq += 1;
    }
    t
};

/// The squares before `sq` in colour order when `by_colour`, else in square order.
#[inline]
fn before_in(sq: u32, by_colour: bool) -> u64 {
    if by_colour {
        BEFORE_BY_COLOUR[sq as usize]
    } else {
        (1u64 << sq) - 1
    }
}

/// The number of a square among the squares not in `taken`, in colour order when `by_colour`,
/// else in square order.
#[inline]
fn free_rank(sq: u32, taken: u64, by_colour: bool) -> u32 {
    let before = if by_colour {
        BEFORE_BY_COLOUR[sq as usize]
    } else {
        (1u64 << sq) - 1
    };
    (before & !taken).count_ones()
}

/// The square of the `c`-th free square (`free` the free squares), in colour order when
/// `by_colour`, else in square order.
#[inline]
fn select_in(free: u64, c: u32, by_colour: bool) -> u32 {
    if !by_colour {
        return select(free, c);
    }
    let dark = free & DARK;
    let n = dark.count_ones();
    if c < n {
        select(dark, c)
    } else {
        select(free & !DARK, c - n)
    }
}

/// The compressed combination code of `set` among the squares not in `taken`, counted in colour
/// order when `by_colour`.
#[inline]
fn comb_code_in(set: u64, taken: u64, by_colour: bool) -> u64 {
    if !by_colour {
        return comb_code_free(set, taken);
    }
    let mut code = 0;
    let mut i = 1;
    for part in [set & DARK, set & !DARK] {
        let mut s = part;
        while s != 0 {
            code += binom(free_rank(s.trailing_zeros(), taken, true), i);
            s &= s - 1;
            i += 1;
        }
    }
    code
}

/// The set of `squares`.
#[inline]
fn set_of(squares: &[u8]) -> u64 {
    squares.iter().fold(0, |b, &s| b | 1 << s)
}

/// Steps the ranks `c_0 < … < c_{k-1}` (each below `free`) of a combination to the next one in
/// code order (code `Σ C(c_i, i + 1)`): the lowest rank that can rise by one without meeting
/// the next does, and those below it restart at `0, 1, …`, which adds exactly one to the code.
/// The place of the rank raised, or `None` (ranks unchanged) after the last combination.
#[inline]
fn next_ranks(ranks: &mut [u8], free: u32) -> Option<usize> {
    let i = (0..ranks.len())
        .find(|&i| u32::from(ranks[i]) + 1 < ranks.get(i + 1).map_or(free, |&r| u32::from(r)))?;
    ranks[i] += 1;
    for (l, r) in ranks[..i].iter_mut().enumerate() {
        *r = l as u8;
    }
    Some(i)
}

/// The table of canonical configurations of the lead groups of a pawnless shape.
#[derive(Debug)]
struct LeadTable {
    /// Group sizes (1 or 2 groups).
    shape: Vec<usize>,
    /// Raw code → `number << 3 | t` (symmetry `t` makes it canonical), `u32::MAX` where groups
    /// overlap.
    to_canon: Vec<u32>,
    /// Canonical configuration of each number: the squares of each group.
    configs: Vec<[u64; 2]>,
    /// Symmetries fixing each canonical configuration (bit `t`; bit 0 always set).
    fixers: Vec<u8>,
}

impl LeadTable {
    fn raw_len(shape: &[usize]) -> u64 {
        shape.iter().map(|&k| binom(64, k)).product()
    }

    /// Raw code of a configuration (no overlap check).
    #[inline]
    fn raw(shape: &[usize], sets: &[u64; 2]) -> u64 {
        match shape.len() {
            1 => comb_code(sets[0]),
            _ => comb_code(sets[0]) * binom(64, shape[1]) + comb_code(sets[1]),
        }
    }

    fn from_raw(shape: &[usize], raw: u64) -> [u64; 2] {
        let (c0, c1) = match shape.len() {
            1 => (raw, 0),
            _ => (raw / binom(64, shape[1]), raw % binom(64, shape[1])),
        };
        let mut sets = [0u64; 2];
        for (g, &code) in [c0, c1].iter().enumerate().take(shape.len()) {
            let mut v = [0u32; 8];
            comb_values(code, shape[g], &mut v);
            sets[g] = v[..shape[g]].iter().fold(0, |s, &c| s | 1 << c);
        }
        sets
    }

    fn build(shape: &[usize]) -> LeadTable {
        let n = Self::raw_len(shape);
        debug_assert!(n <= MAX_LEAD_RAW);
        let mut to_canon = vec![u32::MAX; n as usize];
        let mut configs = Vec::new();
        let mut fixers = Vec::new();
        for raw in 0..n {
            let sets = Self::from_raw(shape, raw);
            if sets[0] & sets[1] != 0 {
                continue;
            }
            let images: Vec<u64> = (0..8u8)
                .map(|t| {
                    let img = [
                        transform_bb(t, Bitboard(sets[0])).0,
                        transform_bb(t, Bitboard(sets[1])).0,
                    ];
                    Self::raw(shape, &img)
                })
                .collect();
            let min = *images.iter().min().expect("eight images");
            if min == raw {
                // A new canonical configuration: number them in raw order.
                let number = configs.len() as u32;
                configs.push(sets);
                fixers.push(
                    (0..8)
                        .filter(|&t| images[t] == raw)
                        .fold(0u8, |m, t| m | 1 << t),
                );
                to_canon[raw as usize] = number << 3;
            }
            let t = (0..8).find(|&t| images[t] == min).expect("min is an image") as u32;
            // The canonical image has a smaller raw code, so it is numbered already.
            let number = to_canon[min as usize] >> 3;
            to_canon[raw as usize] = number << 3 | t;
        }
        LeadTable {
            shape: shape.to_vec(),
            to_canon,
            configs,
            fixers,
        }
    }

    /// The shared table of a shape, built on first use (a few milliseconds; immutable after).
    fn get(shape: &[usize]) -> &'static LeadTable {
        static TABLES: [OnceLock<LeadTable>; 5] = [const { OnceLock::new() }; 5];
        let slot = match shape {
            [1] => 0,
            [1, 1] => 1,
            [1, 2] => 2,
            [2] => 3,
            [3] => 4,
            _ => unreachable!("no lead table of shape {shape:?}"),
        };
        TABLES[slot].get_or_init(|| LeadTable::build(shape))
    }
}

/// Key order of the 48 pawn squares for a lead colour.
#[derive(Clone, Debug)]
struct PawnOrder {
    /// Square of each key position.
    square: [u8; 48],
    /// Key position of each square (`u8::MAX` on ranks 1 and 8).
    pos: [u8; 64],
}

impl PawnOrder {
    fn new(lead: Color) -> PawnOrder {
        let mut squares: Vec<u8> = (8..56).collect();
        let key = |s: u8| {
            let (file, rank) = (s % 8, s / 8);
            let adv = if lead.is_white() { rank } else { 7 - rank };
            (file.min(7 - file), adv, file)
        };
        squares.sort_by_key(|&s| key(s));
        let mut square = [0u8; 48];
        let mut pos = [u8::MAX; 64];
        for (i, &s) in squares.iter().enumerate() {
            square[i] = s;
            pos[s as usize] = i as u8;
        }
        PawnOrder { square, pos }
    }

    /// The set of key positions of a set of squares (bit `p` for key position `p`).
    #[inline]
    fn positions(&self, set: u64) -> u64 {
        let mut out = 0u64;
        let mut s = set;
        while s != 0 {
            out |= 1 << self.pos[s.trailing_zeros() as usize];
            s &= s - 1;
        }
        out
    }

    /// The set of squares of a set of key positions.
    #[inline]
    fn squares(&self, positions: u64) -> u64 {
        let mut out = 0u64;
        let mut s = positions;
        while s != 0 {
            out |= 1 << self.square[s.trailing_zeros() as usize];
            s &= s - 1;
        }
        out
    }
}

/// The pawn part of the index of a table with pawns.
#[derive(Clone, Debug)]
struct PawnLead {
    /// Pawns of the lead colour and of the other colour.
    lead_count: usize,
    other_count: usize,
    order: PawnOrder,
    /// `offset[p]`: configurations of lead-colour pawns whose lead pawn has key position
    /// below `p` (0 width for key positions on files e–h).
    offset: [u64; 49],
    /// Combinations of the other colour's pawns.
    other_radix: u64,
}

impl PawnLead {
    fn new(lead: Color, lead_count: usize, other_count: usize) -> PawnLead {
        let order = PawnOrder::new(lead);
        let mut offset = [0u64; 49];
        for p in 0..48 {
            let width = if order.square[p] % 8 < 4 {
                binom(47 - p as u32, lead_count - 1)
            } else {
                0
            };
            offset[p + 1] = offset[p] + width;
        }
        PawnLead {
            lead_count,
            other_count,
            order,
            offset,
            other_radix: binom(48 - lead_count as u32, other_count),
        }
    }

    fn configs(&self) -> u64 {
        self.offset[48] * self.other_radix
    }

    /// Configuration number of pawn sets already oriented so that the lead pawn is on files
    /// a–d, or `None` if it is not.
    #[inline]
    fn encode(&self, lead: u64, other: u64) -> Option<u64> {
        let lp = self.order.positions(lead);
        let p = lp.trailing_zeros();
        if self.order.square[p as usize] % 8 >= 4 {
            return None;
        }
        // The other lead-colour pawns, as key positions above p, shifted down to 0.
        let above = (lp & !(1 << p)) >> (p + 1);
        let lead_code = self.offset[p as usize] + comb_code(above);
        let op = self.order.positions(other);
        Some(lead_code * self.other_radix + comb_code_free(op, lp))
    }

    /// The lead-colour and other-colour pawn sets of a configuration number.
    fn decode(&self, config: u64) -> (u64, u64) {
        let (lead_code, other_code) = (config / self.other_radix, config % self.other_radix);
        // Lead pawn key position: the last p with offset[p] <= lead_code among positions of
        // non-zero width.
        let p = (0..48)
            .rev()
            .find(|&p| self.offset[p] <= lead_code && self.offset[p + 1] > self.offset[p])
            .expect("configuration number in range");
        let mut v = [0u32; 8];
        let k = self.lead_count - 1;
        comb_values(lead_code - self.offset[p], k, &mut v);
        let mut lp = 1u64 << p;
        for &c in &v[..k] {
            lp |= 1 << (c as usize + p + 1);
        }
        comb_values(other_code, self.other_count, &mut v);
        let mut op = 0u64;
        let free = !lp & ((1u64 << 48) - 1);
        for &c in &v[..self.other_count] {
            op |= 1 << select(free, c);
        }
        (self.order.squares(lp), self.order.squares(op))
    }
}

/// One group of the rest, for the hot loops.
#[derive(Clone, Copy, Debug)]
struct RestGroup {
    /// First digit and number of pieces.
    start: u8,
    count: u8,
    /// Combinations of the group (`C(free squares, count)`) and the weight of its code in the
    /// rest (the product of the radices of the groups after it).
    radix: u64,
    weight: u64,
    /// Squares counted dark squares first, then light ones.
    by_colour: bool,
    /// `⌊(2^64 − 1) / weight⌋ + 1` where the weight and every rest code are below 2^32 (a
    /// code's group digit is then the high half of `code · magic`), else 0.
    magic: u64,
}

/// How the lead part is encoded.
#[derive(Clone, Debug)]
enum Lead {
    Pieces(&'static LeadTable),
    Pawns(Box<PawnLead>),
}

/// A slot taken apart, for re-encoding after a piece moves ([`Index::moved`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Square of each piece, in index order (lead groups first).
    pub squares: [u8; 16],
    /// The lead part of the index.
    lead: u64,
    /// Symmetries fixing the lead configuration (bit `t`; bit 0 set), or 0 if the lead
    /// configuration is not canonical (a pawn configuration whose mirror image has the smaller
    /// number).
    fixers: u8,
    /// Squares taken by the lead groups.
    lead_occ: u64,
    /// The rest part of the index, and each rest digit's rank among the squares free for its
    /// group (its group's squares ascending in the group's order), for [`Index::mover`].
    rest: u64,
    ranks: [u8; 16],
}

/// [`Index::decode`] for slots taken mostly in increasing order, as a solve's or a check's pass
/// over every slot takes them: each placement a step from the last where it can be
/// ([`Index::placement_after`]), and each board the last one with the pieces that moved placed
/// again, instead of both from nothing.
pub struct SlotScan<'a> {
    index: &'a Index,
    last: Option<(u64, Placement)>,
    lead: LeadCache,
    board: Option<([u8; 16], Board)>,
}

impl SlotScan<'_> {
    /// The board of slot `idx`, if the slot is valid (canonical): the same for both sides to
    /// move ([`Index::position_on`]).
    #[inline]
    pub fn board(&mut self, idx: u64) -> Option<Board> {
        let ix = self.index;
        if idx >= ix.size {
            return None;
        }
        let pl = ix.placement_after(&mut self.last, idx, &mut self.lead);
        ix.is_canonical(&pl, idx)
            .then(|| ix.board_after(&mut self.board, &pl))
    }

    /// The position of slot `idx` with side `side` to move, if the slot is valid (canonical).
    #[inline]
    pub fn decode(&mut self, side: usize, idx: u64) -> Option<Position> {
        self.board(idx).map(|b| Index::position_on(side, b))
    }
}

/// The lead part of the last slot taken apart by [`Index::placement_with`].
#[derive(Clone, Copy, Debug)]
pub struct LeadCache {
    /// The lead configuration (`u64::MAX`: none yet).
    lead: u64,
    squares: [u8; 16],
    lead_occ: u64,
    fixers: u8,
}

impl Default for LeadCache {
    fn default() -> LeadCache {
        LeadCache {
            lead: u64::MAX,
            squares: [0; 16],
            lead_occ: 0,
            fixers: 1,
        }
    }
}

/// A rest piece whose rank among the free squares falls by one when the moving piece lands
/// before it ([`Mover`]).
#[derive(Clone, Copy, Debug, Default)]
struct Term {
    /// The squares before the piece in its group's square order.
    before: u64,
    /// Its rank among the free squares before the move, the moving piece's square counted free.
    rank: u32,
    /// Its place in its group (1-based): the `k` of its `C(rank, k)`.
    place: u8,
    /// The weight of its group's code.
    weight: u64,
}

/// How a [`Mover`] re-encodes.
#[derive(Clone, Copy, Debug, Default)]
enum MoverKind {
    /// By [`Index::moved`] (a symmetry may pick another image).
    #[default]
    Generic,
    /// A rest piece alone in its group, from a lead configuration no symmetry fixes.
    Rest,
    /// A rest piece of a group of several, from a lead configuration no symmetry fixes: the
    /// group is re-ranked with the others of the group where they stand.
    RestGroup,
    /// A lead piece of a pawnless table: the lead table decides; a destination whose
    /// configuration is canonical as it stands and fixed by no symmetry keeps the rest's
    /// squares.
    Lead(&'static LeadTable),
}

/// The moves of one piece from one placement ([`Index::mover`]), re-encoded incrementally.
///
/// The rest code is a sum of one term per group, and a group's code depends on the squares
/// taken before it. A move from `from` to `to` leaves the groups before the moving piece's
/// alone, recounts its own group's code (the rank of `to`, or the combination of `to` and the
/// group's other pieces), and lowers by one the rank of each later piece that `to` stands before
/// (counting `from` free): a bit test and a table lookup per later piece instead of re-encoding
/// the whole rest.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mover {
    kind: MoverKind,
    j: usize,
    /// A rest piece's move: the index less the codes of its group and the later ones, which
    /// each destination adds back.
    constant: u64,
    /// The moving rest piece's group: the squares taken before it, its weight, its order, and
    /// the squares of the group's other pieces ([`MoverKind::RestGroup`]).
    own_taken: u64,
    own_others: u64,
    own_weight: u64,
    own_by_colour: bool,
    /// The lead groups' squares without the moving lead piece, and its group.
    lead_sets: [u64; 2],
    lead_group: u8,
    /// A moving lead piece alone in its group: the raw lead code is `lead_raw + to · lead_step`
    /// (`lead_step` 0: computed from `lead_sets`).
    lead_raw: u64,
    lead_step: u64,
    terms: [Term; MAX_PIECES],
    len: usize,
}

impl Mover {
    /// The index after the piece moves to `to` (an empty square) from `pl`, the placement
    /// this mover was made from: the same as [`Index::moved`].
    #[inline(always)]
    pub fn moved(&self, ix: &Index, pl: &Placement, to: Square) -> u64 {
        let to_sq = to.index() as u32;
        let code = match self.kind {
            MoverKind::Generic => return self.generic(ix, pl, to),
            MoverKind::Rest => {
                self.constant
                    + u64::from(free_rank(to_sq, self.own_taken, self.own_by_colour))
                        * self.own_weight
            }
            MoverKind::RestGroup => {
                let set = self.own_others | 1 << to_sq;
                self.constant
                    + comb_code_in(set, self.own_taken, self.own_by_colour) * self.own_weight
            }
            MoverKind::Lead(t) => {
                let raw = if self.lead_step != 0 {
                    self.lead_raw + u64::from(to_sq) * self.lead_step
                } else {
                    let mut sets = self.lead_sets;
                    sets[usize::from(self.lead_group)] |= 1 << to_sq;
                    LeadTable::raw(&t.shape, &sets)
                };
                let c = t.to_canon[raw as usize];
                let number = u64::from(c >> 3);
                if c & 7 != 0 || t.fixers[number as usize] & !1 != 0 {
                    return self.generic(ix, pl, to);
                }
                number * ix.rest_size
            }
        };
        self.terms[..self.len].iter().fold(code, |code, t| {
            let rank = t.rank - (t.before >> to_sq & 1) as u32;
            code + binom(rank, usize::from(t.place)) * t.weight
        })
    }

    /// [`Index::moved`], out of line.
    #[inline(never)]
    fn generic(&self, ix: &Index, pl: &Placement, to: Square) -> u64 {
        ix.moved(pl, self.j, to)
    }
}

/// A row of one index's slots read in another rest order ([`Index::row_in`]): the slots that
/// differ only in the last rest group, from one placement on, each encoded in the other index
/// incrementally.
///
/// The last group's combinations are taken in code order (colex order of the ranks among the
/// squares the other pieces leave free), one step each. In the other index the groups before
/// that group's are fixed (a constant), the group itself is re-ranked among the squares taken
/// before it, and each later piece's rank falls by the number of the group's squares before
/// it (as in a [`Mover`]): a few popcounts a slot instead of a placement step and a whole
/// re-encoding.
#[derive(Clone, Debug)]
pub struct Row {
    /// The squares free for the group, in its square order (colour order for bishops).
    order: [u8; 64],
    /// How many squares `order` holds.
    free: u32,
    /// The group's pieces and their current ranks in `order` (ascending); `done` past the
    /// row's last combination.
    k: usize,
    ranks: [u8; 16],
    done: bool,
    /// In the other index: the lead's slots and the codes of the groups before the moving
    /// group's, the squares taken before it, its weight and order, and the later pieces.
    constant: u64,
    taken: u64,
    weight: u64,
    by_colour: bool,
    terms: [Term; MAX_PIECES],
    len: usize,
}

impl Iterator for Row {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.done {
            return None;
        }
        let k = self.k;
        let set = self.ranks[..k]
            .iter()
            .fold(0u64, |b, &r| b | 1 << self.order[usize::from(r)]);
        let own = if k == 1 {
            u64::from(free_rank(set.trailing_zeros(), self.taken, self.by_colour))
        } else {
            comb_code_in(set, self.taken, self.by_colour)
        };
        let code =
            self.terms[..self.len]
                .iter()
                .fold(self.constant + own * self.weight, |code, t| {
                    let rank = t.rank - (t.before & set).count_ones();
                    code + binom(rank, usize::from(t.place)) * t.weight
                });
        self.done = next_ranks(&mut self.ranks[..k], self.free).is_none();
        Some(code)
    }
}

/// The index of one material. Cheap to build; build once per table.
#[derive(Clone, Debug)]
pub struct Index {
    material: Material,
    /// Groups in index order: lead groups first.
    groups: Vec<Group>,
    lead_groups: usize,
    lead: Lead,
    /// Pieces in the lead groups.
    lead_pieces: usize,
    /// The rest groups, in index order.
    rest: Vec<RestGroup>,
    rest_size: u64,
    pieces: usize,
    /// Number of slots per side.
    size: u64,
    /// Piece of each digit (index order).
    digits: Vec<Piece>,
    /// Group of each digit.
    digit_group: Vec<u8>,
    /// First digit of each group.
    group_start: Vec<usize>,
}

impl Index {
    /// The index of a canonical material. Panics if `material` is not canonical or not a table
    /// (callers canonicalise first; this is a programming error, not input).
    pub fn new(material: Material) -> Index {
        Index::with_rest_order(material, &[])
    }

    /// The index of a canonical material with its rest groups in the order `order`: entry `i`
    /// is the position, in [`Index::new`]'s rest order, of the group that is `i`-th here
    /// (empty: [`Index::new`]'s order). Panics if `order` is neither empty nor a permutation
    /// of the rest groups.
    pub fn with_rest_order(material: Material, order: &[usize]) -> Index {
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
        let (lead, lead_groups) = if material.has_pawns() {
            // Pawn groups first: the lead colour's (White's if it has pawns), then the other's.
            let white = material.count_of(Piece {
                color: Color::White,
                role: Role::Pawn,
            }) as usize;
            let black = material.count_of(Piece {
                color: Color::Black,
                role: Role::Pawn,
            }) as usize;
            let lead_color = if white > 0 {
                Color::White
            } else {
                Color::Black
            };
            let (lc, oc) = if white > 0 {
                (white, black)
            } else {
                (black, 0)
            };
            let pawn_of = |c: Color| Piece {
                color: c,
                role: Role::Pawn,
            };
            let mut order = vec![Group {
                piece: pawn_of(lead_color),
                count: lc,
            }];
            if oc > 0 {
                order.push(Group {
                    piece: pawn_of(Color::Black),
                    count: oc,
                });
            }
            let n = order.len();
            groups.retain(|g| g.piece.role != Role::Pawn);
            order.append(&mut groups);
            groups = order;
            (Lead::Pawns(Box::new(PawnLead::new(lead_color, lc, oc))), n)
        } else {
            // Unique pieces first (material order), then groups by size.
            groups.sort_by_key(|g| g.count);
            let two = groups.len() >= 2
                && LeadTable::raw_len(&[groups[0].count, groups[1].count]) <= MAX_LEAD_RAW;
            let shape: Vec<usize> = groups[..if two { 2 } else { 1 }]
                .iter()
                .map(|g| g.count)
                .collect();
            assert!(
                LeadTable::raw_len(&shape) <= MAX_LEAD_RAW,
                "no index for a leading group of {} identical pieces",
                shape[0]
            );
            (Lead::Pieces(LeadTable::get(&shape)), shape.len())
        };
        // The rest in reverse order: Black's pieces first, the fastest digit a piece of
        // White's (the module documentation says why).
        groups[lead_groups..].reverse();
        if !order.is_empty() {
            let default = groups.split_off(lead_groups);
            assert!(
                order.len() == default.len() && (0..order.len()).all(|i| order.contains(&i)),
                "rest order {order:?} is not a permutation of {} groups",
                default.len()
            );
            groups.extend(order.iter().map(|&i| default[i]));
        }
        let lead_pieces: usize = groups[..lead_groups].iter().map(|g| g.count).sum();
        let mut free = 64 - lead_pieces as u32;
        let mut rest = Vec::new();
        let mut start = lead_pieces;
        for g in &groups[lead_groups..] {
            rest.push(RestGroup {
                start: start as u8,
                count: g.count as u8,
                radix: binom(free, g.count),
                weight: 0,
                by_colour: g.piece.role == Role::Bishop,
                magic: 0,
            });
            free -= g.count as u32;
            start += g.count;
        }
        let mut weight = 1;
        for g in rest.iter_mut().rev() {
            g.weight = weight;
            weight *= g.radix;
        }
        let rest_size: u64 = weight;
        if rest_size < 1 << 32 {
            for g in &mut rest {
                if g.weight > 1 {
                    g.magic = u64::MAX / g.weight + 1;
                }
            }
        }
        let lead_count = match &lead {
            Lead::Pieces(t) => t.configs.len() as u64,
            Lead::Pawns(p) => p.configs(),
        };
        let mut digits = Vec::new();
        let mut digit_group = Vec::new();
        let mut group_start = Vec::new();
        for (gi, g) in groups.iter().enumerate() {
            group_start.push(digits.len());
            for _ in 0..g.count {
                digits.push(g.piece);
                digit_group.push(gi as u8);
            }
        }
        Index {
            material,
            lead_groups,
            lead,
            lead_pieces,
            rest,
            rest_size,
            pieces: material.count(),
            size: lead_count * rest_size,
            digits,
            digit_group,
            group_start,
            groups,
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

    /// Slots per lead configuration: with pawns, one pawn configuration is the range
    /// `config · rest_size .. (config + 1) · rest_size`.
    pub fn rest_size(&self) -> u64 {
        self.rest_size
    }

    /// Number of lead configurations (pawn configurations in a table with pawns).
    pub fn lead_count(&self) -> u64 {
        self.size / self.rest_size
    }

    /// The squares of pawn configuration `config`'s pawns of the lead colour and of the other,
    /// or `None` if the configuration is not canonical (its mirror image has the smaller
    /// number) or the table has no pawns.
    fn canonical_config(&self, config: u64) -> Option<(u64, u64)> {
        let Lead::Pawns(p) = &self.lead else {
            return None;
        };
        let (lead, other) = p.decode(config);
        let mirrored = p.encode(flip_h(lead), flip_h(other));
        mirrored
            .is_none_or(|m| m >= config)
            .then_some((lead, other))
    }

    /// The pawns of pawn configuration `config` (canonical orientation), or `None` if the
    /// configuration is not canonical (its mirror image has the smaller number) or the table
    /// has no pawns.
    pub fn config_pawns(&self, config: u64) -> Option<Vec<(Color, Square)>> {
        let (lead, other) = self.canonical_config(config)?;
        let lead_color = self.groups[0].piece.color;
        let mut out: Vec<(Color, Square)> = Bitboard(lead)
            .map(|s| (lead_color, s))
            .chain(Bitboard(other).map(|s| (Color::Black, s)))
            .collect();
        out.sort_by_key(|&(c, s)| (c, s.index()));
        Some(out)
    }

    /// What the pawn configurations depend on: the colour of the lead pawns and how many
    /// pawns of that colour and of the other the table has (`None` without pawns). Tables that
    /// share it number their configurations alike.
    pub fn pawn_layout(&self) -> Option<(Color, usize, usize)> {
        match &self.lead {
            Lead::Pawns(p) => Some((self.groups[0].piece.color, p.lead_count, p.other_count)),
            Lead::Pieces(_) => None,
        }
    }

    /// The total advancement of pawn configuration `config`'s pawns (ranks from each pawn's
    /// own first rank, summed; what [`Index::config_pawns`] gives, without building the list),
    /// or `None` where that gives `None`.
    pub fn config_advancement(&self, config: u64) -> Option<u32> {
        let (lead, other) = self.canonical_config(config)?;
        let advancement = |color: Color, pawns: u64| -> u32 {
            Bitboard(pawns)
                .map(|s| {
                    if color.is_white() {
                        s.rank()
                    } else {
                        7 - s.rank()
                    }
                })
                .sum()
        };
        Some(advancement(self.groups[0].piece.color, lead) + advancement(Color::Black, other))
    }

    /// Key position (0..48) of the lead pawn of pawn configuration `config`: configurations
    /// come in slices of one lead-pawn square, in increasing key, and every pawn move leads to
    /// a configuration of the same or a higher key.
    pub fn config_slice(&self, config: u64) -> usize {
        match &self.lead {
            Lead::Pawns(p) => {
                let lead_code = config / p.other_radix;
                (0..48)
                    .rev()
                    .find(|&q| p.offset[q] <= lead_code && p.offset[q + 1] > p.offset[q])
                    .expect("configuration number in range")
            }
            Lead::Pieces(_) => 0,
        }
    }

    /// The piece of digit `j` (index order: lead groups first).
    #[inline]
    pub fn digit_piece(&self, j: usize) -> Piece {
        self.digits[j]
    }

    /// Is digit `j` a piece of the lead groups?
    #[inline]
    pub fn is_lead_digit(&self, j: usize) -> bool {
        j < self.lead_pieces
    }

    /// The placement of a slot, for [`Index::moved`] (no validity check).
    #[inline]
    pub fn placement(&self, idx: u64) -> Placement {
        self.placement_with(idx, &mut LeadCache::default())
    }

    /// [`Index::placement`], reusing the lead part of the previous call when the slot has the
    /// same one: the slots of one lead configuration are consecutive, and decoding a pawn
    /// configuration costs as much as the rest of the placement.
    #[inline]
    pub fn placement_with(&self, idx: u64, cache: &mut LeadCache) -> Placement {
        let lead = idx / self.rest_size;
        let rest = idx % self.rest_size;
        if cache.lead != lead {
            *cache = self.lead_part(lead);
        }
        let lead_occ = cache.lead_occ;
        let (squares, ranks) = self.rest_squares(rest, lead_occ);
        let squares = u128::from_le_bytes(cache.squares) | squares;
        Placement {
            squares: squares.to_le_bytes(),
            lead,
            fixers: cache.fixers,
            lead_occ,
            rest,
            ranks: ranks.to_le_bytes(),
        }
    }

    /// The placement of the slot after `pl`'s, when only the last rest digit changes: its
    /// group steps to the next set of squares free for it (in its group's order), without
    /// taking the slot apart. `None` otherwise ([`Index::placement_with`] then). A scan of
    /// consecutive slots takes most of them this way.
    ///
    /// A group of several pieces steps as its combination code does (squares' ranks
    /// `c_0 < … < c_{k-1}`, code `Σ C(c_i, i + 1)`): the lowest rank that can rise by one
    /// without meeting the next does, and those below it restart at `0, 1, …`, which adds
    /// exactly one to the code.
    #[inline]
    pub fn next_placement(&self, pl: &Placement) -> Option<Placement> {
        let g = self.rest.last()?;
        let j = usize::from(g.start);
        let k = usize::from(g.count);
        if k != 1 {
            return self.next_combination(pl, j, k, g.by_colour);
        }
        let rank = pl.ranks[j];
        if u64::from(rank) + 1 >= g.radix {
            return None;
        }
        let sq = u32::from(pl.squares[j]);
        let free = !self.others(pl, j, 1);
        let above = free & u64::MAX.checked_shl(sq + 1).unwrap_or(0);
        let next = if !g.by_colour {
            above
        } else if DARK >> sq & 1 == 1 {
            match above & DARK {
                0 => free & !DARK,
                dark => dark,
            }
        } else {
            above & !DARK
        };
        if next == 0 {
            return None;
        }
        let mut p = *pl;
        p.squares[j] = next.trailing_zeros() as u8;
        p.ranks[j] = rank + 1;
        p.rest += 1;
        Some(p)
    }

    /// [`Index::next_placement`] where the last rest group is the `k` pieces from digit `j`.
    #[inline]
    fn next_combination(
        &self,
        pl: &Placement,
        j: usize,
        k: usize,
        by_colour: bool,
    ) -> Option<Placement> {
        let n = self.pieces();
        // How many squares are free for the group: all but the other pieces'.
        let free_count = 64 - (n - k) as u32;
        let mut p = *pl;
        let i = next_ranks(&mut p.ranks[j..j + k], free_count)?;
        let free = !self.others(pl, j, k);
        for l in 0..=i {
            p.squares[j + l] = select_in(free, u32::from(p.ranks[j + l]), by_colour) as u8;
        }
        p.rest += 1;
        Some(p)
    }

    /// The squares of `pl`'s pieces but the `k` from digit `j`.
    #[inline]
    fn others(&self, pl: &Placement, j: usize, k: usize) -> u64 {
        set_of(&pl.squares[..j]) | set_of(&pl.squares[j + k..self.pieces()])
    }

    /// The placement of slot `idx` in a scan: a step from `last` (the slot taken before, kept
    /// here for the next call) when `idx` follows it ([`Index::next_placement`]), else
    /// [`Index::placement_with`].
    #[inline]
    pub fn placement_after(
        &self,
        last: &mut Option<(u64, Placement)>,
        idx: u64,
        cache: &mut LeadCache,
    ) -> Placement {
        let pl = match last {
            Some((i, p)) if *i + 1 == idx => self.next_placement(p),
            _ => None,
        }
        .unwrap_or_else(|| self.placement_with(idx, cache));
        *last = Some((idx, pl));
        pl
    }

    /// The lead squares (index order), their occupancy and the symmetries fixing them.
    fn lead_part(&self, lead: u64) -> LeadCache {
        let mut squares = [0u8; 16];
        let (lead_occ, fixers) = match &self.lead {
            Lead::Pieces(t) => {
                let sets = t.configs[lead as usize];
                let mut j = 0;
                for (g, &set) in sets.iter().enumerate().take(self.lead_groups) {
                    for s in Bitboard(set) {
                        squares[j] = s.index() as u8;
                        j += 1;
                    }
                    debug_assert_eq!(j, self.group_start[g] + self.groups[g].count);
                }
                (sets[0] | sets[1], t.fixers[lead as usize])
            }
            Lead::Pawns(p) => {
                let (l, o) = p.decode(lead);
                for (j, s) in Bitboard(l).chain(Bitboard(o)).enumerate() {
                    squares[j] = s.index() as u8;
                }
                let fixers = if p.encode(flip_h(l), flip_h(o)).is_some_and(|m| m < lead) {
                    // The mirror image has the smaller number: no slot here is canonical.
                    0
                } else if flip_h(l) == l && flip_h(o) == o {
                    0b11
                } else {
                    1
                };
                (l | o, fixers)
            }
        };
        LeadCache {
            lead,
            squares,
            lead_occ,
            fixers,
        }
    }

    /// The squares of the rest groups of rest code `rest`, least significant group last, and
    /// their ranks among the free squares: byte `j` of each is digit `j`'s (zero for the lead
    /// digits). Built in registers, not byte by byte in memory, and dividing by multiplication
    /// where the rest is small.
    #[inline]
    fn rest_squares(&self, mut rest: u64, lead_occ: u64) -> (u128, u128) {
        let mut taken = lead_occ;
        let mut v = [0u32; 8];
        let mut squares = 0u128;
        let mut ranks = 0u128;
        for g in &self.rest {
            let code = if g.weight == 1 {
                rest
            } else if g.magic != 0 {
                // Lemire's exact division of a 32-bit `rest` by a 32-bit weight.
                ((u128::from(rest) * u128::from(g.magic)) >> 64) as u64
            } else {
                rest / g.weight
            };
            rest -= code * g.weight;
            let start = u32::from(g.start);
            if g.count == 1 {
                let sq = select_in(!taken, code as u32, g.by_colour);
                squares |= u128::from(sq) << (8 * start);
                ranks |= u128::from(code) << (8 * start);
                taken |= 1 << sq;
                continue;
            }
            let k = g.count as usize;
            comb_values(code, k, &mut v);
            let mut set = 0u64;
            for (i, &c) in v[..k].iter().enumerate() {
                let sq = select_in(!taken, c, g.by_colour);
                squares |= u128::from(sq) << (8 * (start + i as u32));
                ranks |= u128::from(c) << (8 * (start + i as u32));
                set |= 1 << sq;
            }
            taken |= set;
        }
        (squares, ranks)
    }

    /// The rest code of the squares (index order), given the lead squares.
    #[inline]
    fn rest_code(&self, squares: &[u8; 16], lead_occ: u64) -> u64 {
        let mut taken = lead_occ;
        let mut code = 0u64;
        for g in &self.rest {
            let start = g.start as usize;
            if g.count == 1 {
                let sq = u32::from(squares[start]);
                let c = free_rank(sq, taken, g.by_colour);
                code += u64::from(c) * g.weight;
                taken |= 1 << sq;
                continue;
            }
            let mut set = 0u64;
            for &s in &squares[start..start + g.count as usize] {
                set |= 1 << s;
            }
            code += comb_code_in(set, taken, g.by_colour) * g.weight;
            taken |= set;
        }
        code
    }

    /// The smallest index of the rest `squares` (index order) under the symmetries `fixers`
    /// that fix the lead configuration `lead`.
    #[inline]
    fn canonical_rest(&self, lead: u64, fixers: u8, squares: &[u8; 16], lead_occ: u64) -> u64 {
        let mut best = self.rest_code(squares, lead_occ);
        let mut rest = fixers & !1;
        while rest != 0 {
            let t = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            let mut img = *squares;
            for s in &mut img[self.lead_pieces..self.pieces] {
                *s = TRANSFORM[t as usize][*s as usize];
            }
            best = best.min(self.rest_code(&img, lead_occ));
        }
        lead * self.rest_size + best
    }

    /// The index after the piece of digit `j` moves to `to` (an empty square; not a pawn of a
    /// table with pawns).
    #[inline]
    pub fn moved(&self, pl: &Placement, j: usize, to: Square) -> u64 {
        let mut squares = pl.squares;
        squares[j] = to.index() as u8;
        if j >= self.lead_pieces {
            return self.canonical_rest(pl.lead, pl.fixers, &squares, pl.lead_occ);
        }
        let Lead::Pieces(t) = &self.lead else {
            unreachable!("pawns are the lead of a table with pawns and never move here")
        };
        self.encode_lead_squares(t, &mut squares)
    }

    /// A [`Mover`] for the moves of the piece of digit `j` from `pl` (not a pawn of a table
    /// with pawns): [`Mover::moved`] gives what [`Index::moved`] gives, at a few operations a
    /// destination where the move changes no symmetry.
    pub fn mover(&self, pl: &Placement, j: usize) -> Mover {
        let mut m = Mover::default();
        self.set_mover(&mut m, pl, j);
        m
    }

    /// Make `m` the [`Mover`] of [`Index::mover`]`(pl, j)` in place: a loop over a slot's
    /// pieces sets one mover again and again rather than building and copying one (a few
    /// hundred bytes) per piece.
    pub fn set_mover(&self, m: &mut Mover, pl: &Placement, j: usize) {
        m.kind = MoverKind::Generic;
        m.j = j;
        m.constant = 0;
        m.own_taken = 0;
        m.own_others = 0;
        m.own_weight = 0;
        m.own_by_colour = false;
        m.lead_sets = [0; 2];
        m.lead_group = 0;
        m.lead_raw = 0;
        m.lead_step = 0;
        m.len = 0;
        let from_bit = 1u64 << pl.squares[j];
        let lead_move = j < self.lead_pieces;
        let own_group = if lead_move {
            let Lead::Pieces(t) = &self.lead else {
                return;
            };
            for (d, &s) in pl.squares[..self.lead_pieces].iter().enumerate() {
                if d != j {
                    m.lead_sets[self.digit_group[d] as usize] |= 1 << s;
                }
            }
            m.lead_group = self.digit_group[j];
            if self.groups[usize::from(m.lead_group)].count == 1 {
                // The raw code is `code(first group) · C(64, |second|) + code(second group)`,
                // and a single piece's code is its square: linear in `to`, the rest being the
                // raw code with the moving piece's group empty.
                m.lead_raw = LeadTable::raw(&t.shape, &m.lead_sets);
                m.lead_step = match (m.lead_group, &t.shape[..]) {
                    (0, &[_, second]) => binom(64, second),
                    _ => 1,
                };
            }
            m.kind = MoverKind::Lead(t);
            None
        } else {
            let g = usize::from(self.digit_group[j]) - self.lead_groups;
            if pl.fixers & !1 != 0 {
                // A symmetry may pick another image.
                return;
            }
            m.kind = if self.rest[g].count == 1 {
                MoverKind::Rest
            } else {
                MoverKind::RestGroup
            };
            // The slot's rest less the codes of this group and the later ones (added back
            // below, the later ones with `to` taken).
            m.constant = pl.lead * self.rest_size + pl.rest;
            Some(g)
        };
        // The squares taken before the moving rest piece's group.
        let mut taken = pl.lead_occ;
        for (gi, grp) in self.rest.iter().enumerate() {
            let start = usize::from(grp.start);
            let end = start + usize::from(grp.count);
            match own_group {
                Some(g) if gi < g => {
                    // Unchanged by the move.
                    taken |= set_of(&pl.squares[start..end]);
                }
                Some(g) if gi == g => {
                    m.own_taken = taken;
                    m.own_weight = grp.weight;
                    m.own_by_colour = grp.by_colour;
                    m.own_others = set_of(&pl.squares[start..end]) & !from_bit;
                    let code: u64 = (start..end)
                        .enumerate()
                        .map(|(i, d)| binom(u32::from(pl.ranks[d]), i + 1))
                        .sum();
                    m.constant -= code * grp.weight;
                }
                _ => {
                    for (i, d) in (start..end).enumerate() {
                        let before = before_in(u32::from(pl.squares[d]), grp.by_colour);
                        let (rank, place) = (u32::from(pl.ranks[d]), i + 1);
                        if own_group.is_some() {
                            m.constant -= binom(rank, place) * grp.weight;
                        }
                        m.terms[m.len] = Term {
                            before,
                            // The moving piece's square, taken before this group, becomes free.
                            rank: rank + u32::from(before & from_bit != 0),
                            place: place as u8,
                            weight: grp.weight,
                        };
                        m.len += 1;
                    }
                }
            }
        }
    }

    /// The canonical index of squares in index order, of a pawnless table (the rest groups in
    /// any order within a group).
    #[inline]
    fn encode_lead_squares(&self, t: &LeadTable, squares: &mut [u8; 16]) -> u64 {
        let raw = if self.lead_pieces == 2 && self.lead_groups == 2 {
            // Two unique lead pieces, the common case.
            u64::from(squares[0]) * 64 + u64::from(squares[1])
        } else {
            let mut sets = [0u64; 2];
            for (j, &s) in squares[..self.lead_pieces].iter().enumerate() {
                sets[self.digit_group[j] as usize] |= 1 << s;
            }
            LeadTable::raw(&t.shape, &sets)
        };
        let c = t.to_canon[raw as usize];
        let (number, sym) = (u64::from(c >> 3), (c & 7) as usize);
        if sym != 0 {
            for s in &mut squares[self.lead_pieces..self.pieces] {
                *s = TRANSFORM[sym][*s as usize];
            }
        }
        let cfg = t.configs[number as usize];
        self.canonical_rest(number, t.fixers[number as usize], squares, cfg[0] | cfg[1])
    }

    /// The canonical index of a placement given group by group (each group's squares as a set).
    #[inline]
    fn encode_sets(&self, sets: &[u64; 16]) -> u64 {
        let ng = self.groups.len();
        let mut sets = *sets;
        let (lead, fixers, lead_occ) = match &self.lead {
            Lead::Pieces(t) => {
                let mut squares = [0u8; 16];
                let mut j = 0;
                for set in &sets[..ng] {
                    for s in Bitboard(*set) {
                        squares[j] = s.index() as u8;
                        j += 1;
                    }
                }
                return self.encode_lead_squares(t, &mut squares);
            }
            Lead::Pawns(p) => {
                let other = if self.lead_groups > 1 { sets[1] } else { 0 };
                let direct = p.encode(sets[0], other);
                let mirrored = p.encode(flip_h(sets[0]), flip_h(other));
                let mirror = match (direct, mirrored) {
                    (Some(a), Some(b)) => b < a,
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (None, None) => unreachable!("some orientation puts the lead pawn on a–d"),
                };
                let number = if mirror {
                    for s in &mut sets[..ng] {
                        *s = flip_h(*s);
                    }
                    mirrored
                } else {
                    direct
                }
                .expect("the chosen orientation encodes");
                let (l, o) = (sets[0], other_of(&sets, self.lead_groups));
                let symmetric = flip_h(l) == l && flip_h(o) == o;
                (number, if symmetric { 0b11 } else { 1 }, l | o)
            }
        };
        let mut squares = [0u8; 16];
        for (g, &set) in sets.iter().enumerate().take(ng).skip(self.lead_groups) {
            for (j, s) in (self.group_start[g]..).zip(Bitboard(set)) {
                squares[j] = s.index() as u8;
            }
        }
        self.canonical_rest(lead, fixers, &squares, lead_occ)
    }

    /// `(side, index)` of a position of this material (either colour orientation), or `None`
    /// if the material does not match. En-passant rights are ignored.
    #[inline]
    pub fn encode(&self, pos: &Position) -> Option<(usize, u64)> {
        self.encode_as(pos, Material::of_position(pos))
    }

    /// [`Index::encode`] of a position whose material (as it stands, not made canonical) the
    /// caller has found already: `mat` must be [`Material::of_position`] of `pos`.
    #[inline]
    pub fn encode_as(&self, pos: &Position, mat: Material) -> Option<(usize, u64)> {
        debug_assert_eq!(mat, Material::of_position(pos));
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
        let mut sets = [0u64; 16];
        for (g, group) in self.groups.iter().enumerate() {
            sets[g] = board.by_piece(group.piece).0;
        }
        self.encode_sets(&sets)
    }

    /// The position of a slot, without checking that it is canonical (for the generator's
    /// loops over slots known to be valid).
    #[inline]
    pub fn decode_valid(&self, side: usize, idx: u64) -> Position {
        let pl = self.placement(idx);
        self.position_of(side, &pl)
    }

    /// The position of a placement.
    #[inline]
    pub fn position_of(&self, side: usize, pl: &Placement) -> Position {
        Self::position_on(side, self.board_of(pl))
    }

    /// The board of a placement: the same for both sides to move, so that a caller that needs
    /// both positions ([`Index::position_on`]) places the pieces once.
    #[inline]
    pub fn board_of(&self, pl: &Placement) -> Board {
        let mut board = Board::empty();
        for (&s, &piece) in pl.squares[..self.pieces].iter().zip(&self.digits) {
            board.put(Square::new(u32::from(s)), piece);
        }
        board
    }

    /// [`Index::board_of`] `pl`, a step from the board of the placement taken before (kept in
    /// `last` for the next call): in a scan, where mostly one piece moves from one slot to the
    /// next, only the pieces that moved are placed again.
    #[inline]
    fn board_after(&self, last: &mut Option<([u8; 16], Board)>, pl: &Placement) -> Board {
        let board = match last {
            Some((squares, board)) => {
                let mut b = *board;
                let k = self.pieces;
                let moved = |j: &usize| squares[*j] != pl.squares[*j];
                // All cleared before any is put: a piece may move to a square another left.
                for j in (0..k).filter(moved) {
                    b.clear(Square::new(u32::from(squares[j])));
                }
                for j in (0..k).filter(moved) {
                    b.put(Square::new(u32::from(pl.squares[j])), self.digits[j]);
                }
                b
            }
            None => self.board_of(pl),
        };
        *last = Some((pl.squares, board));
        board
    }

    /// The position of a placement's `board` ([`Index::board_of`]) with side `side` to move.
    #[inline]
    pub fn position_on(side: usize, board: Board) -> Position {
        let turn = if side == 0 {
            Color::White
        } else {
            Color::Black
        };
        Position::from_board(board, turn)
    }

    /// Is slot `idx` (in range) the canonical representative of its position?
    #[inline]
    pub fn is_canonical(&self, pl: &Placement, idx: u64) -> bool {
        match pl.fixers {
            // A pawn configuration whose mirror image has the smaller number.
            0 => false,
            1 => true,
            _ => self.canonical_rest(pl.lead, pl.fixers, &pl.squares, pl.lead_occ) == idx,
        }
    }

    /// The position of a slot, if the slot is valid (canonical).
    pub fn decode(&self, side: usize, idx: u64) -> Option<Position> {
        if idx >= self.size {
            return None;
        }
        let pl = self.placement(idx);
        self.is_canonical(&pl, idx)
            .then(|| self.position_of(side, &pl))
    }

    /// A [`SlotScan`] of this index.
    pub fn scan(&self) -> SlotScan<'_> {
        SlotScan {
            index: self,
            last: None,
            lead: LeadCache::default(),
            board: None,
        }
    }

    /// Every index of this material that differs only in the order of its rest groups, this
    /// order first, then the others in lexicographic order of their permutation of
    /// [`Index::new`]'s rest groups. They have the same size, lead and valid positions; which
    /// one compresses best depends on the table's values (the writer tries them, a file's
    /// header names the one it uses).
    pub fn rest_orders(&self) -> Vec<Index> {
        let base = Index::new(self.material);
        let n = base.groups.len() - base.lead_groups;
        let mut out = vec![self.clone()];
        let mut perm: Vec<usize> = (0..n).collect();
        loop {
            let ix = Index::with_rest_order(self.material, &perm);
            if ix.groups != self.groups {
                out.push(ix);
            }
            // The next permutation in lexicographic order.
            let Some(i) = (1..n).rev().find(|&i| perm[i - 1] < perm[i]) else {
                break;
            };
            let j = (i..n)
                .rev()
                .find(|&j| perm[j] > perm[i - 1])
                .expect("a larger entry");
            perm.swap(i - 1, j);
            perm[i..].reverse();
        }
        out
    }

    /// The index of `material` (canonical) that [`Index::params`] describes as `params`, if it
    /// is one of its [`Index::rest_orders`].
    pub fn from_params(material: Material, params: &[u8]) -> Option<Index> {
        Index::new(material)
            .rest_orders()
            .into_iter()
            .find(|ix| ix.params() == params)
    }

    /// For each digit of this index, the digit of the same piece in `other`, an index of the
    /// same material in another rest order ([`Index::rest_orders`]).
    pub fn digit_map(&self, other: &Index) -> [u8; 16] {
        assert_eq!(self.material, other.material, "indexes of one material");
        let mut map = [0u8; 16];
        for (g, group) in self.groups.iter().enumerate() {
            let h = other
                .groups
                .iter()
                .position(|o| o.piece == group.piece)
                .expect("the same groups");
            for i in 0..group.count {
                map[self.group_start[g] + i] = (other.group_start[h] + i) as u8;
            }
        }
        map
    }

    /// The length of the runs of slots that hold the same positions in this index and in
    /// `other` (same material, another rest order), so that moving values from one order to
    /// the other needs one such run at a time: the slots of one lead configuration where one
    /// may be fixed by a symmetry (which can move every rest piece: pawnless tables, and
    /// tables with two or more pawns of the lead colour), else the slots with one lead
    /// configuration and one code of each rest group the two orders begin with alike.
    pub fn shared_run(&self, other: &Index) -> u64 {
        let symmetric = match self.lead {
            Lead::Pieces(_) => true,
            Lead::Pawns(_) => self.groups[0].count >= 2,
        };
        if symmetric {
            return self.rest_size;
        }
        let common = self.groups[self.lead_groups..]
            .iter()
            .zip(&other.groups[other.lead_groups..])
            .take_while(|(a, b)| a == b)
            .count();
        match common {
            0 => self.rest_size,
            p => self.rest[p - 1].weight,
        }
    }

    /// The slot of `other` (same material, another rest order) that holds the position of
    /// placement `pl` of this index, which must be canonical here; `map` is
    /// [`Index::digit_map`]`(other)`.
    #[inline]
    pub fn slot_in(&self, pl: &Placement, other: &Index, map: &[u8; 16]) -> u64 {
        let mut squares = [0u8; 16];
        for (j, &s) in pl.squares[..self.pieces].iter().enumerate() {
            squares[map[j] as usize] = s;
        }
        other.canonical_rest(pl.lead, pl.fixers, &squares, pl.lead_occ)
    }

    /// The slots of `other` (same material, another rest order; `map` is
    /// [`Index::digit_map`]`(other)`) holding placement `pl` of this index and the placements
    /// of the slots after it in its row (those differing from it only in the last rest group),
    /// in this index's order: the same as [`Index::slot_in`] of each. `None` where a symmetry
    /// fixes `pl`'s lead (another image may be the canonical one there), `pl` is not canonical,
    /// or the index has no rest group.
    pub fn row_in(&self, pl: &Placement, other: &Index, map: &[u8; 16]) -> Option<Row> {
        if pl.fixers != 1 {
            return None;
        }
        let g = self.rest.last()?;
        let (j, k) = (usize::from(g.start), usize::from(g.count));
        let free = !self.others(pl, j, k);
        let mut order = [0u8; 64];
        let mut n = 0;
        let parts = if g.by_colour {
            [free & DARK, free & !DARK]
        } else {
            [free, 0]
        };
        for s in parts.into_iter().flat_map(Bitboard) {
            order[n] = s.index() as u8;
            n += 1;
        }
        let mut ranks = [0u8; 16];
        ranks[..k].copy_from_slice(&pl.ranks[j..j + k]);
        // The placement in the other index's digit order; the moving group there.
        let mut squares = [0u8; 16];
        for (d, &s) in pl.squares[..self.pieces].iter().enumerate() {
            squares[usize::from(map[d])] = s;
        }
        let moving = usize::from(other.digit_group[usize::from(map[j])]) - other.lead_groups;
        let mut row = Row {
            order,
            free: n as u32,
            k,
            ranks,
            done: false,
            constant: pl.lead * other.rest_size,
            taken: 0,
            weight: 0,
            by_colour: false,
            terms: [Term::default(); MAX_PIECES],
            len: 0,
        };
        // The squares taken before each group, the moving group's left out.
        let mut taken = pl.lead_occ;
        for (gi, grp) in other.rest.iter().enumerate() {
            let start = usize::from(grp.start);
            let set = set_of(&squares[start..start + usize::from(grp.count)]);
            if gi == moving {
                row.taken = taken;
                row.weight = grp.weight;
                row.by_colour = grp.by_colour;
                continue;
            }
            if gi < moving {
                row.constant += comb_code_in(set, taken, grp.by_colour) * grp.weight;
            } else {
                for s in Bitboard(set) {
                    let before = before_in(s.index() as u32, grp.by_colour);
                    row.terms[row.len] = Term {
                        before,
                        rank: (before & !taken).count_ones(),
                        place: (before & set).count_ones() as u8 + 1,
                        weight: grp.weight,
                    };
                    row.len += 1;
                }
            }
            taken |= set;
        }
        Some(row)
    }

    /// Description of the index for file headers: scheme, then each group in index order.
    pub fn params(&self) -> Vec<u8> {
        let mut v = vec![
            INDEX_SCHEME,
            match self.lead {
                Lead::Pieces(_) => 0,
                Lead::Pawns(_) => 2,
            },
            self.lead_groups as u8,
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

/// The other-colour pawn set among group sets (empty when the lead colour alone has pawns).
#[inline]
fn other_of(sets: &[u64; 16], lead_groups: usize) -> u64 {
    if lead_groups > 1 { sets[1] } else { 0 }
}

/// The index scheme written in file headers (first byte of the index parameters): 5, the
/// near-dense index of this module, the rest groups in reverse order and bishops numbering
/// squares colour by colour (4: the rest in material order, every piece in square order; the
/// sparse index of format versions 2 and 3 wrote none).
pub const INDEX_SCHEME: u8 = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn bitboard_transforms_match_square_transforms() {
        for t in 0..8 {
            for sq in Square::all() {
                assert_eq!(
                    transform_bb(t, Bitboard::from_square(sq)),
                    Bitboard::from_square(transform_square(t, sq))
                );
                assert_eq!(
                    TRANSFORM[t as usize][sq.index()] as usize,
                    transform_square(t, sq).index()
                );
            }
        }
    }

    /// `select` against walking the bits one by one.
    #[test]
    fn select_finds_the_nth_bit() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let free = next(&mut state) & next(&mut state) | next(&mut state) >> 40;
            for (c, sq) in Bitboard(free).enumerate() {
                assert_eq!(select(free, c as u32), sq.index() as u32, "{free:#x} {c}");
            }
        }
    }

    #[test]
    fn combinations_round_trip() {
        for k in 1..=5usize {
            let n = 20u32;
            let mut seen = 0u64;
            // Every k-subset of n squares has a distinct code below C(n, k).
            for set in 0u64..1 << n {
                if set.count_ones() as usize != k {
                    continue;
                }
                let code = comb_code(set);
                assert!(code < binom(n, k));
                let mut v = [0u32; 8];
                comb_values(code, k, &mut v);
                assert_eq!(v[..k].iter().fold(0u64, |s, &c| s | 1 << c), set);
                seen += 1;
            }
            assert_eq!(seen, binom(n, k));
        }
        for c in 0..40 {
            let free = 0xdead_beef_f00d_cafe_u64;
            let sq = select(free, c);
            assert!(free >> sq & 1 == 1 && (free & ((1 << sq) - 1)).count_ones() == c);
        }
    }

    /// Numbering free squares in colour order, against the order spelt out: the dark squares
    /// (file + rank even) in square order, then the light ones.
    #[test]
    fn colour_order_numbers_free_squares() {
        let order: Vec<u32> = (0..64u32)
            .filter(|s| (s % 8 + s / 8) % 2 == 0)
            .chain((0..64u32).filter(|s| (s % 8 + s / 8) % 2 == 1))
            .collect();
        assert_eq!(order[..4], [0, 2, 4, 6]);
        assert_eq!(order[32..36], [1, 3, 5, 7]);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..200 {
            // Sparse and dense sets of taken squares.
            let taken = next(&mut state)
                & next(&mut state)
                & if round % 2 == 0 { !0 } else { next(&mut state) };
            let free: Vec<u32> = order
                .iter()
                .copied()
                .filter(|&s| taken >> s & 1 == 0)
                .collect();
            for (c, &sq) in free.iter().enumerate() {
                assert_eq!(free_rank(sq, taken, true), c as u32);
                assert_eq!(select_in(!taken, c as u32, true), sq);
                // Square order: the square less the taken squares below it.
                assert_eq!(
                    free_rank(sq, taken, false),
                    sq - (taken & ((1u64 << sq) - 1)).count_ones()
                );
            }
            // A combination of three free squares: the code of their numbers, ascending.
            let set = free
                .iter()
                .step_by(5)
                .take(3)
                .fold(0u64, |b, &s| b | 1 << s);
            let mut ranks: Vec<u32> = Bitboard(set)
                .map(|s| free_rank(s.index() as u32, taken, true))
                .collect();
            ranks.sort_unstable();
            let want: u64 = ranks
                .iter()
                .enumerate()
                .map(|(i, &r)| binom(r, i + 1))
                .sum();
            assert_eq!(comb_code_in(set, taken, true), want);
        }
    }

    /// The symmetries of a material's tables: 8 without pawns, the mirror with.
    fn symmetries(m: Material) -> Vec<u8> {
        if m.has_pawns() {
            vec![0, 1]
        } else {
            (0..8).collect()
        }
    }

    /// A key of a board's orbit under the symmetries, computed naively: the smallest image's
    /// sorted (colour, role, square) list, packed.
    fn orbit_key(board: &Board, syms: &[u8]) -> u128 {
        syms.iter()
            .map(|&t| {
                let mut v = [0u16; 16];
                let mut n = 0;
                for (sq, p) in board.pieces() {
                    v[n] = ((p.color.index() * 6 + p.role.index()) * 64
                        + transform_square(t, sq).index()) as u16;
                    n += 1;
                }
                v[..n].sort_unstable();
                v[..n].iter().fold(0u128, |k, &x| k << 10 | u128::from(x))
            })
            .min()
            .expect("at least the identity")
    }

    /// Every placement of a material's pieces (distinct squares, pawns on ranks 2–7), by brute
    /// force.
    fn all_boards(m: Material, f: &mut impl FnMut(&Board)) {
        let pieces: Vec<Piece> = Color::ALL
            .iter()
            .flat_map(|&color| {
                Role::ALL.iter().flat_map(move |&role| {
                    let p = Piece { color, role };
                    std::iter::repeat_n(p, m.count_of(p) as usize)
                })
            })
            .collect();
        fn place(pieces: &[Piece], board: &mut Board, f: &mut impl FnMut(&Board)) {
            let Some((&p, rest)) = pieces.split_first() else {
                f(board);
                return;
            };
            for sq in Square::all() {
                if board.piece_at(sq).is_some()
                    || (p.role == Role::Pawn && !(1..7).contains(&sq.rank()))
                {
                    continue;
                }
                board.put(sq, p);
                place(rest, board, f);
                board.clear(sq);
            }
        }
        place(&pieces, &mut Board::empty(), f);
    }

    /// Valid slots are exactly the positions up to symmetry (orbits counted naively), every
    /// image of a valid slot's position encodes to that slot, and every board encodes to a
    /// valid slot of its own orbit.
    #[test]
    fn valid_slots_are_the_orbits_of_small_materials() {
        use rayon::prelude::*;
        let materials: Vec<Material> = (2..=3).flat_map(Material::all_with_pieces).collect();
        materials.par_iter().for_each(|&m| {
            let index = Index::new(m);
            let syms = symmetries(m);
            let mut orbits = HashSet::new();
            let mut boards = 0u64;
            all_boards(m, &mut |b| {
                boards += 1;
                // A sample of boards is decoded back (all of them would be slow).
                if boards.is_multiple_of(7) {
                    let idx = index.encode_board(b);
                    let pos = index.decode(0, idx).expect("boards encode to valid slots");
                    assert_eq!(orbit_key(pos.board(), &syms), orbit_key(b, &syms), "{m}");
                }
                orbits.insert(orbit_key(b, &syms));
            });
            let mut valid = 0;
            for idx in 0..index.size() {
                let Some(pos) = index.decode(0, idx) else {
                    continue;
                };
                valid += 1;
                for &t in &syms {
                    let mut img = Board::empty();
                    for (sq, p) in pos.board().pieces() {
                        img.put(transform_square(t, sq), p);
                    }
                    assert_eq!(index.encode_board(&img), idx, "{m} t={t}");
                }
            }
            assert_eq!(valid, orbits.len(), "{m}: valid slots vs orbits");
        });
    }

    /// Deterministic pseudo-random numbers for sampling.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// On sampled slots of larger materials: decode/encode round trip, images, and
    /// [`Index::moved`] against re-encoding the moved board.
    #[test]
    fn sampled_slots_of_larger_materials() {
        let names = [
            "KQvKR", "NNvNN", "KPvKP", "PPvPP", "KRNvBN", "NNNvNN", "KKKvPP", "KNPvKB", "QRNvQRN",
            "NNNvNNN", "KKKKKvP", "KQRvKBN", "BBNvPP", "PPPvPPP", "KQvKQQ", "KvKQRBN", "KBBBvB",
            "BBBvBP",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for name in names {
            let m = Material::parse(name).expect("material").canonical();
            let index = Index::new(m);
            let syms = symmetries(m);
            let mut valid = 0;
            let mut reused = Mover::default();
            for _ in 0..3000 {
                let idx = next(&mut state) % index.size();
                let Some(pos) = index.decode(0, idx) else {
                    continue;
                };
                valid += 1;
                let board = *pos.board();
                assert_eq!(index.encode_board(&board), idx, "{m}");
                for &t in &syms {
                    let mut b = Board::empty();
                    for (sq, p) in board.pieces() {
                        b.put(transform_square(t, sq), p);
                    }
                    assert_eq!(index.encode_board(&b), idx, "{m} t={t}");
                }
                let pl = index.placement(idx);
                let occ = board.occupied();
                for j in 0..index.pieces() {
                    let p = index.digit_piece(j);
                    if p.role == Role::Pawn {
                        continue;
                    }
                    let from = Square::new(u32::from(pl.squares[j]));
                    let mover = index.mover(&pl, j);
                    // Set again in place, over the last piece's (or last slot's) mover.
                    index.set_mover(&mut reused, &pl, j);
                    for to in Square::all().filter(|&s| !occ.contains(s)) {
                        let mut b = board;
                        b.clear(from);
                        b.put(to, p);
                        let want = index.encode_board(&b);
                        assert_eq!(index.moved(&pl, j, to), want, "{m}");
                        assert_eq!(
                            mover.moved(&index, &pl, to),
                            want,
                            "{m} mover, j={j} to={to:?}"
                        );
                        assert_eq!(reused.moved(&index, &pl, to), want, "{m} set_mover, j={j}");
                    }
                }
            }
            assert!(
                valid > 2000,
                "{m}: only {valid} of 3000 sampled slots valid"
            );
        }
    }

    /// [`Index::board_after`], stepping from the board of any slot before (the next, or one
    /// further on), places the pieces as [`Index::board_of`] does from nothing: pieces of one
    /// group swapping squares, pawns and pieces moving onto squares others left.
    #[test]
    fn board_after_is_the_board_of_the_placement() {
        for name in ["KRvK", "NNvNN", "BBBvN", "KBvKP", "PPvPP", "KQRvB"] {
            let ix = Index::new(Material::parse(name).expect("material").canonical());
            for stride in [1, 7, 1031] {
                let mut last = None;
                for idx in (0..ix.size()).step_by(stride) {
                    let pl = ix.placement(idx);
                    let b = ix.board_after(&mut last, &pl);
                    assert_eq!(b, ix.board_of(&pl), "{name} slot {idx}");
                    assert_eq!(
                        b.occupied().count() as usize,
                        ix.pieces(),
                        "{name} slot {idx}"
                    );
                }
            }
        }
    }

    /// A [`SlotScan`] decodes every slot as [`Index::decode`] does, in order or skipping ahead
    /// (pawnless and with pawns, the last rest group one piece or several, slots past the end).
    #[test]
    fn a_scan_decodes_as_decode() {
        for name in ["KRvK", "BBvN", "KBvKP", "NNvNN", "PPvPP", "KQRvB"] {
            let ix = Index::new(Material::parse(name).expect("material").canonical());
            for (side, stride) in [(0, 1), (1, 1), (1, 13)] {
                let mut scan = ix.scan();
                for idx in (0..ix.size() + 2).step_by(stride) {
                    assert_eq!(
                        scan.decode(side, idx),
                        ix.decode(side, idx),
                        "{name} slot {idx}"
                    );
                }
            }
        }
    }

    /// [`Index::next_placement`] steps to the next slot's placement as a decode finds it, in
    /// every rest order, and does so for most slots where the index has rest groups, whether
    /// the last is one piece or several (a pair in NNvNN, KKvKB and KRvNN; three bishops
    /// numbered by colour in BBBvN). BBvN and PPvPP have none: every piece is in the lead.
    #[test]
    fn next_placement_is_the_next_slots() {
        for (name, steps) in [
            ("KRvK", true),
            ("KBvB", true),
            ("BBvN", false),
            ("KPvK", true),
            ("KBvKP", true),
            ("NNvNN", true),
            ("KKvKB", true),
            ("BBBvN", true),
            ("KRvNN", true),
            ("PPvPP", false),
            ("NNvPP", true),
            ("KQRvB", true),
        ] {
            let m = Material::parse(name).expect("material").canonical();
            for ix in Index::new(m).rest_orders() {
                let mut stepped = 0u64;
                for idx in 0..ix.size() - 1 {
                    if let Some(next) = ix.next_placement(&ix.placement(idx)) {
                        assert_eq!(next, ix.placement(idx + 1), "{m} slot {idx}");
                        stepped += 1;
                    }
                }
                assert_eq!(
                    steps,
                    stepped * 10 > ix.size() * 9,
                    "{m}: {stepped} of {} stepped",
                    ix.size()
                );
            }
        }
    }

    /// [`Index::row_in`] gives, for each slot of a row from any start, the slot
    /// [`Index::slot_in`] encodes, in every pair of rest orders; its rows end where
    /// [`Index::next_placement`] stops stepping, and cover every slot whose lead no symmetry
    /// fixes (pawnless; with pawns, a last group of one piece, a pair, a pair or three of
    /// bishops by colour).
    #[test]
    fn rows_read_in_another_order_are_the_slots_there() {
        for name in [
            "KQRvB", "KRvKN", "KPvN", "BPvN", "KPvNN", "KPvBB", "KKvNP", "BBvNP",
        ] {
            let m = Material::parse(name).expect("material").canonical();
            let orders = Index::new(m).rest_orders();
            assert!(orders.len() > 1, "{m}");
            for ix in &orders {
                let asymmetric = (0..ix.size())
                    .filter(|&i| ix.placement(i).fixers == 1)
                    .count();
                for other in &orders {
                    let map = ix.digit_map(other);
                    let check = |idx: u64, at: u64| {
                        let p = ix.placement(idx);
                        assert!(ix.is_canonical(&p, idx), "{m} slot {idx}");
                        assert_eq!(at, ix.slot_in(&p, other, &map), "{m} slot {idx}");
                    };
                    // Whole rows, from each row's first slot.
                    let (mut idx, mut in_rows) = (0, 0);
                    while idx < ix.size() {
                        let Some(row) = ix.row_in(&ix.placement(idx), other, &map) else {
                            idx += 1;
                            continue;
                        };
                        for at in row {
                            check(idx, at);
                            idx += 1;
                            in_rows += 1;
                        }
                        assert!(
                            ix.next_placement(&ix.placement(idx - 1)).is_none(),
                            "{m} {idx}"
                        );
                    }
                    assert_eq!(in_rows, asymmetric, "{m}");
                    // Rows from slots within them.
                    for start in (0..ix.size()).step_by(7) {
                        if let Some(row) = ix.row_in(&ix.placement(start), other, &map) {
                            (start..).zip(row.take(3)).for_each(|(i, at)| check(i, at));
                        }
                    }
                }
            }
        }
    }

    /// Every rest order holds the same positions: a valid slot of one order is a valid slot of
    /// [`Index::new`]'s at [`Index::slot_in`], in the same [`Index::shared_run`], and the
    /// header parameters name the order.
    #[test]
    fn rest_orders_hold_the_same_positions() {
        // Exhaustively where small: one-to-one onto the valid slots of the default order.
        for name in ["KNvP", "NvBP"] {
            let m = Material::parse(name).expect("material").canonical();
            let own = Index::new(m);
            let orders = own.rest_orders();
            assert_eq!(orders.len(), 2, "{m}");
            let own_valid: HashSet<(usize, u64)> = (0..2)
                .flat_map(|side| (0..own.size()).map(move |i| (side, i)))
                .filter(|&(side, i)| own.decode(side, i).is_some())
                .collect();
            for ix in &orders {
                let map = ix.digit_map(&own);
                let mut seen = HashSet::new();
                for side in 0..2 {
                    for idx in 0..ix.size() {
                        let pl = ix.placement(idx);
                        if ix.is_canonical(&pl, idx) {
                            let at = ix.slot_in(&pl, &own, &map);
                            assert!(seen.insert((side, at)), "{m}: slot {at} twice");
                        }
                    }
                }
                assert_eq!(seen, own_valid, "{m} {:?}", ix.params());
            }
        }
        // Sampled: every permutation of up to four rest groups.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for (name, count) in [
            ("KQRBvN", 6),
            ("KRvKN", 2),
            ("KBPvKN", 24),
            ("KPPvKN", 6),
            ("KQRvKBN", 24),
            ("BBvBP", 2),
        ] {
            let m = Material::parse(name).expect("material").canonical();
            let own = Index::new(m);
            let orders = own.rest_orders();
            assert_eq!(orders.len(), count, "{m}");
            assert_eq!(orders[0].params(), own.params(), "{m}: its own order first");
            for ix in &orders {
                assert_eq!(ix.size(), own.size(), "{m}");
                let back = Index::from_params(m, &ix.params()).expect("an order of m");
                assert_eq!(back.params(), ix.params(), "{m}");
                let (map, run) = (ix.digit_map(&own), ix.shared_run(&own));
                for _ in 0..2000 {
                    let idx = next(&mut state) % ix.size();
                    let Some(pos) = ix.decode(0, idx) else {
                        continue;
                    };
                    assert_eq!(ix.encode_board(pos.board()), idx, "{m}");
                    let at = ix.slot_in(&ix.placement(idx), &own, &map);
                    assert_eq!(at, own.encode_board(pos.board()), "{m}");
                    assert_eq!(at / run, idx / run, "{m}: outside the shared run");
                }
            }
        }
        let mut wrong = Index::new(Material::parse("KRvKN").expect("material")).params();
        wrong[4..7].copy_from_slice(&[1, 4, 1]);
        assert!(Index::from_params(Material::parse("KRvKN").expect("m"), &wrong).is_none());
    }

    /// Pawn pushes never lower the lead pawn's key (the slice order the generator relies on).
    #[test]
    fn pawn_pushes_keep_or_raise_the_slice() {
        for name in ["KPvKP", "PPvPP", "KPPvK", "KvPP", "PPPvP", "KNPvKB"] {
            let m = Material::parse(name).expect("material").canonical();
            let index = Index::new(m);
            for c in 0..index.lead_count() {
                let Some(pawns) = index.config_pawns(c) else {
                    continue;
                };
                let occ = pawns.iter().fold(Bitboard::EMPTY, |b, &(_, s)| b.with(s));
                for (i, &(color, sq)) in pawns.iter().enumerate() {
                    let up = if color.is_white() { 8 } else { -8 };
                    let Some(to) = sq.offset(up) else { continue };
                    if occ.contains(to) || !(1..7).contains(&to.rank()) {
                        continue;
                    }
                    // Any placement of the other pieces: take the first valid slot.
                    let mut board = Board::empty();
                    for (k, &(col, s)) in pawns.iter().enumerate() {
                        let s = if k == i { to } else { s };
                        board.put(
                            s,
                            Piece {
                                color: col,
                                role: Role::Pawn,
                            },
                        );
                    }
                    let taken = board.occupied();
                    let mut free = Square::all().filter(|&s| !taken.contains(s));
                    for g in &index.groups[index.lead_groups..] {
                        for _ in 0..g.count {
                            board.put(free.next().expect("room"), g.piece);
                        }
                    }
                    let after = index.encode_board(&board) / index.rest_size();
                    assert!(
                        index.config_slice(after) >= index.config_slice(c),
                        "{m}: push {sq:?} -> {to:?}"
                    );
                }
            }
        }
    }

    /// Slots per side against positions per side for the six-piece tables the issue names.
    #[test]
    fn six_piece_sizes() {
        // 64·63·62·61·60·59 / 8 placements up to symmetry (a lower bound on slots).
        let distinct = 64u64 * 63 * 62 * 61 * 60 * 59 / 8;
        let size = Index::new(Material::parse("KQRvKBN").expect("m")).size();
        assert!(size >= distinct && size < distinct * 104 / 100, "{size}");
        let nnn = Index::new(Material::parse("NNNvNNN").expect("m")).size();
        assert!(nnn < binom(64, 3) * binom(61, 3) / 8 * 11 / 10, "{nnn}");
    }
}
