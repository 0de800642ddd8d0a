//! Subcommands. Each returns `Result<(), String>`; `run` prints the error on one line and exits 2.

mod generate;
mod probe;

use antitb::probe::RankBy;
use antitb::rules::{Position, perft};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

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

#[derive(Copy, Clone, ValueEnum)]
enum By {
    Dtz,
    Dtw,
}

#[derive(Subcommand)]
enum Command {
    /// Build tables (default: every table up to 4 pieces) and everything they need.
    Generate {
        /// Materials such as KQvR (default: all tables up to --max-pieces, or up to 4 pieces)
        materials: Vec<String>,
        /// Build every table with at most this many pieces
        #[arg(long)]
        max_pieces: Option<usize>,
        /// Directory to write tables to
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// More directories holding already built tables (read only)
        #[arg(long = "with-tables")]
        with_tables: Vec<PathBuf>,
        /// Worker threads (default: all cores)
        #[arg(long)]
        threads: Option<usize>,
        /// Also build DTW files
        #[arg(long)]
        dtw: bool,
        /// Print nothing but errors
        #[arg(long, short)]
        quiet: bool,
    },
    /// Probe positions: who wins, WDL, DTZ, DTW, and every legal move ranked.
    Probe {
        /// Positions in FEN; '-' reads one FEN per line from standard input
        #[arg(required = true)]
        fens: Vec<String>,
        /// Table directory (repeatable)
        #[arg(long, default_value = "tables")]
        tables: Vec<PathBuf>,
        /// One JSON object per position
        #[arg(long)]
        json: bool,
        /// Print an optimal line to the end of the game
        #[arg(long)]
        line: bool,
        /// Rank moves by DTZ (default) or DTW
        #[arg(long, value_enum, default_value = "dtz")]
        by: By,
    },
    /// Count the leaf nodes of the legal move tree (move generator check).
    Perft {
        /// Position in FEN (castling must be '-')
        fen: String,
        /// Depth in plies
        depth: u32,
        /// Print the count below each legal move
        #[arg(long)]
        divide: bool,
    },
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
        Command::Perft { fen, depth, divide } => cmd_perft(&fen, depth, divide),
        Command::Generate { materials, max_pieces, tables, with_tables, threads, dtw, quiet } => {
            with_threads(threads, || {
                generate::run(generate::GenerateArgs { materials, max_pieces, tables, extra: with_tables, dtw, quiet })
            })
        }
        Command::Probe { fens, tables, json, line, by } => {
            let by = match by {
                By::Dtz => RankBy::Dtz,
                By::Dtw => RankBy::Dtw,
            };
            probe::run(probe::ProbeArgs { fens, tables, json, line, by })
        }
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
fn with_threads(threads: Option<usize>, f: impl FnOnce() -> Result<(), String> + Send) -> Result<(), String> {
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

fn cmd_perft(fen: &str, depth: u32, divide: bool) -> Result<(), String> {
    let pos = parse_position(fen)?;
    let start = std::time::Instant::now();
    let total = if divide && depth > 0 {
        let mut total = 0;
        for m in pos.legal_moves().iter() {
            let n = perft(&pos.after(m), depth - 1);
            println!("{} {n}", m.uci());
            total += n;
        }
        total
    } else {
        perft(&pos, depth)
    };
    let secs = start.elapsed().as_secs_f64();
    println!("nodes {total}");
    eprintln!(
        "time {:.3}s, {:.0} nodes/s",
        secs,
        total as f64 / secs.max(1e-9)
    );
    Ok(())
}
