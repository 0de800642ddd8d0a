//! `antitb plan`: the dependency graph of a request, with estimates, as a Makefile or JSON.

use super::select;
use antitb::build::plan::plan;
use antitb::table::{MAX_PIECES, Metric};
use clap::{Args, ValueEnum};

#[derive(Copy, Clone, ValueEnum)]
enum PlanFormat {
    Make,
    Json,
}

#[derive(Args)]
pub struct PlanArgs {
    /// Materials such as KQvR (default: all tables up to --max-pieces, or up to 4 pieces)
    materials: Vec<String>,
    /// Every table with at most this many pieces
    #[arg(long)]
    max_pieces: Option<usize>,
    /// Files to plan per table (comma-separated): wdl and dtz always, dtw unless left out
    #[arg(long, value_delimiter = ',', default_value = "wdl,dtz,dtw", value_parser = select::metric_parser())]
    metrics: Vec<Metric>,
    /// Output format
    #[arg(long, value_enum, default_value = "json")]
    format: PlanFormat,
}

pub fn run(args: PlanArgs) -> Result<(), String> {
    let dtw = select::with_dtw(&args.metrics)?;
    // A plan may name any table a material name can (`generate` takes fewer pieces).
    let mut targets = select::tables(&args.materials, args.max_pieces, "plan", MAX_PIECES)?;
    if targets.is_empty() {
        targets = select::up_to(4);
    }
    let p = plan(&targets, dtw);
    match args.format {
        PlanFormat::Make => print!("{}", p.to_makefile()),
        PlanFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&p.to_json()).map_err(|e| e.to_string())?
        ),
    }
    Ok(())
}
