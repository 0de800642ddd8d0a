//! `antitb generate`: build tables into a directory, with a progress display a person can
//! follow (a bar on a terminal, one line per table otherwise), a one-screen summary, and a
//! comparison with the published checksums at the end.

use super::select::{self, duration};
use super::with_threads;
use antitb::build::checksums;
use antitb::build::{
    BuildError, BuildEvent, BuildOptions, BuildReport, Estimate, Measured, Resource, build,
    free_disk, human_bytes, physical_memory,
};
use antitb::store::{StoreOptions, file_name};
use antitb::table::{Material, Metric};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct GenerateArgs {
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
    /// Tables built at once, each as soon as the tables it reads are done and while the
    /// estimated memory of those running fits --memory-limit (default: one per thread; 1 with
    /// --report, so that each table's measured CPU time and peak memory are its own)
    #[arg(long)]
    jobs: Option<usize>,
    /// Files to build per table (comma-separated): wdl and dtz always, dtw (depth to win) unless left out
    #[arg(long, value_delimiter = ',', default_value = "wdl,dtz,dtw", value_parser = select::metric_parser())]
    metrics: Vec<Metric>,
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
    /// Build only the named tables; every table they read must be present in --tables or
    /// --with-tables and pass its checksums, else fail (one job of a cluster plan)
    #[arg(long)]
    no_deps: bool,
    /// Append one JSON line per table built to this file: measured wall and CPU time and peak
    /// memory beside their estimates, bytes written (for calibrating plans)
    #[arg(long)]
    report: Option<PathBuf>,
    /// Least seconds between checkpoints of a large table with pawns, from which a killed run
    /// resumes (after the last batch of pawn configurations checkpointed)
    #[arg(long, default_value_t = 60)]
    checkpoint_every: u64,
}

/// The most pieces `generate` accepts (6-piece tables need up to about 20 GB of memory; the
/// memory limit refuses what does not fit).
pub const MAX_GENERATE_PIECES: usize = 6;

/// Parse `8G`, `512M`, `1.5GiB`, `100000` (suffixes K, M, G, T are powers of 1024).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: u64 = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => {
            return Err(format!(
                "bad size '{s}': use a number with an optional K, M, G or T suffix"
            ));
        }
    };
    let v: f64 = num.parse().map_err(|_| {
        format!("bad size '{s}': use a number with an optional K, M, G or T suffix")
    })?;
    Ok((v * mult as f64) as u64)
}

/// The tables a run is about: the targets and their closure, or with `--no-deps` the targets.
fn scope(args: &GenerateArgs, targets: &[Material]) -> Vec<Material> {
    if args.no_deps {
        let mut t = targets.to_vec();
        t.sort();
        t.dedup();
        t
    } else {
        Material::closure(targets)
    }
}

fn rate(per_sec: f64) -> String {
    if per_sec >= 1e6 {
        format!("{:.1} M pos/s", per_sec / 1e6)
    } else {
        format!("{:.0} k pos/s", per_sec / 1e3)
    }
}

/// What the display knows about the run.
#[derive(Default)]
struct State {
    /// The estimates of the tables of the plan.
    estimates: Vec<Estimate>,
    /// Work (slot visits) of each table of the plan, and of all of them.
    work: Vec<u64>,
    /// `--report`'s file, and the first error writing it.
    report: Option<std::fs::File>,
    report_error: Option<std::io::Error>,
    total_work: u64,
    /// Work of the tables finished.
    done_work: u64,
    tables: usize,
    /// Tables finished.
    finished: usize,
    /// The tables being built (several with --jobs), in the order they started.
    current: Vec<Current>,
    start: Option<Instant>,
}

/// A table being built: its index in the plan, its phase and the fraction of its work done.
struct Current {
    i: usize,
    material: Material,
    phase: String,
    fraction: f64,
}

impl State {
    fn done_now(&self) -> u64 {
        let cur: u64 = self
            .current
            .iter()
            .map(|c| (self.work[c.i] as f64 * c.fraction.clamp(0.0, 1.0)) as u64)
            .sum();
        self.done_work + cur
    }

    /// The running table of `material`, if any.
    fn running(&mut self, material: Material) -> Option<&mut Current> {
        self.current.iter_mut().find(|c| c.material == material)
    }

    /// Positions per second and the time left, from the work done so far.
    fn speed_eta(&self) -> Option<(f64, Duration)> {
        let secs = self.start?.elapsed().as_secs_f64();
        let done = self.done_now();
        if done == 0 || secs < 0.5 {
            return None;
        }
        let per_sec = done as f64 / secs;
        Some((
            per_sec,
            Duration::from_secs_f64(self.total_work.saturating_sub(done) as f64 / per_sec),
        ))
    }

    /// First line: tables done, speed, time left.
    fn overall(&self) -> String {
        let mut s = format!("{}/{} tables", self.finished, self.tables);
        if let Some((per_sec, eta)) = self.speed_eta() {
            s.push_str(&format!(" · {} · ETA {}", rate(per_sec), duration(eta)));
        }
        s
    }

    /// Second line: the tables being built and their phases.
    fn current(&self) -> String {
        let tables: Vec<String> = self
            .current
            .iter()
            .map(|c| {
                format!(
                    "{} ({} pieces): {}",
                    c.material,
                    c.material.count(),
                    c.phase
                )
            })
            .collect();
        tables.join("; ")
    }
}

/// One `--report` line: a JSON object of one table's build, measured and estimated.
fn report_line(
    e: &Estimate,
    time: Duration,
    bytes: u64,
    measured: &Measured,
    threads: usize,
) -> String {
    serde_json::json!({
        "material": e.material.to_string(),
        "pieces": e.material.count(),
        "pawns": e.material.pawns(),
        "slots_per_side": e.slots,
        "work": e.work,
        "threads": threads,
        "wall_seconds": seconds_ms(time),
        "cpu_seconds": measured.cpu.map(seconds_ms),
        "estimated_cpu_seconds": (e.cpu_seconds() * 10.0).round() / 10.0,
        "peak_rss_bytes": measured.peak_rss,
        "estimated_memory_bytes": e.memory,
        "estimated_solver_bytes": e.solver,
        "estimated_writer_bytes": e.writer,
        "estimated_sources_bytes": e.sources,
        "phases": measured.phases.iter().map(|p| serde_json::json!({
            "metric": p.metric.extension(),
            "step": p.step.name(),
            "cpu_seconds": p.cpu.map(seconds_ms),
            "init_cpu_seconds": p.init_cpu.map(seconds_ms),
            "start_rss_bytes": p.start_rss,
            "peak_rss_bytes": p.peak_rss,
        })).collect::<Vec<_>>(),
        "bytes_written": bytes,
    })
    .to_string()
}

/// A duration in seconds, rounded to the millisecond.
fn seconds_ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

/// `, cpu 12 s (est. 10 s), peak 1.2 GiB (est. 1.3 GiB)` for a table's progress line.
fn against_estimate(e: &Estimate, m: &Measured) -> String {
    let mut s = String::new();
    if let Some(c) = m.cpu {
        s.push_str(&format!(
            ", cpu {:.1} s (est. {:.1} s)",
            c.as_secs_f64(),
            e.cpu_seconds()
        ));
    }
    if let Some(p) = m.peak_rss {
        s.push_str(&format!(
            ", peak {} (est. {})",
            human_bytes(p),
            human_bytes(e.memory)
        ));
    }
    s
}

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Wdl => "WDL",
        Metric::Dtz => "DTZ",
        Metric::Dtw => "DTW",
    }
}

pub fn run(args: GenerateArgs) -> Result<(), String> {
    let dtw = select::with_dtw(&args.metrics)?;
    with_threads(args.threads, || generate(&args, dtw))
}

/// The message of a build error; a table over the memory limit says how to get past it.
fn build_error(e: BuildError) -> String {
    match e {
        BuildError::TooLarge {
            resource: Resource::Memory,
            ..
        } => format!("{e}; raise --memory-limit or build it on a larger machine"),
        e => e.to_string(),
    }
}

fn generate(args: &GenerateArgs, dtw: bool) -> Result<(), String> {
    let mut targets = select::tables(
        &args.materials,
        args.max_pieces,
        "generate",
        MAX_GENERATE_PIECES,
    )?;
    if targets.is_empty() {
        targets = select::up_to(4);
    }
    let memory_limit = match &args.memory_limit {
        Some(s) => Some(parse_bytes(s).map_err(|e| format!("--memory-limit: {e}"))?),
        None => physical_memory(),
    };
    let opts = BuildOptions {
        dir: args.tables.clone(),
        extra_dirs: args.with_tables.clone(),
        dtw,
        write: StoreOptions::default(),
        memory_limit,
        check_disk: !args.no_disk_check,
        only_targets: args.no_deps,
        checkpoint_every: Duration::from_secs(args.checkpoint_every),
        jobs: match args.jobs {
            Some(0) => return Err("--jobs must be at least 1".to_string()),
            Some(n) => n,
            None if args.report.is_some() => 1,
            None => rayon::current_num_threads(),
        },
    };
    let quiet = args.quiet;
    let tty = std::io::stderr().is_terminal();
    let bar = if quiet || !tty {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr_with_hz(5));
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:24}] {percent:>3}% {prefix}\n  {wide_msg}",
            )
            .expect("progress template")
            .progress_chars("=> "),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    };
    let report_file = match &args.report {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| format!("--report {}: {e}", p.display()))?,
        ),
        None => None,
    };
    let threads = rayon::current_num_threads();
    let state = Mutex::new(State {
        start: Some(Instant::now()),
        report: report_file,
        ..State::default()
    });
    let lines = !quiet && !tty;
    let report = build(&targets, &opts, &|ev| {
        let mut st = state.lock().expect("progress state");
        if let BuildEvent::Plan { to_build, .. } = ev {
            st.estimates = to_build.clone();
        }
        if let BuildEvent::Done {
            i,
            time,
            bytes,
            measured,
            ..
        } = ev
        {
            let line = report_line(&st.estimates[*i], *time, *bytes, measured, threads);
            let st = &mut *st;
            if let Some(f) = st.report.as_mut()
                && let Err(e) = writeln!(f, "{line}").and_then(|()| f.flush())
            {
                st.report_error.get_or_insert(e);
            }
        }
        if quiet {
            return;
        }
        match ev {
            BuildEvent::Plan { to_build, present } => {
                st.work = to_build.iter().map(|e| e.work).collect();
                st.total_work = st.work.iter().sum();
                st.tables = to_build.len();
                st.start = Some(Instant::now());
                bar.set_length(st.total_work.max(1));
                let peak = to_build.iter().map(|e| e.memory).max().unwrap_or(0);
                // Present tables may lie in the --with-tables directories as well.
                let also = if opts.extra_dirs.is_empty() {
                    ""
                } else {
                    " or --with-tables"
                };
                let msg = format!(
                    "{} tables to build, {} already present in {}{also} (largest estimated peak memory {})",
                    to_build.len(),
                    present.len(),
                    opts.dir.display(),
                    human_bytes(peak)
                );
                if lines {
                    eprintln!("{msg}")
                } else {
                    bar.println(msg)
                }
            }
            BuildEvent::Start { i, material } => {
                st.current.push(Current {
                    i: *i,
                    material: *material,
                    phase: "starting".into(),
                    fraction: 0.0,
                });
            }
            BuildEvent::Solver(p) => {
                let phase = match p.phase {
                    "levels" if p.groups > 1 => {
                        format!(
                            "{} levels, pawn group {}/{}, ply {}",
                            metric_name(p.metric),
                            p.group + 1,
                            p.groups,
                            p.level
                        )
                    }
                    "levels" => format!("{} levels, ply {}", metric_name(p.metric), p.level),
                    "init" if p.groups > 1 => format!(
                        "{} init, pawn group {}/{}",
                        metric_name(p.metric),
                        p.group + 1,
                        p.groups
                    ),
                    "resumed" => {
                        let msg = format!(
                            "{}: {} resumed after pawn group {}/{} (a checkpoint of an earlier run)",
                            p.material,
                            metric_name(p.metric),
                            p.group,
                            p.groups
                        );
                        if lines {
                            eprintln!("{msg}");
                        } else {
                            bar.println(msg);
                        }
                        format!("{} resumed", metric_name(p.metric))
                    }
                    ph => format!("{} {ph}", metric_name(p.metric)),
                };
                // Captures take about a third of a table; the groups share the rest.
                let within = if p.phase == "captures" {
                    0.0
                } else {
                    0.3 + 0.6 * p.group as f64 / p.groups.max(1) as f64
                };
                let metrics = if dtw { 2.0 } else { 1.0 };
                let k = if dtw && p.metric == Metric::Dtw {
                    1.0
                } else {
                    0.0
                };
                if let Some(c) = st.running(p.material) {
                    c.phase = phase;
                    c.fraction = (k + within) / metrics;
                }
            }
            BuildEvent::Writing {
                material, metric, ..
            } => {
                if let Some(c) = st.running(*material) {
                    c.phase = format!("{} compressing and writing", metric_name(*metric));
                }
            }
            BuildEvent::Done {
                i,
                material,
                time,
                bytes,
                measured,
            } => {
                st.done_work += st.work[*i];
                st.finished += 1;
                st.current.retain(|c| c.i != *i);
                if lines {
                    let eta = st
                        .speed_eta()
                        .map(|(r, e)| format!(", {}, ETA {}", rate(r), duration(e)))
                        .unwrap_or_default();
                    eprintln!(
                        "[{}/{}] {material}: {}, {}{}{eta}",
                        st.finished,
                        st.tables,
                        duration(*time),
                        human_bytes(*bytes),
                        against_estimate(&st.estimates[*i], measured)
                    );
                }
            }
        }
        bar.set_position(st.done_now());
        bar.set_prefix(st.overall());
        bar.set_message(st.current());
    });
    bar.finish_and_clear();
    let report = report.map_err(build_error)?;
    if let (Some(p), Some(e)) = (
        &args.report,
        state.lock().expect("state").report_error.take(),
    ) {
        return Err(format!("--report {}: {e}", p.display()));
    }
    let check = compare_checksums(args, &targets, dtw)?;
    if !quiet {
        print_summary(args, &opts, &report, &targets, check.as_ref());
    }
    Ok(())
}

/// Compare the files of the requested tables with the checksum list, if there is one.
fn compare_checksums(
    args: &GenerateArgs,
    targets: &[Material],
    dtw: bool,
) -> Result<Option<(PathBuf, checksums::Comparison)>, String> {
    if args.no_checksums {
        return Ok(None);
    }
    let list_path = match &args.checksums {
        Some(p) => p.clone(),
        None => {
            let p = args.tables.join("CHECKSUMS");
            if !p.is_file() {
                return Ok(None);
            }
            p
        }
    };
    let list = checksums::parse_list(&list_path).map_err(|e| e.to_string())?;
    let kinds = antitb::build::metrics(dtw);
    let names: Vec<String> = scope(args, targets)
        .into_iter()
        .flat_map(|m| kinds.iter().map(move |&k| file_name(m, k)))
        .filter(|n| args.tables.join(n).is_file())
        .collect();
    let c = checksums::compare(&args.tables, Some(&names), &list).map_err(|e| e.to_string())?;
    if !c.ok() {
        return Err(format!(
            "{} of {} files differ from {}: {}{} (a corrupt file, or a generator whose output changed: \
             rebuild the file after deleting it, or regenerate the list with scripts/checksums.sh)",
            c.mismatched.len(),
            c.matched.len() + c.mismatched.len(),
            list_path.display(),
            c.mismatched
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            if c.mismatched.len() > 5 { ", …" } else { "" }
        ));
    }
    Ok(Some((list_path, c)))
}

fn print_summary(
    args: &GenerateArgs,
    opts: &BuildOptions,
    report: &BuildReport,
    targets: &[Material],
    check: Option<&(PathBuf, checksums::Comparison)>,
) {
    let all = scope(args, targets);
    let mut by_pieces = std::collections::BTreeMap::<usize, usize>::new();
    for m in &all {
        *by_pieces.entry(m.count()).or_default() += 1;
    }
    let counts: Vec<String> = by_pieces
        .iter()
        .map(|(p, n)| format!("{n} with {p} pieces"))
        .collect();
    println!("antitb generate: done in {}", duration(report.time));
    println!(
        "  tables     {} ({}): {} built, {} already present",
        all.len(),
        counts.join(", "),
        report.built.len(),
        report.skipped.len()
    );
    println!(
        "  written    {} for {} tables",
        human_bytes(report.bytes_written),
        report.built.len()
    );
    if let Some((m, mem)) = report.peak_estimate {
        println!(
            "  memory     largest estimated peak {} ({m})",
            human_bytes(mem)
        );
    }
    let kinds = antitb::build::metrics(opts.dtw);
    let total: u64 = all
        .iter()
        .flat_map(|&m| kinds.iter().map(move |&k| file_name(m, k)))
        .filter_map(|n| std::fs::metadata(opts.dir.join(n)).ok())
        .map(|md| md.len())
        .sum();
    let free = free_disk(&opts.dir)
        .map(human_bytes)
        .unwrap_or_else(|_| "unknown".into());
    println!(
        "  directory  {}: {} of tables, {free} free",
        display(&opts.dir),
        human_bytes(total)
    );
    if report.dtw_sides_read > 0 {
        println!(
            "  dtw sides  {} left-out sides of tables built in this run read from its side files, not searched",
            report.dtw_sides_read
        );
    }
    if report.stale_removed > 0 {
        println!(
            "  cleaned    {} temporary files left by an interrupted run",
            report.stale_removed
        );
    }
    match check {
        Some((path, c)) => println!(
            "  checksums  {} files match {}{}",
            c.matched.len(),
            display(path),
            if c.unlisted.is_empty() {
                String::new()
            } else {
                format!(" ({} not listed there)", c.unlisted.len())
            }
        ),
        None if args.no_checksums => {}
        None => println!(
            "  checksums  no list to compare with ({} not found)",
            display(&args.tables.join("CHECKSUMS"))
        ),
    }
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
