//! The cost of one un-move in the generator's index: the near-dense index ([`Index::moved`])
//! against a sparse index's one-digit update (`idx + (to − from) · 64^w`, 6 bits per piece, the
//! previous index's fast path, here without its symmetry handling: a lower bound on its cost).
//!
//! For each material, random valid slots are taken apart once ([`Index::placement`]) and every
//! quiet move of every non-pawn piece is re-encoded, as the retrograde passes do; the result is
//! folded into a checksum so nothing is optimised away. Prints ns per re-encoded move for both
//! and their ratio, and the slots per side of both layouts. Run in release:
//! `cargo run --release --example unmove_bench`.

use antitb::rules::Square;
use antitb::rules::attacks::piece_attacks;
use antitb::rules::{Bitboard, Role};
use antitb::table::Index;
use antitb::table::Material;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let names = [
        "KRvKN", "KQvRB", "KRNvBN", "KQRBvN", "NNNvNN", "KNPvKB", "KQRvKBN", "NNNvNNN", "KKKKKvP",
    ];
    println!(
        "{:<9} {:>14} {:>14} {:>12} {:>12} {:>7}",
        "material", "dense slots", "sparse slots", "dense ns", "sparse ns", "ratio"
    );
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for name in names {
        let m = Material::parse(name).expect("material").canonical();
        let index = Index::new(m);
        let k = index.pieces();
        let sparse_size = if m.has_pawns() { 24 } else { 10 } * 64u64.pow(k as u32 - 1);
        // Sample valid slots.
        let mut slots = Vec::new();
        while slots.len() < 200_000 {
            let idx = rand() % index.size();
            if index.decode(0, idx).is_some() {
                slots.push(idx);
            }
        }
        let (mut moves, mut sum) = (0u64, 0u64);
        let t = Instant::now();
        for &idx in &slots {
            let pl = index.placement(idx);
            let occ = pl.squares[..k]
                .iter()
                .fold(Bitboard::EMPTY, |b, &s| b.with(Square::new(u32::from(s))));
            for j in 0..k {
                let p = index.digit_piece(j);
                if p.role == Role::Pawn {
                    continue;
                }
                let from = Square::new(u32::from(pl.squares[j]));
                for to in piece_attacks(p.role, from, occ) & !occ {
                    sum = sum.wrapping_add(index.moved(&pl, j, to));
                    moves += 1;
                }
            }
        }
        let dense = t.elapsed().as_nanos() as f64 / moves as f64;
        black_box(sum);
        // The sparse one-digit update over the same positions and moves.
        let (mut moves2, mut sum2) = (0u64, 0u64);
        let t = Instant::now();
        for &idx in &slots {
            let pl = index.placement(black_box(idx));
            let sq = &pl.squares[..k];
            let sparse = sq.iter().fold(0u64, |i, &s| i * 64 + u64::from(s));
            let occ = sq
                .iter()
                .fold(Bitboard::EMPTY, |b, &s| b.with(Square::new(u32::from(s))));
            for (j, &s) in sq.iter().enumerate() {
                let p = index.digit_piece(j);
                if p.role == Role::Pawn {
                    continue;
                }
                let w = 1u64 << (6 * (k - 1 - j));
                let from = Square::new(u32::from(s));
                for to in piece_attacks(p.role, from, occ) & !occ {
                    let i = (sparse as i64 + (to.index() as i64 - i64::from(s)) * w as i64) as u64;
                    sum2 = sum2.wrapping_add(i);
                    moves2 += 1;
                }
            }
        }
        let sparse = t.elapsed().as_nanos() as f64 / moves2 as f64;
        black_box(sum2);
        assert_eq!(moves, moves2);
        println!(
            "{:<9} {:>14} {:>14} {:>12.1} {:>12.1} {:>7.2}",
            name,
            index.size(),
            sparse_size,
            dense,
            sparse,
            dense / sparse
        );
    }
}
