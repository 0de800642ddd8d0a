//! Building a set of tables into a directory: the dependency closure in DAG order, skipping
//! tables whose files are present and valid, generating the rest from the files already there.
//!
//! Each table is generated in memory ([`crate::gen::generate`]) with a [`Tablebase`] over the
//! output directory (and any extra directories) as the source of smaller tables, then written
//! file by file (each file atomically). A table counts as present only when all the files its
//! metrics need exist, open, and pass their checksums, so a killed run resumes where it stopped.

use crate::format::{ReadOptions, WriteOptions};
use crate::r#gen::{GenError, Metric, Progress, generate};
use crate::material::Material;
use crate::probe::Tablebase;
use crate::store::{FileKind, StoreError, StoredTable, file_name, write_table};
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
    pub write: WriteOptions,
}

/// Events for a progress display.
#[derive(Clone, Debug)]
pub enum BuildEvent {
    /// The plan: tables to build and tables already present.
    Plan { to_build: Vec<Material>, present: Vec<Material> },
    /// Starting table number `i` (0-based) of the plan.
    Start { i: usize, material: Material },
    /// Solver progress inside the current table.
    Solver(Progress),
    /// Finished a table: time taken and bytes written.
    Done { i: usize, material: Material, time: Duration, bytes: u64 },
}

/// Summary of a build.
#[derive(Clone, Debug, Default)]
pub struct BuildReport {
    pub built: Vec<Material>,
    pub skipped: Vec<Material>,
    pub bytes_written: u64,
    pub time: Duration,
}

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    Gen(Material, GenError),
    Store(StoreError),
    Dir(PathBuf, String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Gen(m, e) => write!(f, "generating {m}: {e}"),
            BuildError::Store(e) => write!(f, "{e}"),
            BuildError::Dir(p, e) => write!(f, "table directory {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<StoreError> for BuildError {
    fn from(e: StoreError) -> BuildError {
        BuildError::Store(e)
    }
}

/// The file kinds a table needs under these options.
pub fn kinds(opts: &BuildOptions) -> Vec<FileKind> {
    if opts.dtw { FileKind::ALL.to_vec() } else { vec![FileKind::Wdl, FileKind::Dtz] }
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

/// Build `targets` and everything they need into `opts.dir`.
pub fn build(targets: &[Material], opts: &BuildOptions, events: &(dyn Fn(&BuildEvent) + Sync)) -> Result<BuildReport, BuildError> {
    let start = Instant::now();
    std::fs::create_dir_all(&opts.dir).map_err(|e| BuildError::Dir(opts.dir.clone(), e.to_string()))?;
    let kinds = kinds(opts);
    let all = Material::closure(targets);
    let dirs: Vec<PathBuf> = std::iter::once(opts.dir.clone()).chain(opts.extra_dirs.iter().cloned()).collect();
    let (present, to_build): (Vec<Material>, Vec<Material>) =
        all.into_iter().partition(|&m| dirs.iter().any(|d| is_present(d, m, &kinds)));
    events(&BuildEvent::Plan { to_build: to_build.clone(), present: present.clone() });
    // Sources are read whole-block-cached: generation looks up smaller tables many times.
    let source = Tablebase::open_with(&dirs, ReadOptions { cache_blocks: 1024 })
        .map_err(|e| BuildError::Dir(opts.dir.clone(), e.to_string()))?;
    let mut report = BuildReport { skipped: present, ..BuildReport::default() };
    for (i, &m) in to_build.iter().enumerate() {
        let t0 = Instant::now();
        events(&BuildEvent::Start { i, material: m });
        let mut bytes = 0;
        let metrics: &[Metric] = if opts.dtw { &[Metric::Dtz, Metric::Dtw] } else { &[Metric::Dtz] };
        for &metric in metrics {
            let table = generate(m, metric, &source, &|p| events(&BuildEvent::Solver(p.clone())))
                .map_err(|e| BuildError::Gen(m, e))?;
            for (_, stats) in write_table(&opts.dir, &table, &opts.write)? {
                bytes += stats.file_len;
            }
        }
        // Files of this table may have been looked up as missing before: forget that.
        source.refresh();
        report.bytes_written += bytes;
        report.built.push(m);
        events(&BuildEvent::Done { i, material: m, time: t0.elapsed(), bytes });
    }
    report.time = start.elapsed();
    Ok(report)
}
