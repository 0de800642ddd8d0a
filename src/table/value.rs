//! The value of a position, packed in a `u16`: the currency of the solver, the files, the
//! prober and the verifier.
//!
//! `V(P)` (SPEC.md §2 for DTZ, §3 for DTW) is one of `W(n)`, `D`, `L(n)`:
//!
//! | code            | meaning                                          |
//! |-----------------|--------------------------------------------------|
//! | `1`             | `D`, draw                                        |
//! | `2 + 2n`        | `W(n)`: the side to move wins in `n` plies       |
//! | `3 + 2n`        | `L(n)`: the side to move loses in `n` plies      |
//! | `0x7fff`        | invalid slot (no position has this index)        |
//!
//! During generation a slot may also hold `0x8000 | baseline`: a quiet position not decided yet,
//! whose best zeroing move so far scores `baseline` (`0` = it has no zeroing move).

use super::Wdl;
use std::cmp::Ordering;
use std::fmt;

/// A position's value in one metric (DTZ under the 50-move rule, or DTW).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Value(pub(crate) u16);

/// Largest distance a value can hold.
pub const MAX_DISTANCE: u16 = 0x3ffc;

impl Value {
    pub const DRAW: Value = Value(1);
    pub const INVALID: Value = Value(0x7fff);

    #[inline]
    pub const fn win(n: u16) -> Value {
        Value(2 + 2 * n)
    }

    #[inline]
    pub const fn loss(n: u16) -> Value {
        Value(3 + 2 * n)
    }

    /// The raw 16-bit code (as stored).
    #[inline]
    pub const fn code(self) -> u16 {
        self.0
    }

    /// A value from its raw code, if the code is a real value (win, loss or draw).
    pub const fn from_code(code: u16) -> Option<Value> {
        if code >= 1 && code <= 3 + 2 * MAX_DISTANCE {
            Some(Value(code))
        } else {
            None
        }
    }

    #[inline]
    pub const fn is_win(self) -> bool {
        self.0 >= 2 && self.0 < 0x7fff && self.0.is_multiple_of(2)
    }

    #[inline]
    pub const fn is_loss(self) -> bool {
        self.0 >= 3 && self.0 < 0x7fff && self.0 % 2 == 1
    }

    #[inline]
    pub const fn is_draw(self) -> bool {
        self.0 == 1
    }

    /// `n` of `W(n)` or `L(n)`; 0 for a draw.
    #[inline]
    pub const fn distance(self) -> u16 {
        if self.0 >= 2 { (self.0 - 2) / 2 } else { 0 }
    }

    /// Signed distance: `+n` for `W(n)`, `−n` for `L(n)`, 0 for a draw (SPEC.md's DTZ or DTW).
    #[inline]
    pub const fn signed(self) -> i32 {
        if self.is_win() {
            self.distance() as i32
        } else if self.is_loss() {
            -(self.distance() as i32)
        } else {
            0
        }
    }

    /// The value from the side to move's signed distance (`None` = draw).
    pub fn from_signed(d: Option<i32>, win_if_zero: bool) -> Value {
        match d {
            None => Value::DRAW,
            Some(0) if win_if_zero => Value::win(0),
            Some(n) if n >= 0 => Value::win(n as u16),
            Some(n) => Value::loss((-n) as u16),
        }
    }

    /// Won, drawn or lost, whatever the distance: `W(1)`, `D` or `L(1)` (for a lookup where
    /// only that matters, such as which moves keep a DTW win).
    #[inline]
    pub const fn outcome(self) -> Value {
        if self.is_win() {
            Value::win(1)
        } else if self.is_loss() {
            Value::loss(1)
        } else {
            self
        }
    }

    /// WDL under the 50-move rule (SPEC.md §2): a win or loss within 100 plies of the next
    /// zeroing move, a cursed win or blessed loss beyond. Meaningful for DTZ values.
    #[inline]
    pub const fn wdl(self) -> Wdl {
        if self.is_win() {
            if self.distance() <= 100 {
                Wdl::Win
            } else {
                Wdl::CursedWin
            }
        } else if self.is_loss() {
            if self.distance() <= 100 {
                Wdl::Loss
            } else {
                Wdl::BlessedLoss
            }
        } else {
            Wdl::Draw
        }
    }

    /// The score of a non-zeroing move into a position of this value, for the mover:
    /// `L(k)` → `W(k+1)`, `W(k)` → `L(k+1)`, `D` → `D`.
    #[inline]
    pub const fn after_move(self) -> Value {
        if self.0 >= 2 && self.0 < 0x7fff {
            Value((self.0 ^ 1) + 2)
        } else {
            self
        }
    }

    /// Ordering key from the side to move's view: larger is better. Any win beats a draw, a
    /// draw beats any loss; the shorter win and the longer loss are better.
    #[inline]
    pub const fn rank(self) -> i32 {
        if self.is_win() {
            0x20000 - self.distance() as i32
        } else if self.is_loss() {
            self.distance() as i32 - 0x20000
        } else {
            0
        }
    }

    /// The better of two values for the side to move.
    #[inline]
    pub fn max(self, other: Value) -> Value {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    /// Better for the side to move is greater.
    fn cmp(&self, other: &Value) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_win() {
            write!(f, "W({})", self.distance())
        } else if self.is_loss() {
            write!(f, "L({})", self.distance())
        } else if self.is_draw() {
            f.write_str("D")
        } else {
            write!(f, "Value({:#x})", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        assert_eq!(Value::loss(4).after_move(), Value::win(5));
        assert_eq!(Value::win(0).after_move(), Value::loss(1));
        assert_eq!(Value::DRAW.after_move(), Value::DRAW);
        assert_eq!(Value::win(100).wdl(), Wdl::Win);
        assert_eq!(Value::win(101).wdl(), Wdl::CursedWin);
        assert_eq!(Value::loss(101).wdl(), Wdl::BlessedLoss);
        assert!(Value::win(3) > Value::win(5));
        assert!(Value::win(300) > Value::DRAW);
        assert!(Value::loss(7) > Value::loss(3));
        assert!(Value::DRAW > Value::loss(300));
    }
}
