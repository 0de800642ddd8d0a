//! What a value measures: WDL, DTZ or DTW. One table has a file per metric (`M.wdl`, `M.dtz`,
//! `M.dtw`), the file header names it, the solver computes DTZ or DTW values, and the capture
//! search scores a zeroing move according to it.

use super::Value;
use std::fmt;
use std::str::FromStr;

/// What a value measures (SPEC.md §2, §3), and so the kind of a table file.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum Metric {
    /// Win/draw/loss under the 50-move rule: the class of a DTZ value (`M.wdl`).
    Wdl = 0,
    /// Exact distance to the next zeroing move under the 50-move rule (`M.dtz`). The solver
    /// computes WDL and DTZ together, as DTZ values.
    Dtz = 1,
    /// Depth to win, the 50-move rule ignored (`M.dtw`).
    Dtw = 2,
}

impl Metric {
    /// Every metric, in file order.
    pub const ALL: [Metric; 3] = [Metric::Wdl, Metric::Dtz, Metric::Dtw];

    /// The file extension, and the name on the command line: `wdl`, `dtz`, `dtw`.
    pub const fn extension(self) -> &'static str {
        match self {
            Metric::Wdl => "wdl",
            Metric::Dtz => "dtz",
            Metric::Dtw => "dtw",
        }
    }

    /// The metric's byte in a file header.
    #[inline]
    pub const fn to_byte(self) -> u8 {
        self as u8
    }

    /// The metric of a header byte, if it names one.
    #[inline]
    pub const fn from_byte(b: u8) -> Option<Metric> {
        match b {
            0 => Some(Metric::Wdl),
            1 => Some(Metric::Dtz),
            2 => Some(Metric::Dtw),
            _ => None,
        }
    }

    /// Score for the mover of a zeroing move (capture or pawn move) into a child of value
    /// `child`. Under the 50-move rule (WDL, DTZ) the counter restarts, so only the child's WDL
    /// counts: the move scores the opposite class at distance 1 (101 for cursed wins and
    /// blessed losses). For DTW it is any move: `L(k)` → `W(k+1)`.
    #[inline]
    pub const fn zeroing(self, child: Value) -> Value {
        match self {
            Metric::Wdl | Metric::Dtz => child.wdl().opposite().as_value(),
            Metric::Dtw => child.after_move(),
        }
    }

    /// The file a capture search in this metric reads for the quiet positions its captures
    /// reach: as [`Metric::zeroing`] scores those moves, the WDL for WDL and DTZ, the DTW for
    /// DTW.
    #[inline]
    pub const fn zeroing_file(self) -> Metric {
        match self {
            Metric::Wdl | Metric::Dtz => Metric::Wdl,
            Metric::Dtw => Metric::Dtw,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

/// A name that is not `wdl`, `dtz` or `dtw`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct UnknownMetric(pub String);

impl fmt::Display for UnknownMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown metric '{}' (use wdl, dtz or dtw)", self.0)
    }
}

impl std::error::Error for UnknownMetric {}

impl FromStr for Metric {
    type Err = UnknownMetric;

    fn from_str(s: &str) -> Result<Metric, UnknownMetric> {
        Metric::ALL
            .into_iter()
            .find(|m| m.extension() == s)
            .ok_or_else(|| UnknownMetric(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroing_moves_score_by_wdl_or_by_dtw() {
        assert_eq!(Metric::Dtz.zeroing(Value::loss(150)), Value::win(101));
        assert_eq!(Metric::Dtz.zeroing(Value::win(0)), Value::loss(1));
        assert_eq!(Metric::Dtw.zeroing(Value::win(7)), Value::loss(8));
        for (child, score) in [
            (Value::loss(3), Value::win(1)),
            (Value::loss(120), Value::win(101)),
            (Value::DRAW, Value::DRAW),
            (Value::win(101), Value::loss(101)),
            (Value::win(40), Value::loss(1)),
        ] {
            assert_eq!(Metric::Wdl.zeroing(child), score);
            assert_eq!(Metric::Dtz.zeroing(child), score);
        }
        assert_eq!(Metric::Dtz.zeroing_file(), Metric::Wdl);
        assert_eq!(Metric::Dtw.zeroing_file(), Metric::Dtw);
    }

    #[test]
    fn names_and_bytes() {
        for m in Metric::ALL {
            assert_eq!(m.to_string().parse::<Metric>(), Ok(m));
            assert_eq!(Metric::from_byte(m.to_byte()), Some(m));
        }
        assert_eq!(Metric::from_byte(3), None);
        assert!("DTZ".parse::<Metric>().is_err());
    }
}
