//! Subcommands. Each returns `Result<(), String>`; `run` prints the error on one line and exits 2.

mod checksums;
mod generate;
mod plan;
mod probe;
mod prove;
mod stats;
mod verify;

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

/// A kind of table file, for `--metrics`.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum MetricArg {
    Wdl,
    Dtz,
    Dtw,
}

/// Whether `--metrics` asks for DTW; WDL and DTZ are always built (DTW is built from them).
fn with_dtw(metrics: &[MetricArg]) -> Result<bool, String> {
    if !metrics.contains(&MetricArg::Wdl) || !metrics.contains(&MetricArg::Dtz) {
        return Err(
            "--metrics must include wdl and dtz (every table has them; dtw is optional)".into(),
        );
    }
    Ok(metrics.contains(&MetricArg::Dtw))
}

#[derive(Copy, Clone, ValueEnum)]
enum PlanFormat {
    Make,
    Json,
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
        /// Files to build per table (comma-separated): wdl and dtz always, dtw (depth to win) unless left out
        #[arg(long, value_delimiter = ',', default_value = "wdl,dtz,dtw")]
        metrics: Vec<MetricArg>,
        /// Print nothing but errors
        #[arg(long, short)]
        quiet: bool,
        /// Refuse tables whose estimated peak memory exceeds this (e.g. 8G; default: physical memory)
        #[arg(long)]
        memory_limit: Option<String>,
        /// Skip the free-disk check (its estimate of the files is an upper bound)
        #[arg(long)]
        no_disk_check: bool,
        /// Checksum list to compare the files with at the end (default: TABLES/CHECKSUMS if it exists)
        #[arg(long)]
        checksums: Option<PathBuf>,
        /// Do not compare with a checksum list
        #[arg(long, conflicts_with = "checksums")]
        no_checksums: bool,
    },
    /// Statistics of a stored table: WDL counts, DTZ/DTW histograms, longest wins (never generates).
    Stats {
        /// Material such as KQvR
        material: String,
        /// Table directory
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// More directories with the smaller tables (for --resolve-captures)
        #[arg(long = "with-tables")]
        with_tables: Vec<PathBuf>,
        /// Print one JSON object
        #[arg(long)]
        json: bool,
        /// Also value the (unstored) capture positions by a capture search into smaller tables
        #[arg(long)]
        resolve_captures: bool,
    },
    /// The dependency graph of a build with memory/disk/time estimates, as a Makefile or JSON.
    Plan {
        /// Materials such as KQvR (default: all tables up to --max-pieces, or up to 4 pieces)
        materials: Vec<String>,
        /// Every table with at most this many pieces
        #[arg(long)]
        max_pieces: Option<usize>,
        /// Files to plan per table (comma-separated): wdl and dtz always, dtw unless left out
        #[arg(long, value_delimiter = ',', default_value = "wdl,dtz,dtw")]
        metrics: Vec<MetricArg>,
        /// Output format
        #[arg(long, value_enum, default_value = "json")]
        format: PlanFormat,
    },
    /// SHA-256 of every table file (sha256sum format), or a comparison with a published list.
    Checksums {
        /// Table directory
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Compare with this list (e.g. tables/CHECKSUMS) instead of printing
        #[arg(long)]
        against: Option<PathBuf>,
        /// With --against: fail when a listed file is missing too
        #[arg(long, requires = "against")]
        all: bool,
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
    /// Check stored tables: headers, checksums, every stored position against its successors;
    /// known results (--known); Syzygy tables (--syzygy, needs the `syzygy` build feature).
    Verify {
        /// Tables to check, such as KQvR (default: --max-pieces, or every table found)
        materials: Vec<String>,
        /// Check every table with at most this many pieces
        #[arg(long)]
        max_pieces: Option<usize>,
        /// Table directory (repeatable)
        #[arg(long, default_value = "tables")]
        tables: Vec<PathBuf>,
        /// Headers and checksums only, no position-by-position check
        #[arg(long)]
        fast: bool,
        /// CSV of known results (fen,wdl,dtz[,dtw]); alone, only its rows are checked
        #[arg(long)]
        known: Option<PathBuf>,
        /// Compare every position with the Syzygy antichess tables in this directory; alone, with
        /// headers and checksums but without the position-by-position check
        #[arg(long)]
        syzygy: Option<PathBuf>,
        /// Print one JSON object at the end
        #[arg(long)]
        json: bool,
        /// Disagreements listed per table (all are counted); 0 lists all
        #[arg(long, default_value_t = 1000)]
        max_reports: usize,
        /// With --syzygy: compare one slot in N (Syzygy probes are slow: ≈5·10⁹ positions up to 4 pieces)
        #[arg(long, default_value_t = 1, requires = "syzygy")]
        sample: u64,
        /// Worker threads (default: all cores)
        #[arg(long)]
        threads: Option<usize>,
        /// No progress display
        #[arg(long, short)]
        quiet: bool,
    },
    /// Prove a win by proof-number search down to finished games and table positions:
    /// answers win, loss, not a win or unknown.
    Prove {
        /// Position in FEN (default: the start position, with --moves)
        fen: Option<String>,
        /// Moves played first, UCI or SAN ("e2e3 b7b5 f1b5")
        #[arg(long)]
        moves: Option<String>,
        /// Table directory (repeatable; default: ./tables if it exists)
        #[arg(long)]
        tables: Vec<PathBuf>,
        /// Stop after this many expanded nodes
        #[arg(long)]
        max_nodes: Option<u64>,
        /// Stop after this many seconds
        #[arg(long)]
        time: Option<f64>,
        /// Transposition table size in MB
        #[arg(long, default_value_t = 256)]
        memory: u64,
        /// Write the proof (win or loss) to this file
        #[arg(long)]
        proof: Option<PathBuf>,
        /// No progress output
        #[arg(long, short)]
        quiet: bool,
    },
    /// Check a proof file written by `prove --proof` with the rules and the tables only.
    CheckProof {
        /// The proof file
        file: PathBuf,
        /// Table directory for table leaves (repeatable; default: ./tables if it exists)
        #[arg(long)]
        tables: Vec<PathBuf>,
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
        Command::Prove {
            fen,
            moves,
            tables,
            max_nodes,
            time,
            memory,
            proof,
            quiet,
        } => prove::run_prove(prove::ProveArgs {
            fen,
            moves,
            tables,
            max_nodes,
            time,
            memory_mb: memory,
            proof,
            quiet,
        }),
        Command::CheckProof { file, tables } => prove::run_check(&file, &tables),
        Command::Generate {
            materials,
            max_pieces,
            tables,
            with_tables,
            threads,
            metrics,
            quiet,
            memory_limit,
            no_disk_check,
            checksums,
            no_checksums,
        } => with_dtw(&metrics).and_then(|dtw| {
            with_threads(threads, || {
                generate::run(generate::GenerateArgs {
                    materials,
                    max_pieces,
                    tables,
                    extra: with_tables,
                    dtw,
                    quiet,
                    memory_limit,
                    no_disk_check,
                    checksums,
                    no_checksums,
                })
            })
        }),
        Command::Stats {
            material,
            tables,
            with_tables,
            json,
            resolve_captures,
        } => stats::run(stats::StatsArgs {
            material,
            tables,
            extra: with_tables,
            json,
            resolve_captures,
        }),
        Command::Plan {
            materials,
            max_pieces,
            metrics,
            format,
        } => plan::run(plan::PlanArgs {
            materials,
            max_pieces,
            dtw: match with_dtw(&metrics) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("antitb: error: {e}");
                    return 2;
                }
            },
            make: matches!(format, PlanFormat::Make),
        }),
        Command::Checksums {
            tables,
            against,
            all,
        } => checksums::run(checksums::ChecksumsArgs {
            tables,
            against,
            all,
        }),
        Command::Probe {
            fens,
            tables,
            json,
            line,
            by,
        } => {
            let by = match by {
                By::Dtz => RankBy::Dtz,
                By::Dtw => RankBy::Dtw,
            };
            probe::run(probe::ProbeArgs {
                fens,
                tables,
                json,
                line,
                by,
            })
        }
        Command::Verify {
            materials,
            max_pieces,
            tables,
            fast,
            known,
            syzygy,
            json,
            max_reports,
            sample,
            threads,
            quiet,
        } => with_threads(threads, || {
            verify::run(verify::VerifyArgs {
                tables,
                materials,
                max_pieces,
                fast,
                known,
                syzygy,
                json,
                max_reports,
                sample,
                quiet,
            })
        }),
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
