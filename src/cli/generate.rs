//! `antitb generate`: build tables into a directory.

use antitb::build::{BuildEvent, BuildOptions, build};
use antitb::format::WriteOptions;
use antitb::material::Material;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

pub struct GenerateArgs {
    pub materials: Vec<String>,
    pub max_pieces: Option<usize>,
    pub tables: PathBuf,
    pub extra: Vec<PathBuf>,
    pub dtw: bool,
    pub quiet: bool,
}

/// The most pieces `generate` accepts (5-piece tables need up to a few GB of memory).
pub const MAX_GENERATE_PIECES: usize = 5;

pub fn run(args: GenerateArgs) -> Result<(), String> {
    let mut targets = Vec::new();
    for name in &args.materials {
        let m = Material::parse(name).map_err(|e| e.to_string())?;
        if m.count() > MAX_GENERATE_PIECES {
            return Err(format!("material {name} has {} pieces; generate supports at most {MAX_GENERATE_PIECES}", m.count()));
        }
        targets.push(m.canonical());
    }
    if let Some(n) = args.max_pieces {
        if !(2..=MAX_GENERATE_PIECES).contains(&n) {
            return Err(format!("--max-pieces must be between 2 and {MAX_GENERATE_PIECES}"));
        }
        targets.extend((2..=n).flat_map(Material::all_with_pieces));
    }
    if targets.is_empty() {
        targets.extend((2..=4).flat_map(Material::all_with_pieces));
    }
    let opts = BuildOptions { dir: args.tables.clone(), extra_dirs: args.extra, dtw: args.dtw, write: WriteOptions::default() };
    let quiet = args.quiet;
    let total = Mutex::new(0usize);
    let start = Instant::now();
    let report = build(&targets, &opts, &|ev| {
        if quiet {
            return;
        }
        match ev {
            BuildEvent::Plan { to_build, present } => {
                *total.lock().expect("lock") = to_build.len();
                eprintln!("{} tables to build, {} already present in {}", to_build.len(), present.len(), opts.dir.display());
            }
            BuildEvent::Done { i, material, time, bytes } => {
                let n = *total.lock().expect("lock");
                eprintln!(
                    "[{}/{n}] {material}: {:.2} s, {} bytes (elapsed {:.0} s)",
                    i + 1,
                    time.as_secs_f64(),
                    bytes,
                    start.elapsed().as_secs_f64()
                );
            }
            _ => {}
        }
    })
    .map_err(|e| e.to_string())?;
    if !quiet {
        println!(
            "built {} tables, {} already present, {} bytes written, {:.1} s",
            report.built.len(),
            report.skipped.len(),
            report.bytes_written,
            report.time.as_secs_f64()
        );
    }
    Ok(())
}
