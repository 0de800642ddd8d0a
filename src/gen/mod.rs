//! The retrograde solver: one table at a time, from the tables it depends on.
//!
//! Phases (de Man's architecture, DESIGN.md), for one material and one metric:
//! 1. **mark and resolve captures** — every slot is decoded; invalid slots are marked; a position
//!    whose side to move can capture is decided at once as the best of its captures, all of which
//!    leave the table ([`TableSource`] gives the values there);
//! 2. **per unit** (below), most advanced pawn configurations first: quiet positions get their *baseline*,
//!    the best zeroing move (pawn pushes into already solved configurations, promotions into other
//!    tables); no move at all = stalemate = `W(0)`;
//! 3. **levels** `n = 1, 2, …`: slots that became `L(n−1)` make their quiet predecessors
//!    (un-moves of non-pawn pieces) `W(n)`; slots that became `W(n−1)` make a predecessor `L(n)`
//!    once all its quiet moves lead to decided wins (checked by forward generation), or `L(b)`
//!    when its baseline loss is longer; pending baseline wins `W(b)` are placed at level `b`;
//! 4. what is still undecided is a draw.
//!
//! Memory is about one byte per position and side to move (module `solve`): the solver works
//! on one *unit* at a time (a table without pawns; with pawns, a batch of pawn configurations
//! of equal advancement, solved most advanced first so that pawn pushes lead into finished
//! units), holding one *state byte* per slot: undecided kinds, decided draws, and wins and
//! losses exactly within a *window* of distances. When the levels outgrow the window it
//! shifts, spilling the exact distances it drops; a finished unit's exact values go to an
//! *exact store* (frames of [`FRAME`](crate::table::FRAME) slots, zstd-compressed to
//! a scratch file for large tables), from which later units read their pawn pushes and the
//! writer streams the files ([`Solved`], [`crate::table::TableValues`]).
//!
//! A level visits the slots decided at distance `n − 1` and the pending `W(n)`: from
//! per-distance *frontier lists* filled as values are decided (8-byte entries, at most a
//! quarter byte per slot and side in all, or 32 MiB in a smaller unit: [`list_caps`]), or,
//! for distances with too many slots to list, by one parallel scan (rayon, 4096-slot chunks)
//! over the unit; loss candidates are marked in the state byte and listed likewise. A level
//! is solved backward from those slots, forward (every undecided slot looks at its own
//! moves), or mixed (wins backward from the losses of the level before, and every slot that
//! could still be lost looks at its own moves), whichever visits the fewest slots
//! ([`Direction`]). Which way a slot is found never changes a value.
//! Writes to arbitrary slots are relaxed atomic stores (a compare-and-swap where two events
//! may decide the same slot); they are race-free in effect because every value written at a
//! level depends only on values decided at earlier levels, so the result is the same for any
//! thread count. The same machinery computes DTW: only the scoring of zeroing moves differs
//! ([`Metric::zeroing`]); its many long, sparse levels are what the frontier lists are for.
//! Given the table's WDL classes from the solve before it ([`WdlHint`]), a DTW solve decides
//! the draws at once and checks only the losses as loss candidates.

mod exact;
mod hint;
mod memory;
mod solve;

pub use exact::{IN_MEMORY_SLOTS, ScratchError};
pub use hint::{Class as WdlClass, WdlHint};
pub use memory::{LookupError, MemoryTables};
pub use solve::{
    Direction, LIST_FLOOR, Progress, SolveOptions, Solved, UNIT_SLOTS, generate, largest_unit,
    list_caps, solve,
};

use crate::rules::Position;
use crate::table::{MAX_DISTANCE, Material, Metric, Value, resolve};
use std::fmt;

/// Why a table could not be generated: the source of smaller tables failed (its error `E`),
/// or the table is beyond what a value holds.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum GenError<E> {
    /// The source of smaller tables failed (a missing, unreadable or corrupt table).
    Source(E),
    /// A distance beyond [`MAX_DISTANCE`] plies: the table cannot be stored.
    TooLong { material: Material },
    /// A scratch file of the solver could not be written or read back.
    Scratch(ScratchError),
}

impl<E> From<ScratchError> for GenError<E> {
    fn from(e: ScratchError) -> GenError<E> {
        GenError::Scratch(e)
    }
}

impl<E: fmt::Display> fmt::Display for GenError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenError::Source(e) => write!(f, "{e}"),
            GenError::TooLong { material } => {
                write!(f, "{material}: distance beyond {MAX_DISTANCE}")
            }
            GenError::Scratch(e) => write!(f, "{e}"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for GenError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GenError::Source(e) => Some(e),
            GenError::Scratch(e) => Some(e),
            GenError::TooLong { .. } => None,
        }
    }
}

/// Values of already-built tables, for the positions that capture or promote out of the table
/// being built: the generator's view of the layers above it, which implement it (in-memory
/// tables in [`MemoryTables`], stored files in [`crate::build`]).
pub trait TableSource: Sync {
    /// Why a value could not be had.
    type Error: std::error::Error + Send;

    /// The stored value in `metric` of a position of another table: the side to move has no
    /// capture, and there is no en-passant square. Only what [`Metric::zeroing`] reads of it
    /// matters: for DTZ its WDL class, so a source may answer from a `.wdl` file
    /// ([`Metric::zeroing_file`]).
    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, Self::Error>;

    /// Whether such a position is won, drawn or lost for its side to move, as `W(1)`, `D` or
    /// `L(1)` ([`Value::outcome`]): what a DTW solve reads to skip the moves that cannot be
    /// best. A source that knows the class without finding the distance overrides this.
    fn outcome(&self, pos: &Position, metric: Metric) -> Result<Value, Self::Error> {
        Ok(self.stored_value(pos, metric)?.outcome())
    }

    /// The value in `metric` of a position of another table whose side to move can capture,
    /// its captures resolved by search ([`resolve`]) and, as for [`TableSource::stored_value`],
    /// only what [`Metric::zeroing`] reads of it exact. The captures of many positions of the
    /// table being built reach the same such position: a source that keeps what it found
    /// overrides this.
    fn capture_value(&self, pos: &Position, metric: Metric) -> Result<Value, Self::Error> {
        resolve(pos, metric, &mut |p: &Position| {
            self.stored_value(p, metric)
        })
    }
}
