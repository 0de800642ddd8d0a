//! Building a set of tables into a directory: the dependency closure in DAG order, skipping
//! tables whose files are present and valid, generating the rest from the files already there,
//! [`BuildOptions::jobs`] tables at once on the current rayon pool (each once the tables it reads
//! are done).
//!
//! This is the layer that puts the solver and the files together: each table is generated in
//! memory ([`crate::gen::generate`]) with [`DecodedTables`] over a [`Tablebase`] of the output
//! directory (and any extra directories) as the source of smaller tables (`source.rs`; the
//! solver knows only its `TableSource` trait), then written file by file (each file
//! atomically). A table counts as present only when all the files its
//! metrics need exist, open, and pass their checksums, so a killed run resumes where it stopped;
//! temporary files left by a killed writer (`NAME.tmp.<pid>` of a process that no longer runs)
//! are removed when the next build starts.
//!
//! Before anything is generated, every table of the plan gets an [`Estimate`] of its peak memory
//! and of the disk its files take; a table over [`BuildOptions::memory_limit`], or over the free
//! space of the output directory, is refused with [`BuildError::TooLarge`] before work starts
//! (`estimate.rs`; free disk and physical memory in `system.rs`). The same estimates make the
//! [`plan`] that `antitb plan` exports for `make` or a cluster scheduler, and [`slurm`] turns it
//! into a Slurm submission script whose jobs build one table each ([`BuildOptions::only_targets`],
//! checked in `present.rs`); [`checksums`] compares the files with the published
//! `tables/CHECKSUMS`.

pub mod checksums;
mod estimate;
pub mod plan;
mod present;
pub mod slurm;
mod source;
mod system;

pub use estimate::{
    BASE_MEMORY, DISK_BYTES_PER_SLOT, DISK_HEADER_BYTES, DTW_COST, ENCODER_TABLE_SHARE, Estimate,
    FILES_MOVES_SAMPLES, FLOOR_LISTS_SHARE, MAPPED_WDL_BYTES_PER_SLOT, NS_PER_FILES_MOVE,
    NS_PER_SLOT_VISIT, NS_PER_SLOT_VISIT_5, NS_PER_SLOT_VISIT_UP_TO_4, SOURCE_CACHE_BLOCKS, SPILLS,
    WRITER_BYTES_PER_SECTION_SLOT, WRITER_IMAGE_BYTES_PER_SLOT, estimate, estimate_with,
    files_moves_per_slot, human_bytes,
};
pub use present::{Unusable, check_files, is_present};
pub use source::DecodedTables;
pub use system::{Measured, Phase, Step, free_disk, physical_memory, remove_stale_temporaries};

use crate::format::ReadOptions;
use crate::r#gen::{GenError, IN_MEMORY_SLOTS, Progress, SolveOptions, WdlHint, solve};
use crate::probe::{ProbeError, Tablebase};
use crate::store::{StoreError, StoreOptions, write_table};
use crate::table::{Material, Metric};
use estimate::{solver_reads, source_tables};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What to build and how.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Where tables are written (and looked up first).
    pub dir: PathBuf,
    /// More directories to take existing tables from (read only).
    pub extra_dirs: Vec<PathBuf>,
    /// Metrics to build: DTZ (with WDL) always; DTW if set.
    pub dtw: bool,
    pub write: StoreOptions,
    /// Refuse tables whose estimated peak memory ([`Estimate::memory`]) exceeds this many bytes.
    pub memory_limit: Option<u64>,
    /// Refuse tables whose estimated files ([`Estimate::disk`]) exceed the free space of `dir`.
    pub check_disk: bool,
    /// Build the targets and nothing else: every other table they read must be present and pass
    /// its checksums in `dir` or `extra_dirs`, else [`BuildError::Dependency`] before any work
    /// (one job of a cluster plan, whose dependencies other jobs build). Only the targets' own
    /// stale temporary files are removed: on a shared file system, another machine's live
    /// writer cannot be told from a dead one.
    pub only_targets: bool,
    /// Least time between two checkpoints of a resumable table ([`SolveOptions::resume`]).
    pub checkpoint_every: Duration,
    /// Tables built at once (at least 1), each as soon as the tables it reads are built and
    /// while the estimated peak memory of those running stays within
    /// [`BuildOptions::memory_limit`]. A table's own passes are parallel too, but its
    /// sequential stretches (opening sources, small levels, writing) leave cores idle that a
    /// second table fills. The files are the same for any number. With more than one, the
    /// per-table CPU time and peak memory of [`BuildEvent::Done`] are not measured (they
    /// would mix the tables): build one at a time to calibrate estimates.
    pub jobs: usize,
}

impl BuildOptions {
    /// Options for building into `dir`: WDL + DTZ, default compression, no memory limit, free
    /// disk checked.
    pub fn new(dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            dir: dir.into(),
            extra_dirs: Vec::new(),
            dtw: false,
            write: StoreOptions::default(),
            memory_limit: None,
            check_disk: true,
            only_targets: false,
            checkpoint_every: SolveOptions::default().checkpoint_every,
            jobs: 1,
        }
    }
}

/// Events for a progress display.
#[derive(Clone, Debug)]
pub enum BuildEvent {
    /// The plan: tables to build (with their estimates) and tables already present.
    Plan {
        to_build: Vec<Estimate>,
        present: Vec<Material>,
    },
    /// Starting table number `i` (0-based) of the plan.
    Start { i: usize, material: Material },
    /// Solver progress inside the current table.
    Solver(Progress),
    /// Compressing and writing the files of the current table in `metric`.
    Writing {
        i: usize,
        material: Material,
        metric: Metric,
    },
    /// Finished a table: wall time taken, bytes written, and the CPU time and peak memory it
    /// took (to set against its [`Estimate`]).
    ///
    /// The peak memory is measured by resetting the whole process's peak-RSS mark when each
    /// table starts (Linux `/proc/self/clear_refs`): a program that embeds [`build`] and reads
    /// its own `VmHWM` sees the peak since the last table started, not since it began.
    Done {
        i: usize,
        material: Material,
        time: Duration,
        bytes: u64,
        measured: Measured,
    },
}

/// Summary of a build.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    pub built: Vec<Material>,
    pub skipped: Vec<Material>,
    pub bytes_written: u64,
    pub time: Duration,
    /// The largest estimated peak memory of a built table, and that table.
    pub peak_estimate: Option<(Material, u64)>,
    /// Stale temporary files removed at the start.
    pub stale_removed: usize,
    /// Left-out `.dtw` sides of tables built earlier in the run that later DTW builds read from
    /// the run's side files ([`crate::store::side`]) instead of searching them.
    pub dtw_sides_read: u64,
}

/// The resource a table would exceed.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Resource {
    Memory,
    Disk,
}

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// Generating a table failed: a table it needs is missing, unreadable or corrupt, or a
    /// distance is beyond what a value holds.
    Gen(Material, GenError<ProbeError>),
    /// Writing a table file failed.
    Store(StoreError),
    /// The output directory cannot be created or written, or its free space read (`what`).
    Dir {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    /// A directory of existing tables cannot be read.
    Probe(ProbeError),
    /// With [`BuildOptions::only_targets`]: `needed_by` reads `table`, which cannot be used.
    Dependency {
        table: Material,
        needed_by: Material,
        problem: Unusable,
    },
    /// A table (or, for the disk, the whole plan) needs more memory than the limit, or more disk
    /// than is free. `what` names it.
    TooLarge {
        what: String,
        resource: Resource,
        need: u64,
        available: u64,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Gen(m, e) => write!(f, "generating {m}: {e}"),
            BuildError::Store(e) => write!(f, "{e}"),
            BuildError::Dir { path, what, source } => {
                write!(f, "table directory {}: {what}: {source}", path.display())
            }
            BuildError::Probe(e) => write!(f, "{e}"),
            BuildError::Dependency {
                table,
                needed_by,
                problem,
            } => write!(
                f,
                "{needed_by} needs {table}, which is missing or corrupt (only the named tables are built): {problem}"
            ),
            BuildError::TooLarge {
                what,
                resource: Resource::Memory,
                need,
                available,
            } => write!(
                f,
                "{what} needs about {} ({need} bytes) of memory, over the limit of {} ({available} bytes)",
                human_bytes(*need),
                human_bytes(*available)
            ),
            BuildError::TooLarge {
                what,
                resource: Resource::Disk,
                need,
                available,
            } => write!(
                f,
                "{what} need up to {} ({need} bytes) of disk, but only {} ({available} bytes) are free there",
                human_bytes(*need),
                human_bytes(*available)
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Gen(_, e) => Some(e),
            BuildError::Store(e) => Some(e),
            BuildError::Dir { source, .. } => Some(source),
            BuildError::Probe(e) => Some(e),
            BuildError::Dependency { problem, .. } => Some(problem),
            BuildError::TooLarge { .. } => None,
        }
    }
}

impl From<StoreError> for BuildError {
    fn from(e: StoreError) -> BuildError {
        BuildError::Store(e)
    }
}

/// The files (by metric) of every table of a build, with or without DTW, in the order they
/// are written.
pub fn metrics(dtw: bool) -> &'static [Metric] {
    if dtw {
        &Metric::ALL
    } else {
        &[Metric::Wdl, Metric::Dtz]
    }
}

/// Create `dir` if needed and check that files can be created in it.
fn check_writable(dir: &Path) -> Result<(), BuildError> {
    let err = |what| {
        move |source| BuildError::Dir {
            path: dir.to_path_buf(),
            what,
            source,
        }
    };
    std::fs::create_dir_all(dir).map_err(err("cannot create it"))?;
    let probe = dir.join(format!(".antitb-write-test.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(err("not writable"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Refuse `e` if it exceeds the memory limit.
fn check_memory(e: &Estimate, opts: &BuildOptions) -> Result<(), BuildError> {
    match opts.memory_limit {
        Some(limit) if e.memory > limit => Err(BuildError::TooLarge {
            what: e.material.to_string(),
            resource: Resource::Memory,
            need: e.memory,
            available: limit,
        }),
        _ => Ok(()),
    }
}

/// Refuse `need` bytes of files (for `what`) if they exceed the free disk of `opts.dir`.
fn check_disk(what: String, need: u64, opts: &BuildOptions) -> Result<(), BuildError> {
    if !opts.check_disk {
        return Ok(());
    }
    let free = free_disk(&opts.dir).map_err(|source| BuildError::Dir {
        path: opts.dir.clone(),
        what: "free space",
        source,
    })?;
    if need > free {
        return Err(BuildError::TooLarge {
            what,
            resource: Resource::Disk,
            need,
            available: free,
        });
    }
    Ok(())
}

/// The metrics of `material` whose files are missing or invalid in every directory of `dirs`.
fn missing_metrics(dirs: &[PathBuf], material: Material, dtw: bool) -> Vec<Metric> {
    let present = |metrics: &[Metric]| dirs.iter().any(|d| is_present(d, material, metrics));
    let mut out = Vec::new();
    if !present(&[Metric::Wdl, Metric::Dtz]) {
        out.push(Metric::Dtz);
    }
    if dtw && !present(&[Metric::Dtw]) {
        out.push(Metric::Dtw);
    }
    out
}

/// Build `targets` and everything they need into `opts.dir` (only the targets with
/// [`BuildOptions::only_targets`]). A table whose WDL and DTZ files are present but whose DTW
/// file is missing (with `opts.dtw`) gets only its DTW file.
pub fn build(
    targets: &[Material],
    opts: &BuildOptions,
    events: &(dyn Fn(&BuildEvent) + Sync),
) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    check_writable(&opts.dir)?;
    let targets: Vec<Material> = targets.iter().map(|m| m.canonical()).collect();
    let stale_removed =
        remove_stale_temporaries(&opts.dir, opts.only_targets.then_some(&targets[..]));
    let dirs: Vec<PathBuf> = std::iter::once(opts.dir.clone())
        .chain(opts.extra_dirs.iter().cloned())
        .collect();
    let mut present = Vec::new();
    let mut plan = Vec::new();
    for m in Material::closure(&targets) {
        if opts.only_targets && !targets.contains(&m) {
            continue;
        }
        let metrics = missing_metrics(&dirs, m, opts.dtw);
        if metrics.is_empty() {
            present.push(m)
        } else {
            plan.push((m, metrics))
        }
    }
    if opts.only_targets {
        present::check_dependencies(&plan, &dirs, opts.dtw)?;
    }
    let mut sizes = HashMap::new();
    let estimates: Vec<Estimate> = plan
        .iter()
        .map(|(m, metrics)| {
            let mut e = estimate_with(*m, opts.dtw, &mut sizes);
            e.work = 2 * e.slots * metrics.len() as u64;
            e
        })
        .collect();
    // Refuse up front: every table against the memory limit, all the files against the disk.
    for e in &estimates {
        check_memory(e, opts)?;
    }
    let total_disk: u64 = estimates.iter().map(|e| e.disk).sum();
    if !estimates.is_empty() {
        check_disk(
            format!("the {} tables to build", estimates.len()),
            total_disk,
            opts,
        )?;
    }
    events(&BuildEvent::Plan {
        to_build: estimates.clone(),
        present: present.clone(),
    });
    let mut report = BuildReport {
        skipped: present,
        peak_estimate: estimates
            .iter()
            .max_by_key(|e| e.memory)
            .map(|e| (e.material, e.memory)),
        stale_removed,
        ..BuildReport::default()
    };
    // The tables of the plan whose left-out `.dtw` sides a later DTW build of the plan reads
    // decoded whole ([`DecodedTables`]): it reads them from side files this run writes, instead
    // of searching them slot by slot. The tables a DTW build reads are in the closure of its
    // dependencies (no table reaches itself). Not for a cluster job's targets: the tables that
    // read them are built by other jobs.
    let read_by_dtw: std::collections::HashSet<Material> = if opts.only_targets {
        Default::default()
    } else {
        let deps: Vec<Material> = plan
            .iter()
            .filter(|(_, metrics)| metrics.contains(&Metric::Dtw))
            .flat_map(|(m, _)| m.dependencies())
            .collect();
        Material::closure(&deps).into_iter().collect()
    };
    let tables: Vec<Table> = estimates
        .iter()
        .zip(&plan)
        .map(|(e, (m, metrics))| Table {
            estimate: e,
            material: *m,
            metrics,
            keeps_dtw_side: metrics.contains(&Metric::Dtw)
                && read_by_dtw.contains(m)
                && e.slots > crate::store::DTW_BOTH_SIDES_SLOTS
                && DecodedTables::decoded_bytes(e.slots, Metric::Dtw).is_some(),
        })
        .collect();
    let sides = opts
        .dir
        .join(format!("{SIDES_DIR}.tmp.{}", std::process::id()));
    let keeps_sides =
        tables.iter().any(|t| t.keeps_dtw_side) && std::fs::create_dir_all(&sides).is_ok();
    // Side files never take the room the plan's own files need.
    let scheduled = schedule(
        &tables,
        opts,
        &dirs,
        keeps_sides.then_some((&*sides, total_disk)),
        events,
    );
    if keeps_sides {
        let _ = std::fs::remove_dir_all(&sides);
    }
    let (built, bytes, sides_read) = scheduled?;
    report.built = built;
    report.bytes_written = bytes;
    report.dtw_sides_read = sides_read;
    report.time = start.elapsed();
    Ok(report)
}

/// One table of a build's plan.
struct Table<'a> {
    estimate: &'a Estimate,
    material: Material,
    metrics: &'a [Metric],
    /// Whether its build writes the side its `.dtw` file leaves out to the run's side files
    /// ([`crate::store::side`]): a later table of the plan reads it, decoded whole.
    keeps_dtw_side: bool,
}

/// The scratch directory of a run's side files: `SIDES_DIR.tmp.PID` in the output directory,
/// removed when the run ends (and, after a killed run, by the next one:
/// [`remove_stale_temporaries`]).
pub const SIDES_DIR: &str = "antitb-dtw-sides";

/// The scheduler's state (see [`schedule`]).
struct Schedule {
    started: Vec<bool>,
    done: Vec<bool>,
    running: usize,
    /// Estimated peak memory of the tables running.
    running_memory: u64,
    bytes: u64,
    /// Left-out `.dtw` sides read from side files, in all.
    sides_read: u64,
    /// The first table of the plan that failed, and why.
    failed: Option<(usize, BuildError)>,
}

/// Build `tables` (in dependency order) with up to [`BuildOptions::jobs`] at once on the current
/// rayon pool: each table is started when every table of the plan it reads is done and its
/// estimated memory fits beside those running (one table always runs). Returns the tables built,
/// in plan order, and the bytes written; after a failure no table is started and, once those
/// running end, the failure of the earliest table in the plan is returned.
fn schedule(
    tables: &[Table],
    opts: &BuildOptions,
    dirs: &[PathBuf],
    sides: Option<(&Path, u64)>,
    events: &(dyn Fn(&BuildEvent) + Sync),
) -> Result<(Vec<Material>, u64, u64), BuildError> {
    let index: HashMap<Material, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.material, i))
        .collect();
    let deps: Vec<Vec<usize>> = tables
        .iter()
        .map(|t| {
            source_tables(t.material)
                .iter()
                .filter_map(|d| index.get(d).copied())
                .collect()
        })
        .collect();
    let jobs = opts.jobs.max(1);
    let state = std::sync::Mutex::new(Schedule {
        started: vec![false; tables.len()],
        done: vec![false; tables.len()],
        running: 0,
        running_memory: 0,
        bytes: 0,
        sides_read: 0,
        failed: None,
    });
    let ctx = Context {
        tables,
        deps: &deps,
        jobs,
        opts,
        dirs,
        sides,
        events,
        state: &state,
    };
    rayon::in_place_scope(|s| ctx.launch(s));
    let st = state.into_inner().expect("schedule lock");
    if let Some((_, e)) = st.failed {
        return Err(e);
    }
    let built = tables
        .iter()
        .zip(&st.done)
        .filter(|(_, d)| **d)
        .map(|(t, _)| t.material)
        .collect();
    Ok((built, st.bytes, st.sides_read))
}

/// What every task of [`schedule`] shares.
#[derive(Clone, Copy)]
struct Context<'a> {
    tables: &'a [Table<'a>],
    deps: &'a [Vec<usize>],
    jobs: usize,
    opts: &'a BuildOptions,
    dirs: &'a [PathBuf],
    /// The run's side files, if it keeps any, and the free disk they leave at least.
    sides: Option<(&'a Path, u64)>,
    events: &'a (dyn Fn(&BuildEvent) + Sync),
    state: &'a std::sync::Mutex<Schedule>,
}

impl<'a> Context<'a> {
    /// Start every table that may start now, each as a task that builds it and then starts
    /// whatever its end allows.
    fn launch<'s>(self, s: &rayon::Scope<'s>)
    where
        'a: 's,
    {
        let mut st = self.state.lock().expect("schedule lock");
        while st.running < self.jobs && st.failed.is_none() {
            let limit = self.opts.memory_limit.unwrap_or(u64::MAX);
            let next = (0..self.tables.len()).find(|&i| {
                !st.started[i]
                    && self.deps[i].iter().all(|&d| st.done[d])
                    && (st.running == 0
                        || st.running_memory + self.tables[i].estimate.memory <= limit)
            });
            let Some(i) = next else { break };
            st.started[i] = true;
            st.running += 1;
            st.running_memory += self.tables[i].estimate.memory;
            s.spawn(move |s| {
                let result = build_one(
                    i,
                    &self.tables[i],
                    self.jobs == 1,
                    self.opts,
                    self.dirs,
                    self.sides,
                    self.events,
                );
                {
                    let mut st = self.state.lock().expect("schedule lock");
                    st.running -= 1;
                    st.running_memory -= self.tables[i].estimate.memory;
                    match result {
                        Ok((bytes, sides_read)) => {
                            st.done[i] = true;
                            st.bytes += bytes;
                            st.sides_read += sides_read;
                        }
                        Err(e) => {
                            if st.failed.as_ref().is_none_or(|(j, _)| i < *j) {
                                st.failed = Some((i, e));
                            }
                        }
                    }
                }
                self.launch(s);
            });
        }
    }
}

/// Write the side to move that the `.dtw` file just written at `path` (of checksum `checksum`)
/// leaves out to its side file in `dir`, from `table`'s values, if the disk keeps `reserve`
/// bytes free beside it (the room the plan's files take). Best effort: without it the tables
/// that read this one search that side, as they would read a table of an earlier run.
fn keep_dtw_side<T: crate::table::TableValues>(
    dir: &Path,
    reserve: u64,
    table: &T,
    path: &Path,
    checksum: u64,
) {
    // At most two bytes a slot (the side's codes, before compression).
    let most = 2 * table.index().size();
    if free_disk(dir).map_or(true, |free| free < reserve.saturating_add(most)) {
        return;
    }
    let m = table.index().material();
    let Ok(file) = crate::store::StoredTable::open(path, m, Metric::Dtw, &ReadOptions::default())
    else {
        return;
    };
    if let Some(side) = (0..2).find(|&s| !file.stores_side(s)) {
        let _ = crate::store::side::write(dir, table, side, checksum);
    }
}

/// Build table `i` of the plan: solve each metric and write its files. With `measure`, the
/// [`BuildEvent::Done`] event carries the CPU time and peak memory the build took (only
/// meaningful when no other table runs at the same time). Returns the bytes written and how many
/// left-out `.dtw` sides its DTW solve read from the run's side files.
fn build_one(
    i: usize,
    t: &Table,
    measure: bool,
    opts: &BuildOptions,
    dirs: &[PathBuf],
    sides: Option<(&Path, u64)>,
    events: &(dyn Fn(&BuildEvent) + Sync),
) -> Result<(u64, u64), BuildError> {
    let (m, e) = (t.material, t.estimate);
    // The disk may have filled since the plan was checked.
    check_disk(m.to_string(), e.disk, opts)?;
    let t0 = Instant::now();
    let mut meter = measure.then(system::Meter::start);
    events(&BuildEvent::Start { i, material: m });
    let (mut bytes, mut sides_read) = (0, 0);
    // A DTW solve's one-ply searches of left-out `.dtw` sides reach further than a WDL/DTZ
    // solve's reads.
    let needed = source_tables(m);
    let read = solver_reads(m);
    // The WDL classes of the WDL/DTZ solve, for the DTW solve after it (`WdlHint`).
    let mut hint: Option<Arc<WdlHint>> = None;
    for &metric in t.metrics {
        // A fresh source per table and metric: its block caches hold only what this solve
        // reads, and it is gone before the writer starts (below).
        let source = Tablebase::open_with(
            dirs,
            ReadOptions {
                cache_blocks: SOURCE_CACHE_BLOCKS,
            },
        )
        .map_err(BuildError::Probe)?;
        let mut decoded = DecodedTables::new(&source);
        if let (Metric::Dtw, Some((dir, _))) = (metric, sides) {
            decoded = decoded.with_dtw_sides(dir.to_path_buf());
        }
        decoded
            .preload_for(
                m,
                if metric == Metric::Dtw {
                    &needed
                } else {
                    &read
                },
                metric,
            )
            .map_err(|e| BuildError::Gen(m, GenError::Source(e)))?;
        // The solver's scratch file (large tables) lies beside the output. A large table
        // with pawns is resumable: a run killed in it starts again after the last unit
        // (batch of pawn configurations) checkpointed, at most a minute before.
        let solve_opts = SolveOptions {
            scratch: opts.dir.clone(),
            resume: e.slots > IN_MEMORY_SLOTS,
            checkpoint_every: opts.checkpoint_every,
            wdl_hint: hint.take().filter(|_| metric == Metric::Dtw),
            ..SolveOptions::default()
        };
        // Measured: the solve's first passes told apart from its levels.
        let init_clock = meter
            .is_some()
            .then(|| std::sync::Mutex::new(system::InitClock::default()));
        let table = solve(m, metric, &decoded, &solve_opts, &|p| {
            if let Some(clock) = &init_clock {
                clock.lock().expect("init clock").note(p.phase);
            }
            events(&BuildEvent::Solver(p.clone()))
        })
        .map_err(|e| BuildError::Gen(m, e))?;
        // Neither the classes nor the smaller tables are needed by the writer: the peak is
        // the solver's with its sources, or the writer's alone.
        drop(solve_opts);
        sides_read += decoded.sides_read();
        drop(decoded);
        drop(source);
        system::release_free_memory();
        if let Some(meter) = &mut meter {
            let init = init_clock.and_then(|c| c.into_inner().expect("init clock").total());
            meter.lap(metric, Step::Solve, init);
        }
        events(&BuildEvent::Writing {
            i,
            material: m,
            metric,
        });
        for (path, stats) in write_table(&opts.dir, &table, &opts.write)? {
            bytes += stats.file_len;
            let dtw = path
                .extension()
                .is_some_and(|e| e == Metric::Dtw.extension());
            if dtw
                && t.keeps_dtw_side
                && let Some((dir, reserve)) = sides
            {
                keep_dtw_side(dir, reserve, &table, &path, stats.file_checksum);
            }
        }
        system::release_free_memory();
        if let Some(meter) = &mut meter {
            meter.lap(metric, Step::Write, None);
        }
        if metric != Metric::Dtw && t.metrics.contains(&Metric::Dtw) {
            let h = WdlHint::of(&table).map_err(|e| BuildError::Gen(m, GenError::Scratch(e)))?;
            hint = Some(Arc::new(h));
        }
        table.remove_resume_files();
    }
    events(&BuildEvent::Done {
        i,
        material: m,
        time: t0.elapsed(),
        bytes,
        measured: meter.map(|m| m.stop()).unwrap_or_default(),
    });
    Ok((bytes, sides_read))
}
