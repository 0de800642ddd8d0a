//! Independent re-check of stored tables: self-consistency, known results, and (with the cargo
//! feature `syzygy`) de Man's Syzygy antichess tables.
//!
//! # Self-consistency
//!
//! For every position a table file stores (a valid slot whose side to move has no capture),
//! with both sides to move, the value is derived again from the stored values of its
//! successors, exactly as SPEC.md §2 and §3 define it:
//!
//! * no legal move: `W(0)` (the side to move is stalemated and wins);
//! * a zeroing move (a pawn move: push, double push, promotion to any piece including the king)
//!   scores from the child's WDL: the child is valued by a capture search (en passant included,
//!   [`crate::table::resolve`]) whose leaves are the stored WDL of quiet positions, in this
//!   table or a smaller or promoted one;
//! * a non-zeroing move scores from the child's stored DTZ (`L(k)` → `W(k+1)`, …), or, if the
//!   opponent must capture there, from the capture search;
//! * DTW (if the table has a `.dtw` file): every move scores from the child's DTW value, reached
//!   through the same capture search on the `.dtw` files.
//!
//! The stored WDL, DTZ and DTW must equal the derived ones, and a DTW must be a win exactly when
//! the WDL is `+2` or `+1` (a loss when `−2`/`−1`, a draw when `0`).
//!
//! `.dtz` and `.dtw` files store one side to move: the other side's values are first derived by
//! one ply of search from the stored side, as a prober reads them, so their own DTZ/DTW check
//! holds by construction (the scan does not derive those values again), while their WDL and
//! DTW-class checks do not, and the stored side is checked against them (two plies down to
//! itself). That search leaves the positions the `.wdl` file calls draws as draws: those are
//! derived in the scan, as on the stored side. The `.dtw` files of the tables a position
//! reaches are read the same way, by one ply of search where they leave a side out.
//!
//! Why this is a proof, given correct smaller tables: a stored `W(n)` needs a move to a stored
//! `L(n−1)` (or a zeroing move), and a stored `L(n)` needs every move to lead to a stored win of
//! at most `n−1`; by induction on `n` every decisive value is real and its distance is exact.
//! A stored draw that was really a win would need a move to a real loss stored as a draw, which
//! in turn needs a move to a real win stored as a draw of smaller distance — no infinite descent
//! is possible, so every draw is real too.
//!
//! This module never uses the generator ([`crate::gen`]): it reads the files through
//! [`crate::store`], moves with [`crate::rules`], and values captures with
//! [`crate::table::resolve`], so one bug cannot hide in both. This holds by structure: the
//! verifier's layer may not name the solver's (`tests/layers.rs`).
//!
//! # Cost
//!
//! A table's own sections are decoded whole into memory (3 bytes a slot a side: its classes
//! and 2-byte DTZ values; 5 with a `.dtw` file). A table for which that exceeds
//! [`VerifyOptions::compact_above`] (six-piece tables of many distinct pieces: 6.9·10⁹ slots a
//! side, 42 GB) is held one byte a slot a side per metric instead, its `.wdl` file read section
//! by section as the check goes (1 byte a slot a side for WDL and DTZ, 2 with DTW). The tables
//! its positions can reach (captures, promotions, and their captures) are decoded once and
//! cached up to [`VerifyOptions::cache_bytes`]. Work is cut into slot ranges (sections for a
//! compact table) spread over rayon's threads. The check of a compact table, hours long for
//! a six-piece table, can be saved as it goes and resumed ([`VerifyOptions::checkpoint`]).

mod checkpoint;
mod consistency;
mod known;
mod tables;

#[cfg(feature = "syzygy")]
pub mod syzygy;

pub use consistency::verify_tables;
pub use known::{
    KnownError, KnownMismatch, KnownReport, KnownRow, check_known, parse_known, read_known,
};
pub use tables::tables_in;

use crate::rules::Position;
use crate::store::StoreError;
use crate::table::{Material, Metric, Value, Wdl};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How to verify.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Headers and checksums only, no position-by-position check.
    pub fast: bool,
    /// Keep at most this many [`Disagreement`]s per table (all are counted); 0 keeps all.
    pub max_reports: usize,
    /// Decoded tables kept between tables, in bytes (the table being checked and the tables it
    /// needs are held regardless).
    pub cache_bytes: usize,
    /// Bytes of a table's own decoded values (both sides, all its metrics, 2-byte values plus
    /// the decoded classes) above which it is held one byte a slot a metric instead.
    pub compact_above: u64,
    /// A directory where the check of a table held compact is saved as it goes (its values
    /// once built, then each section of slots checked), so that a later run with the same
    /// directory resumes it; the files are removed once the table's check is complete.
    pub checkpoint: Option<PathBuf>,
}

impl Default for VerifyOptions {
    fn default() -> VerifyOptions {
        VerifyOptions {
            fast: false,
            max_reports: 1000,
            cache_bytes: 2 << 30,
            compact_above: 4 << 30,
            checkpoint: None,
        }
    }
}

/// Progress of a verification, for a display.
#[derive(Clone, Debug)]
pub enum VerifyEvent {
    /// The tables to check, in order.
    Plan { tables: Vec<Material> },
    /// Starting table `i` of the plan.
    Start { i: usize, material: Material },
    /// Inside table `i`: `done` of `total` slots scanned (both sides to move).
    Progress {
        i: usize,
        material: Material,
        done: u64,
        total: u64,
    },
    /// Table `i` resumes a check saved in the checkpoint directory: its values were loaded
    /// (`values`), and `slots` slots (`positions` positions) were already checked.
    Resumed {
        i: usize,
        material: Material,
        values: bool,
        slots: u64,
        positions: u64,
    },
    /// Finished table `i`.
    Done { i: usize, report: TableReport },
    /// Finished comparing table `i` with another set of tables (`ok`: no disagreement).
    Compared {
        i: usize,
        material: Material,
        positions: u64,
        ok: bool,
    },
}

/// Which stored value disagrees.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Check {
    /// The `.wdl` file's value against the derived WDL.
    Wdl,
    /// The `.dtz` file's value against the derived exact DTZ.
    Dtz,
    /// The `.dtw` file's value against the derived DTW.
    Dtw,
    /// The `.dtw` file's class (win, draw, loss) against the `.wdl` file's (SPEC.md §3).
    DtwClass,
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Check::Wdl => "wdl",
            Check::Dtz => "dtz",
            Check::Dtw => "dtw",
            Check::DtwClass => "dtw class",
        })
    }
}

/// A value as read or derived.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Reading {
    /// A WDL class.
    Wdl(Wdl),
    /// A DTZ or DTW value.
    Value(Value),
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reading::Wdl(w) => write!(f, "{:+}", w.to_i8()),
            Reading::Value(v) if v.is_draw() => f.write_str("D"),
            Reading::Value(v) => write!(f, "{v:?} ({:+})", v.signed()),
        }
    }
}

/// One stored value that is not what its successors say.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// The table (canonical).
    pub material: Material,
    /// Section (side to move in the canonical orientation) and slot.
    pub side: usize,
    pub index: u64,
    /// The position (canonical orientation; its `Display` is the FEN).
    pub position: Position,
    pub check: Check,
    /// The value in the file.
    pub stored: Reading,
    /// The value derived from the successors; for [`Check::DtwClass`], the `.wdl` file's value.
    pub derived: Reading,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.check {
            Check::DtwClass => "but the wdl file says",
            _ => "derived",
        };
        write!(
            f,
            "{} {}: {} stored {}, {what} {}",
            self.material, self.position, self.check, self.stored, self.derived
        )
    }
}

/// The outcome for one table.
#[derive(Clone, Debug)]
pub struct TableReport {
    pub material: Material,
    /// The files read (headers and checksums checked).
    pub files: Vec<PathBuf>,
    /// Stored positions checked (both sides to move); 0 with [`VerifyOptions::fast`].
    pub positions: u64,
    /// Of those, the positions an earlier run checked ([`VerifyOptions::checkpoint`]).
    pub resumed: u64,
    /// Disagreements found (all counted).
    pub disagreements: u64,
    /// The first [`VerifyOptions::max_reports`] disagreements, in slot order.
    pub shown: Vec<Disagreement>,
    /// Why the table could not be checked (or not completely): missing or corrupt files, bad
    /// checksums, missing tables it depends on.
    pub errors: Vec<VerifyError>,
    pub time: Duration,
}

impl TableReport {
    /// No error and no disagreement.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty() && self.disagreements == 0
    }
}

/// The outcome of [`verify_tables`].
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub tables: Vec<TableReport>,
    pub time: Duration,
}

impl Report {
    pub fn is_ok(&self) -> bool {
        self.tables.iter().all(TableReport::is_ok)
    }

    pub fn positions(&self) -> u64 {
        self.tables.iter().map(|t| t.positions).sum()
    }

    /// Of [`Report::positions`], those earlier runs checked.
    pub fn resumed(&self) -> u64 {
        self.tables.iter().map(|t| t.resumed).sum()
    }

    pub fn disagreements(&self) -> u64 {
        self.tables.iter().map(|t| t.disagreements).sum()
    }

    pub fn errors(&self) -> usize {
        self.tables.iter().map(|t| t.errors.len()).sum()
    }

    pub fn files(&self) -> usize {
        self.tables.iter().map(|t| t.files.len()).sum()
    }
}

/// Why something could not be verified. `Display` is one line naming the file or table.
#[derive(Clone, Debug)]
pub enum VerifyError {
    /// A table directory does not exist or cannot be read.
    BadDirectory(PathBuf, Arc<std::io::Error>),
    /// No file of this table and metric in any table directory.
    MissingTable { material: Material, metric: Metric },
    /// A file is unreadable, corrupt, fails a checksum, or is not the table it is named after.
    Store(Arc<StoreError>),
    /// While checking `material`, a table it needs (`needed`) could not be read.
    Dependency {
        material: Material,
        needed: Material,
        error: Box<VerifyError>,
    },
    /// A known-results file: unreadable, or a bad line (`line` 0 = the whole file).
    Known {
        path: PathBuf,
        line: usize,
        what: String,
    },
    /// The Syzygy reference tables.
    Syzygy(String),
    /// A file of the checkpoint directory cannot be written.
    Checkpoint(PathBuf, Arc<std::io::Error>),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::BadDirectory(p, e) => {
                write!(f, "cannot read table directory {}: {e}", p.display())
            }
            VerifyError::MissingTable { material, metric } => {
                write!(
                    f,
                    "missing table {} (no file {} in the table directories)",
                    material,
                    crate::store::file_name(*material, *metric)
                )
            }
            VerifyError::Store(e) => write!(f, "{e}"),
            VerifyError::Dependency {
                material,
                needed,
                error,
            } => {
                write!(f, "cannot check {material}: it needs {needed}: {error}")
            }
            VerifyError::Known {
                path,
                line: 0,
                what,
            } => write!(f, "{}: {what}", path.display()),
            VerifyError::Known { path, line, what } => {
                write!(f, "{}:{line}: {what}", path.display())
            }
            VerifyError::Syzygy(e) => write!(f, "syzygy: {e}"),
            VerifyError::Checkpoint(p, e) => {
                write!(f, "cannot write checkpoint {}: {e}", p.display())
            }
        }
    }
}

impl std::error::Error for VerifyError {}

impl From<StoreError> for VerifyError {
    fn from(e: StoreError) -> VerifyError {
        VerifyError::Store(Arc::new(e))
    }
}

impl From<crate::format::FormatError> for VerifyError {
    fn from(e: crate::format::FormatError) -> VerifyError {
        VerifyError::Store(Arc::new(StoreError::Format(e)))
    }
}
