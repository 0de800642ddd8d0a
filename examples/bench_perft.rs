//! Perft benchmark: antitb's move generator against shakmaty's `Antichess` on the same positions.
//!
//! For each position both engines count the leaves at a fixed depth; the counts must agree (the
//! program exits with status 1 otherwise). Each timing is the best of 3 runs. Prints nodes per
//! second and the ratio ours / shakmaty, per position and in total (total nodes over total best
//! times), twice:
//! - `perft`: [`antitb::rules::perft`] as it is (it counts the last ply from attack sets, without
//!   building moves) against `shakmaty::perft` (which builds the last ply's move list);
//! - `movegen`: the same tree walk, but the last ply builds the full legal move list too, as
//!   shakmaty does: this compares the move generators themselves.
//!
//! Run with `scripts/bench-perft.sh` (release profile).

use shakmaty::CastlingMode;
use shakmaty::fen::Fen;
use shakmaty::variant::Antichess;
use std::time::{Duration, Instant};

/// Name, FEN, depth.
const POSITIONS: &[(&str, &str, u32)] = &[
    (
        "startpos",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - -",
        5,
    ),
    (
        "open-middlegame",
        "rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNB1KBNR w - -",
        5,
    ),
    (
        "middlegame-ep",
        "r1b2k2/pp1p4/n7/2p1p1p1/P5P1/1P5B/3P1K2/1R6 w - c6",
        6,
    ),
    (
        "middlegame-rooks",
        "r6r/ppn1n1pp/5p2/2p5/2P5/P5PB/P3P2R/R2K2N1 b - -",
        5,
    ),
    ("rook-vs-pawns", "8/5k2/8/1p6/8/2P5/4R3/8 b - -", 8),
    ("four-queens", "q6q/8/8/3Q4/8/8/8/Q6Q b - -", 7),
    ("king-rook-pawns", "8/2K5/r6p/4p3/8/6p1/8/8 b - -", 7),
];

const RUNS: usize = 3;

/// Best wall time of `RUNS` calls, and the value of the last call.
fn best_of(mut f: impl FnMut() -> u64) -> (Duration, u64) {
    let mut best = Duration::MAX;
    let mut value = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        value = std::hint::black_box(f());
        best = best.min(start.elapsed());
    }
    (best, value)
}

/// Perft that builds the legal move list at every node, the last ply included.
fn perft_movegen(pos: &antitb::rules::Position, depth: u32) -> u64 {
    let moves = pos.legal_moves();
    if depth <= 1 {
        return if depth == 0 { 1 } else { moves.len() as u64 };
    }
    moves
        .iter()
        .map(|m| perft_movegen(&pos.after(m), depth - 1))
        .sum()
}

fn mnps(nodes: u64, t: Duration) -> f64 {
    nodes as f64 / t.as_secs_f64() / 1e6
}

struct Row {
    name: String,
    depth: u32,
    nodes: u64,
    ours: Duration,
    shak: Duration,
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}");
    println!(
        "{:<18} {:>5} {:>12} {:>10} {:>10} {:>7}",
        "position", "depth", "nodes", "ours Mn/s", "shak Mn/s", "ratio"
    );
    let (mut nodes, mut ours, mut shak) = (0u64, Duration::ZERO, Duration::ZERO);
    for r in rows {
        let (a, b) = (mnps(r.nodes, r.ours), mnps(r.nodes, r.shak));
        println!(
            "{:<18} {:>5} {:>12} {a:>10.1} {b:>10.1} {:>7.2}",
            r.name,
            r.depth,
            r.nodes,
            a / b
        );
        nodes += r.nodes;
        ours += r.ours;
        shak += r.shak;
    }
    let (a, b) = (mnps(nodes, ours), mnps(nodes, shak));
    println!(
        "{:<18} {:>5} {nodes:>12} {a:>10.1} {b:>10.1} {:>7.2}",
        "total",
        "",
        a / b
    );
}

fn main() {
    let (mut perft_rows, mut movegen_rows) = (Vec::new(), Vec::new());
    let mut mismatch = false;
    for &(name, fen, depth) in POSITIONS {
        let ours = antitb::rules::parse_fen(fen).expect("valid FEN");
        let theirs: Antichess = fen
            .parse::<Fen>()
            .expect("FEN syntax")
            .into_position(CastlingMode::Standard)
            .expect("valid for shakmaty");
        let (t_shak, n_shak) = best_of(|| shakmaty::perft(std::hint::black_box(&theirs), depth));
        let (t_ours, n_ours) = best_of(|| antitb::rules::perft(std::hint::black_box(&ours), depth));
        let (t_gen, n_gen) = best_of(|| perft_movegen(std::hint::black_box(&ours), depth));
        for (what, n) in [("perft", n_ours), ("movegen", n_gen)] {
            if n != n_shak {
                eprintln!("MISMATCH {name} depth {depth}: ours ({what}) {n}, shakmaty {n_shak}");
                mismatch = true;
            }
        }
        let row = |t| Row {
            name: name.to_string(),
            depth,
            nodes: n_shak,
            ours: t,
            shak: t_shak,
        };
        perft_rows.push(row(t_ours));
        movegen_rows.push(row(t_gen));
    }
    print_table("perft (antitb bulk-counts the last ply)", &perft_rows);
    print_table("movegen (both build every move list)", &movegen_rows);
    if mismatch {
        std::process::exit(1);
    }
}
