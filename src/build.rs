//! Building a set of tables into a directory: the dependency closure in DAG order, skipping
//! tables whose files are present and valid, generating the rest from the files already there.
//!
//! Each table is generated in memory ([`crate::gen::generate`]) with a [`Tablebase`] over the
//! output directory (and any extra directories) as the source of smaller tables, then written
//! file by file (each file atomically). A table counts as present only when all the files its
//! metrics need exist, open, and pass their checksums, so a killed run resumes where it stopped;
//! temporary files left by a killed writer (`NAME.tmp.<pid>` of a process that no longer runs)
//! are removed when the next build starts.
//!
//! Before anything is generated, every table of the plan gets an [`Estimate`] of its peak memory
//! and of the disk its files take; a table over [`BuildOptions::memory_limit`], or over the free
//! space of the output directory, is refused with [`BuildError::TooLarge`] before work starts.

use crate::format::ReadOptions;
use crate::r#gen::{GenError, Metric, Progress, generate};
use crate::index::Index;
use crate::material::Material;
use crate::probe::{DecodedTables, Tablebase};
use crate::store::{FileKind, StoreError, StoreOptions, StoredTable, file_name, write_table};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
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
    /// Finished a table: time taken and bytes written.
    Done {
        i: usize,
        material: Material,
        time: Duration,
        bytes: u64,
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
    Gen(Material, GenError),
    Store(StoreError),
    Dir(PathBuf, String),
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
            BuildError::Dir(p, e) => write!(f, "table directory {}: {e}", p.display()),
            BuildError::TooLarge {
                what,
                resource: Resource::Memory,
                need,
                available,
            } => write!(
                f,
                "{what} needs about {} ({need} bytes) of memory, over the limit of {} ({available} bytes); \
                 raise --memory-limit or build it on a larger machine",
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

impl std::error::Error for BuildError {}

impl From<StoreError> for BuildError {
    fn from(e: StoreError) -> BuildError {
        BuildError::Store(e)
    }
}

/// `1536` → `"1.5 KiB"`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The resources one table's build needs, estimated before it starts.
///
/// With `n` = slots per side to move ([`Index::size`]), for each metric built (one after the
/// other, so the peak is that of one metric):
///
/// * the solver holds a 2-byte value per slot and side and two bit sets (candidates, quiet):
///   `2n × (2 + 2/8) = 4.5 n` bytes;
/// * when it finishes, the values become the [`crate::gen::Table`] in place (the candidate bits
///   are freed: `4.25 n`), and the writer maps them to a symbol vector per side, 1 byte per slot
///   for WDL and DTZ (every DTZ file up to 4 pieces has at most 256 distinct values) and 2 for
///   DTW: `+ 2n` or `+ 4n`, plus one file's compressed blocks (at most its disk estimate);
/// * the source of smaller tables ([`DecodedTables`]) holds every table the solver reads
///   decoded, 2 bytes per slot and side (tables above [`DecodedTables::MAX_SLOTS`] slots are
///   read through block caches instead: [`SOURCE_CACHE_BLOCKS`] 2-byte blocks per side);
/// * a fixed [`BASE_MEMORY`] for the program and thread stacks.
///
/// So a WDL + DTZ build peaks at `6.25 n + n + cache + base` bytes (`8.25 n + n + …` with DTW).
/// Measured peak RSS (`/usr/bin/time -v`, one table into an empty directory with its
/// dependencies linked in): KQvRB (n = 2.6 M) 22 MB for an estimate of 28 MB; KRvKP
/// (n = 6.3 M) 62 MB for 80 MB; KPvKP and KNvPP 80 MB for 100 MB. The estimate stays above the
/// peak by 20–30%, mostly because the block caches do not fill completely.
/// Files: [`DISK_BYTES_PER_SLOT`] bytes per slot and side and file kind, about twice the largest
/// ratio seen in the ≤4-piece set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub material: Material,
    /// Slots per side to move.
    pub slots: u64,
    /// Estimated peak memory of the process while building this table, in bytes.
    pub memory: u64,
    /// Upper estimate of the bytes of the table's files.
    pub disk: u64,
    /// Slot visits (2 sides × slots × metrics): the unit of progress and time estimates.
    pub work: u64,
}

/// Decoded blocks each source file may cache during a build.
pub const SOURCE_CACHE_BLOCKS: usize = 1024;
/// Program and thread stacks, in bytes (an idle `antitb generate` has a peak RSS of 5 MB).
pub const BASE_MEMORY: u64 = 8 << 20;
/// Upper estimate of compressed bytes per slot and side, by file kind (WDL, DTZ, DTW). The
/// largest seen among the ≤4-piece tables: 0.12 (WDL), 0.21 (DTZ), and per piece count the
/// ratio falls (3 pieces: 0.12 / 0.28; 2 pieces: 0.30 / 0.53 on files of a few hundred bytes,
/// where the header dominates: see [`DISK_HEADER_BYTES`]).
pub const DISK_BYTES_PER_SLOT: [f64; 3] = [0.25, 0.5, 0.5];
/// Header and offset table allowance per file.
pub const DISK_HEADER_BYTES: u64 = 4096;

/// Estimate the build of `material` (DTZ + WDL, and DTW if `dtw`).
pub fn estimate(material: Material, dtw: bool) -> Estimate {
    estimate_with(material, dtw, &mut HashMap::new())
}

/// [`estimate`] with a cache of slot counts (for plans of thousands of tables).
pub fn estimate_with(
    material: Material,
    dtw: bool,
    sizes: &mut HashMap<Material, u64>,
) -> Estimate {
    let mut size = |m: Material| *sizes.entry(m).or_insert_with(|| Index::new(m).size());
    let m = material.canonical();
    let n = size(m);
    let kinds: &[usize] = if dtw { &[0, 1, 2] } else { &[0, 1] };
    let file = |k: usize| (2.0 * n as f64 * DISK_BYTES_PER_SLOT[k]) as u64 + DISK_HEADER_BYTES;
    let disk: u64 = kinds.iter().map(|&k| file(k)).sum();
    let solver = 2 * n * 2 + 2 * n * 2 / 8;
    let table = 2 * n * 2 + 2 * n / 8;
    // The symbols of both sides, and the pairs encoder's copy of them and its pair tables
    // (two sections at once).
    let encoder = 2 * n * 2 + 2 * crate::format::pairs::ENCODER_TABLE_BYTES;
    let writing = table + 2 * n * 2 + encoder + file(1).max(if dtw { file(2) } else { 0 });
    let block = 2 * u64::from(crate::store::DTW_VALUES_PER_BLOCK);
    let cache: u64 = source_tables(m)
        .into_iter()
        .map(|d| {
            let s = size(d);
            if s <= DecodedTables::MAX_SLOTS {
                2 * 2 * s
            } else {
                2 * SOURCE_CACHE_BLOCKS as u64 * block
            }
        })
        .sum();
    let metrics = if dtw { 2 } else { 1 };
    Estimate {
        material: m,
        slots: n,
        memory: solver.max(writing) + cache + BASE_MEMORY,
        disk,
        work: 2 * n * metrics,
    }
}

/// The tables the solver of `m` reads: those one capture or promotion away and (through
/// capture chains) smaller ones. Tables as large as `m` that only promotions of promotions
/// reach are never read, and are not decoded (PPvPP's closure holds over a hundred 4-piece
/// tables; decoding them all cost 4.2 GB instead of 0.26 GB).
fn source_tables(m: Material) -> Vec<Material> {
    let direct = m.dependencies();
    Material::closure(&[m])
        .into_iter()
        .filter(|&d| d != m && (d.count() < m.count() || direct.contains(&d)))
        .collect()
}

/// Bytes free to an unprivileged writer on the file system holding `dir`.
#[cfg(unix)]
pub fn free_disk(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path contains a NUL byte")
    })?;
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs; statvfs only
    // writes into `st`. All-zero bytes are a valid `statvfs` (plain integers).
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Bytes free on the file system holding `dir` (unknown here: unlimited).
#[cfg(not(unix))]
pub fn free_disk(_dir: &Path) -> std::io::Result<u64> {
    Ok(u64::MAX)
}

/// Physical memory of this machine in bytes, if known.
pub fn physical_memory() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions; it returns -1 for unknown names.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return Some(pages as u64 * page as u64);
        }
    }
    None
}

/// The file kinds a table needs under these options.
pub fn kinds(opts: &BuildOptions) -> Vec<FileKind> {
    if opts.dtw {
        FileKind::ALL.to_vec()
    } else {
        vec![FileKind::Wdl, FileKind::Dtz]
    }
}

/// Are all files of `material` present in `dir` and valid (header and checksums)?
pub fn is_present(dir: &Path, material: Material, kinds: &[FileKind]) -> bool {
    kinds.iter().all(|&k| {
        let path = dir.join(file_name(material, k));
        path.is_file()
            && StoredTable::open(&path, material, k, &ReadOptions { cache_blocks: 0 })
                .is_ok_and(|t| t.file().verify_checksums().is_ok())
    })
}

/// Is the process `pid` still running?
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: kill with signal 0 sends nothing; it only checks that the process exists.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Remove `M.{wdl,dtz,dtw}.tmp.<pid>` files in `dir` whose writer no longer runs (a killed
/// build); returns how many were removed. Files of running writers (a parallel `make -j`) stay.
pub fn remove_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some((stem, pid)) = name.rsplit_once(".tmp.") else {
            continue;
        };
        let ours = FileKind::ALL
            .iter()
            .any(|k| stem.ends_with(&format!(".{}", k.extension())));
        if let (true, Ok(pid)) = (ours, pid.parse::<u32>())
            && pid != std::process::id()
            && !process_alive(pid)
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Create `dir` if needed and check that files can be created in it.
fn check_writable(dir: &Path) -> Result<(), BuildError> {
    let err = |e: std::io::Error| BuildError::Dir(dir.to_path_buf(), e.to_string());
    std::fs::create_dir_all(dir).map_err(err)?;
    let probe = dir.join(format!(".antitb-write-test.{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| BuildError::Dir(dir.to_path_buf(), format!("not writable: {e}")))?;
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
    let free = free_disk(&opts.dir)
        .map_err(|err| BuildError::Dir(opts.dir.clone(), format!("free space: {err}")))?;
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
    let present = |kinds: &[FileKind]| dirs.iter().any(|d| is_present(d, material, kinds));
    let mut out = Vec::new();
    if !present(&[FileKind::Wdl, FileKind::Dtz]) {
        out.push(Metric::Dtz);
    }
    if dtw && !present(&[FileKind::Dtw]) {
        out.push(Metric::Dtw);
    }
    out
}

/// Build `targets` and everything they need into `opts.dir`. A table whose WDL and DTZ files
/// are present but whose DTW file is missing (with `opts.dtw`) gets only its DTW file.
pub fn build(
    targets: &[Material],
    opts: &BuildOptions,
    events: &(dyn Fn(&BuildEvent) + Sync),
) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    check_writable(&opts.dir)?;
    let stale_removed = remove_stale_temporaries(&opts.dir);
    let dirs: Vec<PathBuf> = std::iter::once(opts.dir.clone())
        .chain(opts.extra_dirs.iter().cloned())
        .collect();
    let mut present = Vec::new();
    let mut plan = Vec::new();
    for m in Material::closure(targets) {
        let metrics = missing_metrics(&dirs, m, opts.dtw);
        if metrics.is_empty() {
            present.push(m)
        } else {
            plan.push((m, metrics))
        }
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
    for (i, (e, (m, metrics))) in estimates.iter().zip(&plan).enumerate() {
        let m = *m;
        // The disk may have filled since the plan was checked.
        check_disk(m.to_string(), e.disk, opts)?;
        let t0 = Instant::now();
        events(&BuildEvent::Start { i, material: m });
        // A fresh source per table: its block caches hold this table's dependencies only.
        let source = Tablebase::open_with(
            &dirs,
            ReadOptions {
                cache_blocks: SOURCE_CACHE_BLOCKS,
            },
        )
        .map_err(|e| BuildError::Dir(opts.dir.clone(), e.to_string()))?;
        let mut bytes = 0;
        for &metric in metrics {
            let mut decoded = DecodedTables::new(&source);
            let needed = source_tables(m);
            decoded
                .preload(&needed, metric)
                .map_err(|e| BuildError::Gen(m, e))?;
            let table = generate(m, metric, &decoded, &|p| {
                events(&BuildEvent::Solver(p.clone()))
            })
            .map_err(|e| BuildError::Gen(m, e))?;
            events(&BuildEvent::Writing {
                i,
                material: m,
                metric,
            });
            for (_, stats) in write_table(&opts.dir, &table, &opts.write)? {
                bytes += stats.file_len;
            }
        }
        report.bytes_written += bytes;
        report.built.push(m);
        events(&BuildEvent::Done {
            i,
            material: m,
            time: t0.elapsed(),
            bytes,
        });
    }
    report.time = start.elapsed();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_follows_the_formula() {
        let m = Material::parse("KQvR").unwrap();
        let e = estimate(m, false);
        assert_eq!(e.slots, 10 * 64 * 64);
        let n = e.slots;
        let disk =
            (2.0 * n as f64 * 0.25) as u64 + (2.0 * n as f64 * 0.5) as u64 + 2 * DISK_HEADER_BYTES;
        assert_eq!(e.disk, disk);
        // Writing: the table (4.25 n), the symbols (4 n), the encoder's copy and tables, the
        // DTZ file's estimate; + the caches of KvR, KvQ, KvK, KQvK, KRvK, KQvR's other
        // dependencies (all of them small) + base.
        let dtz_file = (2.0 * n as f64 * 0.5) as u64 + DISK_HEADER_BYTES;
        let encoder = 4 * n + 2 * crate::format::pairs::ENCODER_TABLE_BYTES;
        let writing = 8 * n + n / 4 + encoder + dtz_file + BASE_MEMORY;
        assert!(e.memory >= writing, "{e:?}");
        assert!(e.memory < writing + 8 * 2 * 10 * 64 * 64, "{e:?}");
        assert_eq!(e.work, 2 * n);
        assert_eq!(estimate(m, true).work, 4 * n);
    }

    #[test]
    fn human_bytes_reads_well() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
