//! Subcommands. Each returns `Result<(), String>`; `run` prints the error on one line and exits 2.

use antitb::rules::{Position, perft};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "antitb", version, about = "Antichess endgame tablebases: generate, probe, verify, prove")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    };
    match result {
        Ok(()) => 0,
        Err(msg) => {
            eprintln!("antitb: error: {msg}");
            2
        }
    }
}

fn parse_position(fen: &str) -> Result<Position, String> {
    fen.parse::<Position>().map_err(|e| format!("bad FEN '{fen}': {e}"))
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
    eprintln!("time {:.3}s, {:.0} nodes/s", secs, total as f64 / secs.max(1e-9));
    Ok(())
}
