//! Subcommands, one file each: its arguments (`#[derive(Args)]`) and its `run`, which turns
//! them into the library's own types and returns `Result<(), String>`; [`run`] prints the
//! error on one line and exits 2. Shared parsing (material selection, `--metrics`) is in
//! `select.rs`.

mod checksums;
mod generate;
mod perft;
mod plan;
mod probe;
mod prove;
mod select;
mod serve;
mod stats;
mod verify;

use antitb::rules::Position;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "antitb",
    version,
    about = "Antichess endgame tablebases: generate, probe, verify, prove"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build tables (default: every table up to 4 pieces) and everything they need.
    Generate(generate::GenerateArgs),
    /// Statistics of a stored table: WDL counts, DTZ/DTW histograms, longest wins (never generates).
    Stats(stats::StatsArgs),
    /// The dependency graph of a build with memory/disk/time estimates, as a Makefile, JSON, or
    /// a script submitting it to Slurm.
    Plan(plan::PlanArgs),
    /// SHA-256 of every table file (sha256sum format), or a comparison with a published list.
    Checksums(checksums::ChecksumsArgs),
    /// Probe positions: who wins, WDL, DTZ, DTW, and every legal move ranked.
    Probe(probe::ProbeArgs),
    /// Check stored tables: headers, checksums, every stored position against its successors;
    /// known results (--known); Syzygy tables (--syzygy, needs the `syzygy` build feature).
    Verify(verify::VerifyArgs),
    /// Prove a win by proof-number search down to finished games and table positions:
    /// answers win, loss, not a win or unknown.
    Prove(prove::ProveArgs),
    /// Check a proof file written by `prove --proof` with the rules and the tables only.
    CheckProof(prove::CheckProofArgs),
    /// Answer the lichess tablebase HTTP API (GET /antichess, /antichess/mainline, /health).
    Serve(serve::ServeArgs),
    /// Count the leaf nodes of the legal move tree (move generator check).
    Perft(perft::PerftArgs),
}

/// Parse the command line, run, and return the process exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Generate(a) => generate::run(a),
        Command::Stats(a) => stats::run(a),
        Command::Plan(a) => plan::run(a),
        Command::Checksums(a) => checksums::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Prove(a) => prove::run_prove(a),
        Command::CheckProof(a) => prove::run_check(a),
        Command::Serve(a) => serve::run(a),
        Command::Perft(a) => perft::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("antitb: error: {msg}");
            2
        }
    }
}

/// Run `f` on a rayon pool of `threads` workers (default: rayon's choice, all cores).
fn with_threads(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<(), String> + Send,
) -> Result<(), String> {
    match threads {
        None => f(),
        Some(0) => Err("--threads must be at least 1".to_string()),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?
            .install(f),
    }
}

fn parse_position(fen: &str) -> Result<Position, String> {
    fen.parse::<Position>()
        .map_err(|e| format!("bad FEN '{fen}': {e}"))
}
