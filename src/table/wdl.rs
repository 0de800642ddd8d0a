//! The values a user of the tables sees: [`Wdl`], the class of a position under the 50-move
//! rule; [`Dtz`] and [`Dtw`], a [`Value`] known to measure DTZ or DTW (SPEC.md §2, §3). As in
//! shakmaty-syzygy, WDL is an `i8`-backed enum that negates, and the distances are newtypes, so
//! a DTW cannot be passed where a DTZ is meant.

use super::Value;
use std::fmt;
use std::ops::Neg;

/// Win/draw/loss under the 50-move rule, from the side to move's view (SPEC.md §2). Ordered
/// from worst to best for the side to move.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(i8)]
pub enum Wdl {
    /// Lost within 100 plies of the next zeroing move.
    Loss = -2,
    /// Lost without the 50-move rule, a draw with it.
    BlessedLoss = -1,
    Draw = 0,
    /// Won without the 50-move rule, a draw with it.
    CursedWin = 1,
    /// Won within 100 plies of the next zeroing move.
    Win = 2,
}

impl Wdl {
    /// Every class, worst first.
    pub const ALL: [Wdl; 5] = [
        Wdl::Loss,
        Wdl::BlessedLoss,
        Wdl::Draw,
        Wdl::CursedWin,
        Wdl::Win,
    ];

    /// The class of −2..=2.
    #[inline]
    pub const fn from_i8(w: i8) -> Option<Wdl> {
        match w {
            -2 => Some(Wdl::Loss),
            -1 => Some(Wdl::BlessedLoss),
            0 => Some(Wdl::Draw),
            1 => Some(Wdl::CursedWin),
            2 => Some(Wdl::Win),
            _ => None,
        }
    }

    /// −2..=2.
    #[inline]
    pub const fn to_i8(self) -> i8 {
        self as i8
    }

    /// The class's place in [`Wdl::ALL`]: 0 (loss) ..= 4 (win), for arrays of counts.
    #[inline]
    pub const fn index(self) -> usize {
        (self.to_i8() + 2) as usize
    }

    /// The class for the other side.
    #[inline]
    pub const fn opposite(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::BlessedLoss => Wdl::CursedWin,
            Wdl::Draw => Wdl::Draw,
            Wdl::CursedWin => Wdl::BlessedLoss,
            Wdl::Win => Wdl::Loss,
        }
    }

    /// A win or a cursed win?
    #[inline]
    pub const fn is_win(self) -> bool {
        self.to_i8() > 0
    }

    /// A loss or a blessed loss?
    #[inline]
    pub const fn is_loss(self) -> bool {
        self.to_i8() < 0
    }

    /// The value that stands for this class where only the class matters: `W(1)`, `W(101)`,
    /// `D`, `L(101)`, `L(1)`. Its [`Value::wdl`] is `self`; it is what a zeroing move into the
    /// opposite class scores ([`crate::table::Metric::zeroing`]).
    #[inline]
    pub const fn as_value(self) -> Value {
        match self {
            Wdl::Win => Value::win(1),
            Wdl::CursedWin => Value::win(101),
            Wdl::Draw => Value::DRAW,
            Wdl::BlessedLoss => Value::loss(101),
            Wdl::Loss => Value::loss(1),
        }
    }
}

impl Neg for Wdl {
    type Output = Wdl;

    #[inline]
    fn neg(self) -> Wdl {
        self.opposite()
    }
}

impl From<Wdl> for i8 {
    #[inline]
    fn from(w: Wdl) -> i8 {
        w.to_i8()
    }
}

/// A DTZ value (SPEC.md §2): plies to the next zeroing move with best play, under the 50-move
/// rule, exact (not rounded as Syzygy's are). Ordered as [`Value`]: better for the side to move
/// is greater.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Dtz(pub Value);

/// A DTW value (SPEC.md §3): plies to the end of the game with best play, the 50-move rule
/// ignored. A win exactly where the WDL is a win or a cursed win. Ordered as [`Value`].
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Dtw(pub Value);

impl Dtz {
    /// The value: `W(n)`, `D` or `L(n)`.
    #[inline]
    pub const fn value(self) -> Value {
        self.0
    }

    /// The WDL class under the 50-move rule.
    #[inline]
    pub const fn wdl(self) -> Wdl {
        self.0.wdl()
    }

    /// Signed plies, as SPEC.md writes DTZ: `+n` for `W(n)`, `−n` for `L(n)`, 0 for a draw
    /// (and for `W(0)`, a side to move that has already won).
    #[inline]
    pub const fn signed(self) -> i32 {
        self.0.signed()
    }
}

impl Dtw {
    /// The value: `W(n)`, `D` or `L(n)`.
    #[inline]
    pub const fn value(self) -> Value {
        self.0
    }

    /// Signed plies, as SPEC.md writes DTW (see [`Dtz::signed`]).
    #[inline]
    pub const fn signed(self) -> i32 {
        self.0.signed()
    }
}

/// Signed plies (`+12`, `-7`), or `draw`.
fn signed_or_draw(v: Value, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if v.is_draw() {
        f.write_str("draw")
    } else {
        write!(f, "{:+}", v.signed())
    }
}

impl fmt::Display for Dtz {
    /// Signed plies (`+12`, `-7`), or `draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        signed_or_draw(self.0, f)
    }
}

impl fmt::Display for Dtw {
    /// Signed plies (`+12`, `-7`), or `draw`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        signed_or_draw(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        for w in Wdl::ALL {
            assert_eq!(Wdl::from_i8(w.to_i8()), Some(w));
            assert_eq!(-(-w), w);
            assert_eq!((-w).to_i8(), -w.to_i8());
            assert_eq!(w.as_value().wdl(), w);
            assert_eq!(Wdl::ALL[w.index()], w);
        }
        assert_eq!(Wdl::from_i8(3), None);
        assert!(Wdl::Loss < Wdl::BlessedLoss && Wdl::CursedWin < Wdl::Win);
        assert!(Wdl::Win.is_win() && Wdl::BlessedLoss.is_loss() && !Wdl::Draw.is_win());
    }

    #[test]
    fn distances() {
        let d = Dtz(Value::loss(120));
        assert_eq!((d.wdl(), d.signed()), (Wdl::BlessedLoss, -120));
        assert!(Dtz(Value::win(3)) > Dtz(Value::win(5)));
        assert!(Dtw(Value::DRAW) > Dtw(Value::loss(2)));
        assert_eq!(Dtz(Value::win(12)).to_string(), "+12");
        assert_eq!(Dtw(Value::loss(7)).to_string(), "-7");
        assert_eq!(Dtw(Value::DRAW).to_string(), "draw");
    }
}
