//! `antitb verify`: headers and checksums, self-consistency of every stored position, known
//! results from a CSV, and (feature `syzygy`) a comparison with Syzygy antichess tables.
//!
//! Findings go to standard output, one line each, then a summary line; progress goes to
//! standard error (a line rewritten in place on a terminal, one line per table otherwise).
//! Any disagreement or error makes the command fail.

use super::select::{self, duration};
use antitb::probe::Tablebase;
use antitb::table::{MAX_PIECES, Material};
use antitb::verify::{
    Report, TableReport, VerifyEvent, VerifyOptions, check_known, read_known, tables_in,
    verify_tables,
};
use clap::Args;
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const NO_SYZYGY: &str = "--syzygy needs a build with the cargo feature `syzygy` (cargo build --release --features syzygy)";

#[derive(Args)]
pub struct VerifyArgs {
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
    /// Hold each checked table one byte a slot per metric, its .wdl file read section by
    /// section, instead of 3 bytes (5 with DTW): the default for tables that would need more
    /// than 4 GiB
    #[arg(long)]
    compact: bool,
    /// Save the check of each table held compact in this directory as it goes (its values once
    /// built, then each section checked), and resume a check saved there; the files are removed
    /// once the table is checked
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// With --syzygy: compare one slot in N (Syzygy probes are slow: ≈5·10⁹ positions up to 4 pieces)
    #[arg(long, default_value_t = 1, requires = "syzygy")]
    sample: u64,
    /// Worker threads (default: all cores)
    #[arg(long)]
    threads: Option<usize>,
    /// No progress display
    #[arg(long, short)]
    quiet: bool,
}

/// Progress on standard error.
struct Progress {
    quiet: bool,
    terminal: bool,
    state: Mutex<ProgressState>,
    start: Instant,
}

struct ProgressState {
    total: usize,
    last_draw: Instant,
    /// Positions in finished tables.
    positions: u64,
    label: &'static str,
}

impl Progress {
    fn new(quiet: bool, label: &'static str) -> Progress {
        let now = Instant::now();
        Progress {
            quiet,
            terminal: std::io::stderr().is_terminal(),
            state: Mutex::new(ProgressState {
                total: 0,
                last_draw: now,
                positions: 0,
                label,
            }),
            start: now,
        }
    }

    fn event(&self, ev: &VerifyEvent) {
        if self.quiet {
            return;
        }
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = self.start.elapsed();
        match ev {
            VerifyEvent::Plan { tables } => s.total = tables.len(),
            VerifyEvent::Progress {
                i,
                material,
                done,
                total,
            } if s.last_draw.elapsed()
                >= Duration::from_millis(if self.terminal {
                    200
                } else {
                    // A log: a line a minute.
                    60_000
                }) =>
            {
                s.last_draw = Instant::now();
                let pct = 100.0 * *done as f64 / (*total).max(1) as f64;
                eprint!(
                    "{}{} [{}/{}] {material} {pct:3.0}% | {} positions done | {}{}",
                    if self.terminal { "\r\x1b[K" } else { "" },
                    s.label,
                    i + 1,
                    s.total,
                    s.positions,
                    duration(elapsed),
                    if self.terminal { "" } else { "\n" }
                );
                let _ = std::io::stderr().flush();
            }
            VerifyEvent::Resumed {
                i,
                material,
                values,
                slots,
                positions,
            } => {
                eprintln!(
                    "{}{} [{}/{}] {material}: resumed from the checkpoint: {}{slots} slots \
                     ({positions} positions) already checked",
                    if self.terminal { "\r\x1b[K" } else { "" },
                    s.label,
                    i + 1,
                    s.total,
                    if *values { "values loaded, " } else { "" },
                );
            }
            VerifyEvent::Done { i, report } => {
                s.positions += report.positions;
                if !self.terminal || !report.is_ok() {
                    let status = if report.is_ok() { "ok" } else { "FAILED" };
                    eprintln!(
                        "{}{} [{}/{}] {}: {} positions, {:.2} s, {status}",
                        if self.terminal { "\r\x1b[K" } else { "" },
                        s.label,
                        i + 1,
                        s.total,
                        report.material,
                        report.positions,
                        report.time.as_secs_f64()
                    );
                }
            }
            VerifyEvent::Compared {
                i,
                material,
                positions,
                ok,
            } => {
                s.positions += positions;
                if !self.terminal || !ok {
                    eprintln!(
                        "{}{} [{}/{}] {material}: {positions} positions, {}",
                        if self.terminal { "\r\x1b[K" } else { "" },
                        s.label,
                        i + 1,
                        s.total,
                        if *ok { "ok" } else { "FAILED" }
                    );
                }
            }
            _ => {}
        }
    }

    fn finish(&self) {
        if !self.quiet && self.terminal {
            eprint!("\r\x1b[K");
        }
    }
}

fn rate(n: u64, d: Duration) -> String {
    let r = n as f64 / d.as_secs_f64().max(1e-9);
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else {
        format!("{:.0}", r)
    }
}

fn selection(args: &VerifyArgs) -> Result<(Vec<Material>, bool), String> {
    let mut out = select::tables(&args.materials, args.max_pieces, "verify", MAX_PIECES)?;
    let explicit = !out.is_empty();
    if !explicit && (args.known.is_none() || args.syzygy.is_some()) {
        out = tables_in(&args.tables).map_err(|e| e.to_string())?;
        if out.is_empty() {
            let dirs: Vec<String> = args
                .tables
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            return Err(format!("no table files in {}", dirs.join(", ")));
        }
    }
    Ok((out, explicit))
}

fn table_json(r: &TableReport) -> serde_json::Value {
    json!({
        "material": r.material.to_string(),
        "positions": r.positions,
        "disagreements": r.disagreements,
        "seconds": r.time.as_secs_f64(),
    })
}

pub fn run(args: VerifyArgs) -> Result<(), String> {
    super::with_threads(args.threads, || verify(&args))
}

fn verify(args: &VerifyArgs) -> Result<(), String> {
    // Bad input fails before any long check starts.
    if args.syzygy.is_some() && !cfg!(feature = "syzygy") {
        return Err(NO_SYZYGY.to_string());
    }
    if args.sample == 0 {
        return Err("--sample must be at least 1".to_string());
    }
    if let Some(dir) = &args.syzygy
        && !dir.is_dir()
    {
        return Err(format!("Syzygy directory {} does not exist", dir.display()));
    }
    let known = match &args.known {
        Some(path) => Some((path, read_known(path).map_err(|e| e.to_string())?)),
        None => None,
    };
    let (tables, explicit) = selection(args)?;
    // The position-by-position check runs unless --fast, and unless only --known/--syzygy were
    // asked for (naming tables asks for it again).
    let consistency = !args.fast && (explicit || (args.known.is_none() && args.syzygy.is_none()));
    let opts = VerifyOptions {
        fast: !consistency,
        max_reports: args.max_reports,
        compact_above: if args.compact {
            0
        } else {
            VerifyOptions::default().compact_above
        },
        checkpoint: args.checkpoint.clone(),
        ..VerifyOptions::default()
    };
    let mut failures = Vec::new();
    let mut json_out = serde_json::Map::new();

    // Files: headers, checksums, and self-consistency.
    if !tables.is_empty() {
        let progress = Progress::new(args.quiet, "verify");
        let report = verify_tables(&args.tables, &tables, &opts, &|ev| progress.event(ev))
            .map_err(|e| e.to_string())?;
        progress.finish();
        print_report(&report, consistency, args, &mut json_out);
        if report.disagreements() > 0 {
            failures.push(format!("{} disagreements", report.disagreements()));
        }
        if report.errors() > 0 {
            failures.push(format!("{} table errors", report.errors()));
        }
    }

    if let Some(dir) = &args.syzygy {
        syzygy(args, dir, &tables, &mut failures, &mut json_out)?;
    }

    if let Some((path, rows)) = known {
        let tb = Tablebase::open(&args.tables).map_err(|e| e.to_string())?;
        let k = check_known(&tb, &rows);
        if args.json {
            json_out.insert(
                "known".into(),
                json!({
                    "file": path.display().to_string(),
                    "rows": k.rows,
                    "mismatches": k.mismatches.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
                    "errors": k.errors.iter().map(|e| format!("line {}: {e}", e.line)).collect::<Vec<_>>(),
                }),
            );
        } else {
            for m in &k.mismatches {
                println!("known mismatch: {}: {m}", path.display());
            }
            for e in &k.errors {
                println!("known error: {}:{}: {e}", path.display(), e.line);
            }
            println!(
                "known: {} rows from {}, {} mismatches, {} errors: {}",
                k.rows,
                path.display(),
                k.mismatches.len(),
                k.errors.len(),
                if k.is_ok() { "OK" } else { "FAILED" }
            );
        }
        if !k.mismatches.is_empty() {
            failures.push(format!("{} known-result mismatches", k.mismatches.len()));
        }
        if !k.errors.is_empty() {
            failures.push(format!("{} known-result rows not probed", k.errors.len()));
        }
    }

    if args.json {
        json_out.insert("ok".into(), json!(failures.is_empty()));
        println!("{}", serde_json::Value::Object(json_out));
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("verification failed: {}", failures.join(", ")))
    }
}

fn print_report(
    report: &Report,
    consistency: bool,
    args: &VerifyArgs,
    json_out: &mut serde_json::Map<String, serde_json::Value>,
) {
    let positions = report.positions();
    // The rate counts only the positions this run checked (a resumed check counts the others).
    let checked_now = positions - report.resumed();
    if args.json {
        json_out.insert(
            "tables".into(),
            json!({
                "tables": report.tables.len(),
                "files": report.files(),
                "consistency": consistency,
                "positions": positions,
                "resumed_positions": report.resumed(),
                "seconds": report.time.as_secs_f64(),
                "positions_per_second": checked_now as f64 / report.time.as_secs_f64().max(1e-9),
                "disagreement_count": report.disagreements(),
                "disagreements": report.tables.iter().flat_map(|t| t.shown.iter()).map(|d| json!({
                    "material": d.material.to_string(),
                    "fen": d.position.to_string(),
                    "check": d.check.to_string(),
                    "stored": d.stored.to_string(),
                    "derived": d.derived.to_string(),
                })).collect::<Vec<_>>(),
                "errors": report.tables.iter().flat_map(|t| t.errors.iter()).map(|e| e.to_string()).collect::<Vec<_>>(),
                "per_table": report.tables.iter().map(table_json).collect::<Vec<_>>(),
            }),
        );
        return;
    }
    for t in &report.tables {
        for e in &t.errors {
            println!("error: {}: {e}", t.material);
        }
        for d in &t.shown {
            println!("disagreement: {d}");
        }
        if (t.shown.len() as u64) < t.disagreements {
            println!(
                "disagreement: {}: … and {} more not shown (--max-reports 0 shows all)",
                t.material,
                t.disagreements - t.shown.len() as u64
            );
        }
    }
    let what = if consistency {
        "headers, checksums and every stored position"
    } else {
        "headers and checksums"
    };
    println!(
        "verify: {} tables, {} files ({what}): {} positions checked{} in {} ({} positions/s), {} disagreements, {} errors: {}",
        report.tables.len(),
        report.files(),
        positions,
        match report.resumed() {
            0 => String::new(),
            n => format!(" ({n} by earlier runs)"),
        },
        duration(report.time),
        rate(checked_now, report.time),
        report.disagreements(),
        report.errors(),
        if report.is_ok() { "OK" } else { "FAILED" }
    );
}

#[cfg(feature = "syzygy")]
fn syzygy(
    args: &VerifyArgs,
    dir: &std::path::Path,
    tables: &[Material],
    failures: &mut Vec<String>,
    json_out: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    use antitb::verify::syzygy::{DtzClass, SyzygyOptions, compare_syzygy};
    let progress = Progress::new(args.quiet, "syzygy");
    let opts = SyzygyOptions {
        sample: args.sample,
        ..SyzygyOptions::default()
    };
    let report = compare_syzygy(&args.tables, dir, tables, &opts, &|ev| progress.event(ev))
        .map_err(|e| e.to_string())?;
    progress.finish();
    let classes = report.classes();
    if args.json {
        let mut c = serde_json::Map::new();
        for k in DtzClass::ALL {
            c.insert(k.to_string(), json!(classes[k as usize]));
        }
        json_out.insert(
            "syzygy".into(),
            json!({
                "dir": dir.display().to_string(),
                "sample": args.sample,
                "tables": report.tables.len(),
                "positions": report.positions(),
                "seconds": report.time.as_secs_f64(),
                "wdl_mismatches": report.wdl_mismatches(),
                "dtz_classes": c,
                "examples": report.tables.iter().flat_map(|t| t.examples.iter().map(move |e| format!("{} {e}", t.material))).collect::<Vec<_>>(),
                "errors": report.tables.iter().filter_map(|t| t.error.as_ref().map(|e| format!("{}: {e}", t.material))).collect::<Vec<_>>(),
            }),
        );
    } else {
        let mut shown = std::collections::HashMap::new();
        for t in &report.tables {
            if let Some(e) = &t.error {
                println!("syzygy error: {}: {e}", t.material);
            }
            for e in &t.examples {
                // Every mismatch example and single-valued group is printed; a few examples of
                // each accepted class.
                let class = e.split(':').next().unwrap_or_default().to_string();
                let n = shown.entry(class.clone()).or_insert(0);
                *n += 1;
                let always = ["mismatch", "wdl mismatch", "single-valued group"];
                if always.contains(&class.as_str()) || *n <= 3 {
                    println!("syzygy {}: {e}", t.material);
                }
            }
        }
        let list: Vec<String> = DtzClass::ALL
            .iter()
            .map(|&k| format!("{k} {}", classes[k as usize]))
            .collect();
        println!(
            "syzygy: {} tables, {} positions{} compared with {} in {} ({} positions/s): wdl mismatches {}; dtz {}: {}",
            report.tables.len(),
            report.positions(),
            if args.sample > 1 {
                format!(" (one slot in {})", args.sample)
            } else {
                String::new()
            },
            dir.display(),
            duration(report.time),
            rate(report.positions(), report.time),
            report.wdl_mismatches(),
            list.join(", "),
            if report.is_ok() { "OK" } else { "FAILED" }
        );
    }
    let errors = report.tables.iter().filter(|t| t.error.is_some()).count();
    if report.wdl_mismatches() > 0 {
        failures.push(format!(
            "{} WDL mismatches with Syzygy",
            report.wdl_mismatches()
        ));
    }
    if classes[DtzClass::Mismatch as usize] > 0 {
        failures.push(format!(
            "{} DTZ mismatches with Syzygy",
            classes[DtzClass::Mismatch as usize]
        ));
    }
    if errors > 0 {
        failures.push(format!("{errors} tables not compared with Syzygy"));
    }
    Ok(())
}

#[cfg(not(feature = "syzygy"))]
fn syzygy(
    _: &VerifyArgs,
    _: &std::path::Path,
    _: &[Material],
    _: &mut Vec<String>,
    _: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    Err(NO_SYZYGY.to_string())
}
