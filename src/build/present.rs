//! Which tables a directory holds: a table counts as present only when every file its metrics
//! need exists, opens as that table, and passes its checksums. A build that makes only its
//! targets ([`super::BuildOptions::only_targets`], one job of a cluster plan) checks here,
//! before any work, that every other table they read is present, and says why one is not.

use super::estimate::source_tables;
use super::{BuildError, metrics};
use crate::format::ReadOptions;
use crate::store::{StoreError, StoredTable, file_name};
use crate::table::{Material, Metric};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a table cannot be used from the table directories.
#[derive(Debug)]
pub enum Unusable {
    /// None of its files is in any of these directories.
    Absent { dirs: Vec<PathBuf> },
    /// Its file of `metric` is missing at `path`, beside some of its other files.
    MissingFile { metric: Metric, path: PathBuf },
    /// A file of it cannot be read, is damaged (fails its checksums), or is not the table it is
    /// named after.
    File(StoreError),
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unusable::Absent { dirs } => {
                let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
                write!(f, "its files are missing from {}", dirs.join(", "))
            }
            Unusable::MissingFile { path, .. } => write!(f, "{} is missing", path.display()),
            Unusable::File(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Unusable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Unusable::File(e) => Some(e),
            _ => None,
        }
    }
}

/// Are all files of `material` present in `dir` and valid (header and checksums)?
pub fn is_present(dir: &Path, material: Material, metrics: &[Metric]) -> bool {
    check_files(dir, material, metrics).is_ok()
}

/// Check that the files of `material` in `metrics` are in `dir`, open as that table, and pass
/// their checksums; the error is about the first file that does not.
pub fn check_files(dir: &Path, material: Material, metrics: &[Metric]) -> Result<(), Unusable> {
    for &metric in metrics {
        let path = dir.join(file_name(material, metric));
        if !path.is_file() {
            return Err(Unusable::MissingFile { metric, path });
        }
        StoredTable::open(&path, material, metric, &ReadOptions { cache_blocks: 0 })
            .map_err(Unusable::File)?
            .file()
            .verify_checksums()
            .map_err(|e| Unusable::File(StoreError::Format(e)))?;
    }
    Ok(())
}

/// Check that `material` is usable from one of `dirs`. The error is that of the first
/// directory holding any of its files (a damaged file says more than a missing one).
fn check_dependency(
    dirs: &[PathBuf],
    material: Material,
    metrics: &[Metric],
) -> Result<(), Unusable> {
    let mut first = None;
    for d in dirs {
        match check_files(d, material, metrics) {
            Ok(()) => return Ok(()),
            Err(e) => {
                let any = metrics
                    .iter()
                    .any(|&k| d.join(file_name(material, k)).exists());
                if any && first.is_none() {
                    first = Some(e);
                }
            }
        }
    }
    Err(first.unwrap_or_else(|| Unusable::Absent {
        dirs: dirs.to_vec(),
    }))
}

/// Check that every table the tables of `plan` read, other than those of the plan, is usable
/// from `dirs` with the files of a `dtw` build, before any work starts.
pub(super) fn check_dependencies<T>(
    plan: &[(Material, T)],
    dirs: &[PathBuf],
    dtw: bool,
) -> Result<(), BuildError> {
    for (m, _) in plan {
        for d in source_tables(*m) {
            if plan.iter().any(|(p, _)| *p == d) {
                continue;
            }
            check_dependency(dirs, d, metrics(dtw)).map_err(|problem| BuildError::Dependency {
                table: d,
                needed_by: *m,
                problem,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Unusable;
    use crate::build::{BuildError, BuildOptions, build};
    use crate::table::{Material, Metric};

    fn m(s: &str) -> Material {
        Material::parse(s).unwrap().canonical()
    }

    /// Build KQvK alone with `only_targets`.
    fn alone(opts: &BuildOptions) -> Result<Vec<Material>, BuildError> {
        let mut o = opts.clone();
        o.only_targets = true;
        build(&[m("KQvK")], &o, &|_| {}).map(|r| r.built)
    }

    /// `only_targets` refuses a missing or damaged dependency with a typed error, builds nothing
    /// else, and once the dependency is back builds the target alone, byte for byte as a build
    /// of its whole closure. (`src/error.rs` tests how `antitb::Error` maps these errors.)
    #[test]
    fn only_targets_builds_the_target_from_present_dependencies() {
        let dir = std::env::temp_dir().join(format!("antitb-only-targets-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = BuildOptions::new(&dir);
        let empty = alone(&opts).unwrap_err();
        assert!(
            matches!(
                &empty,
                BuildError::Dependency { needed_by, problem: Unusable::Absent { .. }, .. }
                    if *needed_by == m("KQvK")
            ),
            "{empty}"
        );
        assert!(
            std::fs::read_dir(&dir).unwrap().next().is_none(),
            "wrote files"
        );

        let full = build(&[m("KQvK")], &opts, &|_| {}).unwrap();
        assert!(full.built.len() > 1);
        let want = std::fs::read(dir.join("KQvK.dtz")).unwrap();
        let dep = full
            .built
            .iter()
            .copied()
            .find(|&d| d != m("KQvK"))
            .unwrap();
        for metric in [Metric::Wdl, Metric::Dtz] {
            std::fs::remove_file(dir.join(crate::store::file_name(m("KQvK"), metric))).unwrap();
        }
        // A dependency's DTZ file missing beside its WDL file.
        let dtz = dir.join(crate::store::file_name(dep, Metric::Dtz));
        let good = std::fs::read(&dtz).unwrap();
        std::fs::remove_file(&dtz).unwrap();
        let missing = alone(&opts).unwrap_err();
        assert!(
            matches!(&missing, BuildError::Dependency { table, problem: Unusable::MissingFile { metric: Metric::Dtz, .. }, .. } if *table == dep),
            "{missing}"
        );
        // Damaged: a byte flipped in the middle.
        let mut bad = good.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x40;
        std::fs::write(&dtz, &bad).unwrap();
        let damaged = alone(&opts).unwrap_err();
        assert!(
            matches!(
                &damaged,
                BuildError::Dependency {
                    problem: Unusable::File(_),
                    ..
                }
            ),
            "{damaged}"
        );
        assert!(
            damaged.to_string().contains(&dtz.display().to_string()),
            "{damaged}"
        );
        assert!(!dir.join("KQvK.dtz").exists());
        // Repaired: exactly the target is built, as the full build built it.
        std::fs::write(&dtz, &good).unwrap();
        assert_eq!(alone(&opts).unwrap(), [m("KQvK")]);
        assert!(std::fs::read(dir.join("KQvK.dtz")).unwrap() == want);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
