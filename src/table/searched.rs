//! The DTW of a side to move that a `.dtw` file leaves out, found slot by slot.
//!
//! A `.dtw` file stores one side to move; the other is told by one ply of search
//! ([`super::dtw_by_search`]). A reader that looks up only some of that side's slots (the
//! generator reading a dependency, the verifier reading the tables a check reaches) searches
//! each slot the first time it is looked up and keeps what it found here. A slot's value is a
//! function of its position, so readers on several threads may share one [`SearchedSide`]:
//! whichever stores a slot first, the stored value is the same.

use super::{Value, Wdl};
use std::sync::atomic::{AtomicU16, Ordering};

/// The codes of a slot not searched yet, won or lost (by its `.wdl` class): no [`Value`] has
/// them.
const NOT_YET_WIN: u16 = u16::MAX;
const NOT_YET_LOSS: u16 = u16::MAX - 1;

/// The tag of a code that holds the value of a position whose side to move can capture
/// ([`SearchedSide::keep_capture`]): no [`Value`] code has this bit (the largest is below
/// `0x7ffc`), and of the codes with it only the kept ones untag to a value.
const CAPTURE: u16 = 0x8000;

/// The value kept in a slot's `code` by [`keep_capture`], if it holds one.
#[inline]
pub(crate) fn kept_capture(code: u16) -> Option<Value> {
    if code & CAPTURE == 0 {
        return None;
    }
    Value::from_code(code & !CAPTURE)
}

/// Keep `value`, the value of the position of slot `cell` whose side to move can capture, in
/// the slot. Tables store quiet positions only: the slot of a position that can capture holds
/// a filler no lookup reads (they look up quiet positions), so a reader that resolves such a
/// position by search may keep what it found there, for the next capture that reaches it.
/// The position must have no en-passant square (a slot is the position without one). Whichever
/// thread keeps it, the value is the same.
#[inline]
pub(crate) fn keep_capture(cell: &AtomicU16, value: Value) {
    cell.store(value.code() | CAPTURE, Ordering::Relaxed);
}

/// The DTW values known so far of one side to move of a table: draws from its `.wdl` file, the
/// rest as searches find them. The WDL class of every slot is known from the start, so that a
/// search from a win can skip the moves that do not keep it without searching their children
/// ([`super::dtw_of_left_out`]).
pub struct SearchedSide(Vec<AtomicU16>);

impl SearchedSide {
    /// A side with the classes `wdl` (one per slot): its draws are known, the rest not yet.
    pub fn new(wdl: impl IntoIterator<Item = Wdl>) -> SearchedSide {
        SearchedSide(
            wdl.into_iter()
                .map(|w| {
                    AtomicU16::new(if w == Wdl::Draw {
                        Value::DRAW.code()
                    } else if w.is_loss() {
                        NOT_YET_LOSS
                    } else {
                        NOT_YET_WIN
                    })
                })
                .collect(),
        )
    }

    /// The value of slot `idx`, or `None` if it has not been found yet.
    #[inline]
    pub fn get(&self, idx: usize) -> Option<Value> {
        match self.0[idx].load(Ordering::Relaxed) {
            NOT_YET_WIN | NOT_YET_LOSS => None,
            code => Some(Value(code)),
        }
    }

    /// Whether slot `idx` is won, drawn or lost, searched or not, as `W(1)`, `D` or `L(1)`
    /// (a cursed win counts as a win, a blessed loss as a loss: DTW knows no 50-move rule).
    #[inline]
    pub fn outcome(&self, idx: usize) -> Value {
        match self.0[idx].load(Ordering::Relaxed) {
            NOT_YET_WIN => Value::win(1),
            NOT_YET_LOSS => Value::loss(1),
            code => Value(code).outcome(),
        }
    }

    /// Keep the value found for slot `idx`.
    #[inline]
    pub fn set(&self, idx: usize, value: Value) {
        self.0[idx].store(value.code(), Ordering::Relaxed);
    }

    /// The value [`SearchedSide::keep_capture`] kept in slot `idx`, if any.
    #[inline]
    pub fn capture(&self, idx: usize) -> Option<Value> {
        kept_capture(self.0[idx].load(Ordering::Relaxed))
    }

    /// Keep `value` in slot `idx`, the value of its position, whose side to move can capture
    /// (tagged, as `keep_capture` of this module keeps it): the searches of this side never
    /// fill such a slot.
    #[inline]
    pub fn keep_capture(&self, idx: usize, value: Value) {
        keep_capture(&self.0[idx], value);
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the side has no slot.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_known_and_the_rest_is_found_once() {
        let s = SearchedSide::new([Wdl::Draw, Wdl::Win, Wdl::Loss]);
        assert_eq!(s.get(0), Some(Value::DRAW));
        assert_eq!(s.get(1), None);
        assert_eq!(s.get(2), None);
        assert!(
            s.outcome(1) == Value::win(1)
                && s.outcome(2) == Value::loss(1)
                && s.outcome(0) == Value::DRAW
        );
        s.set(1, Value::win(7));
        assert_eq!(s.get(1), Some(Value::win(7)));
        assert_eq!(s.get(2), None);
        assert!(s.outcome(1) == Value::win(1) && s.outcome(2) == Value::loss(1));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn a_kept_capture_value_is_told_from_every_other_code() {
        let s = SearchedSide::new([Wdl::Draw, Wdl::Win, Wdl::Loss, Wdl::Win]);
        s.set(3, Value::loss(4));
        // Neither a draw, a code not searched yet nor a searched value reads as kept.
        assert!((0..4).all(|i| s.capture(i).is_none()));
        for (i, v) in [
            Value::DRAW,
            Value::win(0),
            Value::loss(0x3ffc),
            Value::win(0x3ffc),
        ]
        .into_iter()
        .enumerate()
        {
            s.keep_capture(i, v);
            assert_eq!(s.capture(i), Some(v));
        }
        assert_eq!(kept_capture(Value::INVALID.code()), None);
    }
}
