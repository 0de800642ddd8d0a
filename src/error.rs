//! One error type for the whole library: what an engine or a tool built on antitb matches on
//! (a missing table, a damaged file and where, too many pieces, a bad FEN) whichever layer
//! failed. Every layer's own error converts into it, so `?` works across them; the layer's
//! error stays reachable as [`std::error::Error::source`].

use crate::build::checksums::ChecksumError;
use crate::build::{BuildError, Unusable};
use crate::format::FormatError;
use crate::probe::ProbeError;
use crate::probe::stats::StatsError;
use crate::prove::ProveError;
use crate::rules::FenError;
use crate::serve::ServeError;
use crate::store::StoreError;
use crate::table::{Material, MaterialError, Metric};
use crate::verify::VerifyError;
use std::fmt;
use std::path::{Path, PathBuf};

/// Anything antitb's library can fail with.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A FEN that does not describe an antichess position.
    Fen(FenError),
    /// A material name that does not describe a table.
    Material(MaterialError),
    /// No file for this table and metric in the table directories.
    MissingTable { material: Material, metric: Metric },
    /// The position has more pieces than any table.
    TooManyPieces { pieces: u32, max: u32 },
    /// A table file is damaged or is not the table it is named after: its path, and the block
    /// when the damage is in one.
    CorruptedTable {
        path: PathBuf,
        block: Option<u64>,
        source: StoreError,
    },
    /// A file or directory could not be read or written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Building tables failed (beyond a missing or damaged table).
    Build(BuildError),
    /// Verification could not run.
    Verify(VerifyError),
    /// The prover could not run.
    Prove(ProveError),
    /// Table statistics could not be computed.
    Stats(StatsError),
    /// Checksums could not be computed or a checksum list read.
    Checksums(ChecksumError),
    /// The HTTP server could not start or failed (beyond its table directories).
    Serve(ServeError),
}

impl Error {
    /// The file or directory the error is about, if it is about one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::CorruptedTable { path, .. } | Error::Io { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Fen(e) => write!(f, "bad FEN: {e}"),
            Error::Material(e) => write!(f, "{e}"),
            Error::MissingTable { material, metric } => write!(
                f,
                "{}",
                ProbeError::MissingTable {
                    material: *material,
                    metric: *metric,
                }
            ),
            Error::TooManyPieces { pieces, max } => write!(
                f,
                "{}",
                ProbeError::TooManyPieces {
                    pieces: *pieces,
                    max: *max,
                }
            ),
            Error::CorruptedTable { source, .. } => write!(f, "{source}"),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Build(e) => write!(f, "{e}"),
            Error::Verify(e) => write!(f, "{e}"),
            Error::Prove(e) => write!(f, "{e}"),
            Error::Stats(e) => write!(f, "{e}"),
            Error::Checksums(e) => write!(f, "{e}"),
            Error::Serve(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Fen(e) => Some(e),
            Error::Material(e) => Some(e),
            Error::MissingTable { .. } | Error::TooManyPieces { .. } => None,
            Error::CorruptedTable { source, .. } => Some(source),
            Error::Io { source, .. } => Some(source),
            Error::Build(e) => Some(e),
            Error::Verify(e) => Some(e),
            Error::Prove(e) => Some(e),
            Error::Stats(e) => Some(e),
            Error::Checksums(e) => Some(e),
            Error::Serve(e) => Some(e),
        }
    }
}

impl From<FenError> for Error {
    fn from(e: FenError) -> Error {
        Error::Fen(e)
    }
}

impl From<MaterialError> for Error {
    fn from(e: MaterialError) -> Error {
        Error::Material(e)
    }
}

impl From<StoreError> for Error {
    /// An I/O failure stays one; anything else about a file is damage.
    fn from(e: StoreError) -> Error {
        match e {
            StoreError::Format(FormatError::Io { path, source, .. }) => Error::Io { path, source },
            e => Error::CorruptedTable {
                path: e.path().to_path_buf(),
                block: e.block(),
                source: e,
            },
        }
    }
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Error {
        Error::from(StoreError::Format(e))
    }
}

impl From<ProbeError> for Error {
    fn from(e: ProbeError) -> Error {
        match e {
            ProbeError::MissingTable { material, metric } => {
                Error::MissingTable { material, metric }
            }
            ProbeError::TooManyPieces { pieces, max } => Error::TooManyPieces { pieces, max },
            ProbeError::BadDirectory(path, source) => Error::Io { path, source },
            ProbeError::Store(e) => Error::from(e),
        }
    }
}

impl From<BuildError> for Error {
    /// A build that failed on a missing or damaged table says so as [`Error::MissingTable`] or
    /// [`Error::CorruptedTable`].
    fn from(e: BuildError) -> Error {
        match e {
            BuildError::Gen(_, crate::r#gen::GenError::Source(e)) | BuildError::Probe(e) => {
                Error::from(e)
            }
            BuildError::Store(e) => Error::from(e),
            // A table a build of its targets alone reads (`BuildOptions::only_targets`).
            BuildError::Dependency {
                problem: Unusable::File(e),
                ..
            } => Error::from(e),
            BuildError::Dependency {
                table,
                problem: Unusable::MissingFile { metric, .. },
                ..
            } => Error::MissingTable {
                material: table,
                metric,
            },
            // No file of it at all: its first file is missing.
            BuildError::Dependency {
                table,
                problem: Unusable::Absent { .. },
                ..
            } => Error::MissingTable {
                material: table,
                metric: Metric::Wdl,
            },
            e => Error::Build(e),
        }
    }
}

impl From<VerifyError> for Error {
    fn from(e: VerifyError) -> Error {
        Error::Verify(e)
    }
}

impl From<ProveError> for Error {
    fn from(e: ProveError) -> Error {
        match e {
            ProveError::Table(e) => Error::from(e),
            e => Error::Prove(e),
        }
    }
}

impl From<StatsError> for Error {
    fn from(e: StatsError) -> Error {
        match e {
            StatsError::Store(e) => Error::from(e),
            StatsError::Probe(e) => Error::from(e),
            e => Error::Stats(e),
        }
    }
}

impl From<ChecksumError> for Error {
    fn from(e: ChecksumError) -> Error {
        match e {
            ChecksumError::Io(path, source) => Error::Io { path, source },
            e => Error::Checksums(e),
        }
    }
}

impl From<ServeError> for Error {
    /// A server that could not read its table directories says so as [`Error::Io`].
    fn from(e: ServeError) -> Error {
        match e {
            ServeError::Tables(e) => Error::from(e),
            e => Error::Serve(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table that a build of its targets alone cannot use says so as the missing or damaged
    /// table an engine matches on, as other build failures on a table do.
    #[test]
    fn a_dependency_of_a_target_alone_is_a_missing_or_corrupted_table() {
        let kvk: Material = "KvK".parse().unwrap();
        let dependency = |problem| BuildError::Dependency {
            table: kvk,
            needed_by: "KQvK".parse().unwrap(),
            problem,
        };
        let absent = dependency(Unusable::Absent {
            dirs: vec!["t".into()],
        });
        assert!(matches!(
            Error::from(absent),
            Error::MissingTable { material, metric: Metric::Wdl } if material == kvk
        ));
        let missing = dependency(Unusable::MissingFile {
            metric: Metric::Dtz,
            path: "t/KvK.dtz".into(),
        });
        assert!(matches!(
            Error::from(missing),
            Error::MissingTable { material, metric: Metric::Dtz } if material == kvk
        ));
        let damaged = dependency(Unusable::File(StoreError::Mismatch {
            path: "t/KvK.wdl".into(),
            what: "holds material KQvK, expected KvK".into(),
        }));
        let e = Error::from(damaged);
        assert!(matches!(e, Error::CorruptedTable { .. }), "{e:?}");
        assert_eq!(e.path(), Some(Path::new("t/KvK.wdl")));
    }
}
