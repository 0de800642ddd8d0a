//! `antitb plan`: the dependency graph of a request, with estimates, as a Makefile, JSON, or a
//! Slurm submission script.

use super::generate::MAX_GENERATE_PIECES;
use super::select;
use antitb::build::plan::plan;
use antitb::build::slurm::{SlurmOptions, present_tables, slurm_plan};
use antitb::table::{MAX_PIECES, Metric};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Copy, Clone, ValueEnum)]
enum PlanFormat {
    Make,
    Json,
    /// A bash script submitting the tables not yet present as Slurm jobs
    Slurm,
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
    #[command(flatten)]
    slurm: SlurmArgs,
}

/// Options of `--format slurm`.
#[derive(Args)]
struct SlurmArgs {
    /// With --format slurm: the table directory of the jobs, on a file system the nodes share
    /// (tables present there are not submitted)
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// With --format slurm: more directories the jobs read tables from (repeatable)
    #[arg(long = "with-tables")]
    with_tables: Vec<PathBuf>,
    /// With --format slurm: threads per job (--cpus-per-task)
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// With --format slurm: --mem is the memory estimate times this, rounded up to a class
    #[arg(long, default_value_t = 1.25)]
    mem_margin: f64,
    /// With --format slurm: --time is the time estimate (over the threads) times this, rounded up
    #[arg(long, default_value_t = 3.0)]
    time_margin: f64,
    /// With --format slurm: most tasks per job array (Slurm's MaxArraySize)
    #[arg(long, default_value_t = 1001)]
    max_array_size: usize,
    /// With --format slurm: the antitb binary the jobs run (default: this one)
    #[arg(long)]
    antitb: Option<PathBuf>,
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
        PlanFormat::Slurm => {
            let opts = slurm_options(args.slurm)?;
            let present = present_tables(&p, &opts);
            let too_large = p
                .jobs
                .iter()
                .filter(|j| !present.contains(&j.material))
                .filter(|j| j.material.count() > MAX_GENERATE_PIECES)
                .count();
            let s = slurm_plan(&p, &present, opts);
            print!("{}", s.to_script());
            for l in s.summary() {
                eprintln!("antitb plan: {l}");
            }
            if too_large > 0 {
                eprintln!(
                    "antitb plan: warning: {too_large} tables have more than {MAX_GENERATE_PIECES} pieces, which generate does not build yet: their jobs will fail"
                );
            }
        }
    }
    Ok(())
}

/// Absolute paths (jobs may start in another directory) and checked numbers.
fn slurm_options(s: SlurmArgs) -> Result<SlurmOptions, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let antitb = match s.antitb {
        Some(p) => cwd.join(p),
        None => std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?,
    };
    if s.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if !(s.mem_margin >= 1.0 && s.time_margin >= 1.0) {
        return Err("--mem-margin and --time-margin must be at least 1".into());
    }
    if s.max_array_size == 0 {
        return Err("--max-array-size must be at least 1 (1 submits no arrays)".into());
    }
    Ok(SlurmOptions {
        antitb,
        tables: cwd.join(s.tables),
        with_tables: s.with_tables.into_iter().map(|w| cwd.join(w)).collect(),
        threads: s.threads,
        mem_margin: s.mem_margin,
        time_margin: s.time_margin,
        max_array_size: s.max_array_size,
    })
}
