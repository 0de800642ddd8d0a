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
