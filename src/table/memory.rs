//! One table's values in memory: what the solver produces and the file layer writes.

use super::{Index, Material, Metric, Value};
use crate::rules::Position;

/// One generated table in memory: a value code per slot and side to move.
#[derive(Clone)]
pub struct Table {
    pub index: Index,
    pub metric: Metric,
    /// `values[side][slot]`; side 0 = White (canonical orientation) to move.
    pub values: [Vec<u16>; 2],
    /// `quiet[side]`: one bit per slot, set for valid positions whose side to move has no
    /// capture — the positions a table file must store (the others are resolved by search).
    pub quiet: [Vec<u64>; 2],
}

impl Table {
    pub fn material(&self) -> Material {
        self.index.material()
    }

    /// Is slot `idx` of `side` a valid quiet position (one that files store)?
    #[inline]
    pub fn is_quiet(&self, side: usize, idx: u64) -> bool {
        self.quiet[side][(idx / 64) as usize] >> (idx % 64) & 1 != 0
    }

    /// The stored value of a position of this table (ignores en passant; the position need not
    /// be quiet, capture positions are stored too while in memory).
    pub fn stored(&self, pos: &Position) -> Option<Value> {
        let (side, idx) = self.index.encode(pos)?;
        Value::from_code(self.values[side][idx as usize])
    }
}

/// Slots per *frame*: the unit in which a solved table's values are handed to the file layer
/// ([`TableValues::frame`]).
pub const FRAME: u64 = 1 << 16;

/// Flag on a frame's slot code for a position whose side to move can capture: valued, but not
/// stored in table files (a prober resolves captures by search).
pub const NOT_STORED: u16 = 0x8000;

/// A solved table, frame by frame: what the file layer writes. Implemented by the in-memory
/// [`Table`] and by the solver's result, whose values may sit compressed in a scratch file, so
/// that the writer never needs a second copy of the whole table.
pub trait TableValues: Sync {
    /// Why a frame could not be read (never, for a table in memory).
    type Error: std::error::Error + Send + Sync + 'static;

    fn index(&self) -> &Index;

    fn metric(&self) -> Metric;

    /// Frame `f` ([`FRAME`] slots, the last one shorter) of `side` into `out` (cleared first):
    /// each slot's value code ([`Value::INVALID`] for slots that are no position), with
    /// [`NOT_STORED`] set for positions with a capture.
    fn frame(&self, side: usize, f: usize, out: &mut Vec<u16>) -> Result<(), Self::Error>;
}

impl TableValues for Table {
    type Error = std::convert::Infallible;

    fn index(&self) -> &Index {
        &self.index
    }

    fn metric(&self) -> Metric {
        self.metric
    }

    fn frame(&self, side: usize, f: usize, out: &mut Vec<u16>) -> Result<(), Self::Error> {
        let start = f as u64 * FRAME;
        let end = (start + FRAME).min(self.index.size());
        out.clear();
        out.extend((start..end).map(|i| {
            let c = self.values[side][i as usize];
            if c != Value::INVALID.code() && !self.is_quiet(side, i) {
                c | NOT_STORED
            } else {
                c
            }
        }));
        Ok(())
    }
}
