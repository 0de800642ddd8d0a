//! `antitb perft`: count the leaf nodes of the legal move tree (a move generator check).

use super::parse_position;
use antitb::rules::perft;
use clap::Args;

// (The subcommand's help is the doc comment of its variant in `mod.rs`.)
#[derive(Args)]
pub struct PerftArgs {
    /// Position in FEN (castling must be '-')
    fen: String,
    /// Depth in plies
    depth: u32,
    /// Print the count below each legal move
    #[arg(long)]
    divide: bool,
}

pub fn run(args: PerftArgs) -> Result<(), String> {
    let pos = parse_position(&args.fen)?;
    let depth = args.depth;
    let start = std::time::Instant::now();
    let total = if args.divide && depth > 0 {
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
