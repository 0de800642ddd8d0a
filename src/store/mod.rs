//! The files of one table: what each stores and how values are mapped to symbols.
//!
//! A material `M` has up to three files, each a [`crate::format`] file indexed by
//! [`crate::table`] (sections: one per stored side to move, in the canonical orientation):
//!
//! | file      | sections        | values                                                    |
//! |-----------|-----------------|-----------------------------------------------------------|
//! | `M.wdl`   | White, Black    | 1 byte: WDL + 2 (0 = loss … 4 = win), SPEC.md §2           |
//! | `M.dtz`   | one side only   | a symbol per position: the DTZ *distance* `n` of `W(n)` / `L(n)`, less 100 for cursed wins and blessed losses |
//! | `M.dtw`   | one side (both up to 3 pieces) | a symbol per position: the DTW distance    |
//!
//! The sign and class of a DTZ or DTW value come from the `.wdl` file (DTW wins and losses are
//! exactly the WDL wins and losses, cursed and blessed included, as the 50-move rule only
//! decides *how* a won game is won), so `.dtz`/`.dtw` files hold distances only, and draws are
//! "don't care". `.dtz` and `.dtw` files hold **one side to move**, whichever compresses
//! smaller, except that a `.dtw` file whose material has one side of pawns only against pieces
//! stores that side (the one every promotion into it lands on, which builds with pawns read:
//! [`crate::table::Material::promotions_land_on`]), and a `.dtw` file of at most
//! [`DTW_BOTH_SIDES_SLOTS`] slots a side (every table up to three pieces) stores both; the
//! value of the other side is exact all
//! the same, by one ply of search: every move
//! of that side leads to the stored side, or (DTZ) is a zeroing move scored by WDL (SPEC.md §2),
//! or (DTW) leaves the table by a capture or a promotion (SPEC.md §3;
//! [`crate::table::dtw_by_search`]). See [`crate::probe`]. `.dtw` files written before stored
//! both sides (the same format version): they are read as they are.
//!
//! Only *quiet* decisive positions are stored: valid slots whose side to move has no capture
//! (plus, in `.dtz`/`.dtw`, a decisive WDL). Everything else is "don't care" and repeats the
//! previous stored symbol, which costs almost nothing after compression; a prober resolves
//! captures by search first (SPEC.md §4).
//!
//! Codecs ([`StoreOptions`]): `.wdl` and `.dtz` files use the pairs codec (format version 5),
//! which a probe decodes in a fraction of a microsecond; `.dtw` files, probed only for analysis
//! and the largest, use zstd blocks (format version 4), about 20 % smaller on their long
//! and varied distances.
//!
//! `.dtz` files leave out the short values too: `W(0)` (stalemated), `W(1)` (a pawn move wins at
//! once), `W(2)` (a quiet move after which every reply of the opponent loses at once: the
//! "threat" positions of the Syzygy tables) and `L(1)` (every move loses at once). They are
//! common (`W(2)` alone is half the wins of many tables, `W(1)` and `L(1)` most of the short
//! ones with pawns), and a prober tells them by at most two plies of search with WDL lookups
//! ([`crate::table::short_dtz`]).
//!
//! The *value encoding* header field of `.dtz`/`.dtw` files: byte 0 is a bit set of the
//! stored sides (bit 0 White, bit 1 Black; the file has one section per bit, White's first)
//! and, in `.dtz` files, bit 2 ([`SHORT_BY_SEARCH`]) when the short values are left out,
//! then the distance of each symbol (little-endian `u16` each), commonest first. Symbols are
//! 1 byte when there are at most 256 distinct distances, else 2.

mod read;
pub mod side;
mod write;

pub use read::StoredTable;
pub use write::{COPY_BYTES, DTW_BOTH_SIDES_SLOTS, SECTION_VALUES, write_table};

use crate::format::{Compression, FormatError, WriteOptions};
use crate::table::{Material, Metric, Value, Wdl};
use std::fmt;
use std::path::PathBuf;

/// The file name of a table (`KQvR.dtz`).
pub fn file_name(material: Material, metric: Metric) -> String {
    format!("{}.{}", material.canonical(), metric.extension())
}

/// Why a table file could not be written or read.
#[derive(Debug)]
pub enum StoreError {
    Format(FormatError),
    /// The file is readable but does not describe the table it is named after.
    Mismatch {
        path: PathBuf,
        what: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Format(e) => write!(f, "{e}"),
            StoreError::Mismatch { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

impl StoreError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            StoreError::Format(e) => e.path(),
            StoreError::Mismatch { path, .. } => path,
        }
    }

    /// The block the damage is in, when it is in one.
    pub fn block(&self) -> Option<u64> {
        match self {
            StoreError::Format(e) => e.block(),
            StoreError::Mismatch { .. } => None,
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Format(e) => Some(e),
            StoreError::Mismatch { .. } => None,
        }
    }
}

impl From<FormatError> for StoreError {
    fn from(e: FormatError) -> StoreError {
        StoreError::Format(e)
    }
}

/// How table files are written, per metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// `.wdl` files: what an engine probes in its search, so the fast pairs codec.
    pub wdl: WriteOptions,
    /// `.dtz` files: probed at the root and along lines, a one-ply search for the unstored
    /// side; the pairs codec too.
    pub dtz: WriteOptions,
    /// `.dtw` files: analysis only, and the largest; zstd, which makes them smaller.
    pub dtw: WriteOptions,
}

/// Bytes per block of `.wdl` files (pairs codec). Larger blocks make smaller files and slower
/// probes: with 512-byte blocks the ≤4-piece `.wdl` + `.dtz` files were 3.4 % smaller, but WDL
/// probes fell from 2.7x to 1.05x Syzygy's rate and DTZ probes (whose one-ply search reads the
/// WDL of every child) to 0.27x. See `src/format/pairs.rs`.
pub const WDL_BLOCK_BYTES: u32 = 128;
/// Bytes per block of `.dtz` files (pairs codec).
pub const DTZ_BLOCK_BYTES: u32 = 128;

/// Default `.dtw` values per block; see `examples/size_lab.rs` and tables/FORMAT.md.
pub const DTW_VALUES_PER_BLOCK: u32 = 1 << 14;
/// Default zstd level of `.dtw` files. Measured with `size_lab --dtw` on 90 of the 714 tables up
/// to 4 pieces (every 8th by `.dtw` size, 13 % of the set's bytes), against level 15: level 13
/// writes 1.027x the bytes in 0.57x the time, level 12 1.039x in 0.51x, levels 7–11 1.07x in
/// 0.40–0.48x; cold block decode the same.
pub const DTW_LEVEL: i32 = 13;

impl StoreOptions {
    /// How the files of `metric` are written.
    pub fn of(&self, metric: Metric) -> &WriteOptions {
        match metric {
            Metric::Wdl => &self.wdl,
            Metric::Dtz => &self.dtz,
            Metric::Dtw => &self.dtw,
        }
    }
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            wdl: WriteOptions::pairs_with(WDL_BLOCK_BYTES),
            dtz: WriteOptions::pairs_with(DTZ_BLOCK_BYTES),
            dtw: WriteOptions {
                compression: Compression::Zstd,
                level: DTW_LEVEL,
                values_per_block: DTW_VALUES_PER_BLOCK,
            },
        }
    }
}

/// The symbol of a WDL in a `.wdl` file: WDL + 2, 0 (loss) ..= 4 (win).
#[inline]
pub const fn wdl_symbol(w: Wdl) -> u8 {
    (w.to_i8() + 2) as u8
}

/// The WDL of a `.wdl` file's symbol (0..=4), if it is one.
#[inline]
pub const fn wdl_of_symbol(s: u16) -> Option<Wdl> {
    if s <= 4 {
        Wdl::from_i8(s as i8 - 2)
    } else {
        None
    }
}

/// Bit 2 of a `.dtz` file's side bit set (the first byte of its value encoding): positions at
/// DTZ `W(0)`, `W(1)`, `W(2)` or `L(1)` are not stored ("don't care"); a reader tells them by
/// at most two plies of search ([`crate::table::short_dtz`]). Readers older than this bit refuse
/// such files ("bad value map"), as they would misread them.
pub const SHORT_BY_SEARCH: u8 = 1 << 2;

/// Is `v` a DTZ value `.dtz` files with [`SHORT_BY_SEARCH`] leave out?
#[inline]
fn is_short_dtz(v: Value) -> bool {
    v == Value::win(0) || v == Value::win(1) || v == Value::win(2) || v == Value::loss(1)
}

/// The number a `.dtz`/`.dtw` file stores for a value: its distance (less 100 for DTZ cursed
/// wins and blessed losses, whose class the `.wdl` file gives), `None` for a draw and for the
/// short DTZ values (see [`SHORT_BY_SEARCH`]).
fn stored_distance(metric: Metric, v: Value) -> Option<u16> {
    if v.is_draw() || (metric == Metric::Dtz && is_short_dtz(v)) {
        return None;
    }
    let d = v.distance();
    Some(if metric == Metric::Dtz && d > 100 {
        d - 100
    } else {
        d
    })
}

/// The value a `.dtz`/`.dtw` distance stands for, given the position's WDL (not a draw).
#[inline]
pub fn value_of_distance(metric: Metric, wdl: Wdl, d: u16) -> Value {
    let d = if metric == Metric::Dtz && matches!(wdl, Wdl::CursedWin | Wdl::BlessedLoss) {
        d + 100
    } else {
        d
    };
    if wdl.is_win() {
        Value::win(d)
    } else {
        Value::loss(d)
    }
}
