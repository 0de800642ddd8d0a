//! The answers, field by field as lichess' tablebase server (lila-tablebase) gives them, and its
//! rules for categories and for ordering moves.
//!
//! A position's `category` says who wins under the 50-move rule, taking the halfmove clock of
//! the FEN into account: the side to move wins (`win`) if its DTZ plus the plies already played
//! since the last capture or pawn move is at most 100; a longer win is a `cursed-win` (drawn
//! under the rule), and so on (SPEC.md §2). Once the clock of the position *before* a move has
//! reached 100, every decisive result is cursed or blessed. A position whose value is not known
//! (more pieces than the tables hold, or a missing table) is `unknown`. The root position's
//! category is the negation of its best move's, which makes it right whatever the clock.
//!
//! `dtz` and `precise_dtz` are both antitb's exact DTZ (lila gives `precise_dtz` only where the
//! Syzygy value is not rounded); `dtw` is antitb's DTW (plies to the end of the game, 50-move
//! rule ignored; 0 for a draw, as lila gives it) where a `.dtw` file exists; `dtm` and `dtc`
//! are always null.

use serde::Serialize;

/// lila's categories, in its order from worst to best for the side to move, with an unknown
/// value placed just above a loss (a pessimistic guess when moves are sorted).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Loss,
    Unknown,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Category {
    /// The category of a position whose side to move has the signed distance `dtz` (exact
    /// DTZ) and has played `halfmoves` plies since the last zeroing move.
    pub fn from_dtz(dtz: i32, halfmoves: u32) -> Category {
        let plies = dtz.unsigned_abs().saturating_add(halfmoves);
        match dtz.signum() {
            0 => Category::Draw,
            1 if plies <= 100 => Category::Win,
            1 => Category::CursedWin,
            _ if plies <= 100 => Category::Loss,
            _ => Category::BlessedLoss,
        }
    }

    /// The category from the other side's view.
    pub fn negate(self) -> Category {
        match self {
            Category::Loss => Category::Win,
            Category::BlessedLoss => Category::CursedWin,
            Category::Draw => Category::Draw,
            Category::Unknown => Category::Unknown,
            Category::CursedWin => Category::BlessedLoss,
            Category::Win => Category::Loss,
        }
    }

    /// A win or a cursed win.
    pub fn is_positive(self) -> bool {
        matches!(self, Category::CursedWin | Category::Win)
    }
}

/// What is known about one position.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PositionInfo {
    /// Always false: antichess has no check.
    pub checkmate: bool,
    /// The side to move has pieces but no legal move (and so has won).
    pub stalemate: bool,
    /// The side to move has won: it has no pieces, or no legal move.
    pub variant_win: bool,
    /// Always false: in antichess the game only ends in a win for the side to move.
    pub variant_loss: bool,
    /// Only bishops, White's and Black's on squares of different colours: a draw.
    pub insufficient_material: bool,
    pub dtz: Option<i32>,
    pub precise_dtz: Option<i32>,
    pub dtm: Option<i32>,
    pub dtw: Option<i32>,
    pub dtc: Option<i32>,
    pub category: Category,
}

impl PositionInfo {
    /// The flags of a position, its values, and the clocks that decide its category:
    /// `halfmoves` of the position itself and `halfmoves_before` of the position before it.
    pub fn new(
        flags: Flags,
        dtz: Option<i32>,
        dtw: Option<i32>,
        halfmoves: u32,
        halfmoves_before: u32,
    ) -> PositionInfo {
        let category = if !flags.variant_win
            && (flags.stalemate || flags.insufficient_material || dtz == Some(0))
        {
            Category::Draw
        } else if flags.variant_win {
            if halfmoves_before < 100 {
                Category::Win
            } else {
                Category::CursedWin
            }
        } else {
            match dtz {
                None => Category::Unknown,
                Some(d) if halfmoves_before < 100 => Category::from_dtz(d, halfmoves),
                Some(d) if d < 0 => Category::BlessedLoss,
                Some(_) => Category::CursedWin,
            }
        };
        PositionInfo {
            checkmate: false,
            stalemate: flags.stalemate,
            variant_win: flags.variant_win,
            variant_loss: false,
            insufficient_material: flags.insufficient_material,
            dtz,
            precise_dtz: dtz,
            dtm: None,
            dtw,
            dtc: None,
            category,
        }
    }
}

/// The game-state flags of a position.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub stalemate: bool,
    pub variant_win: bool,
    pub insufficient_material: bool,
}

/// One legal move and the position it leads to (values from the point of view of the side to
/// move there).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MoveInfo {
    pub uci: String,
    /// SAN with `#` when the move ends the game.
    pub san: String,
    /// A capture or a pawn move.
    pub zeroing: bool,
    /// A capture or a promotion.
    pub conversion: bool,
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// Rank of the captured piece for ordering (pawn 1 … king 6), 0 for none.
    #[serde(skip)]
    pub capture_rank: u8,
    /// Rank of the promotion piece for ordering, 0 for none.
    #[serde(skip)]
    pub promotion_rank: u8,
}

/// lila's sort key for moves: best move first.
type SortKey = (
    Category,
    (bool, bool, bool),
    (bool, bool),
    (u8, i32),
    bool,
    (bool, u8, i32),
    (u8, u8),
);

impl MoveInfo {
    /// Ascending order is lila's: the worst category for the opponent first; then moves that
    /// end the game (a loss for the opponent before a win); then the DTW that shortens a win
    /// and lengthens a loss; then conversions and zeroing moves first when they win (last when
    /// they lose); then the higher DTZ (the quicker win, the slower loss); then captures and
    /// promotions of higher pieces.
    pub fn sort_key(&self) -> SortKey {
        let p = &self.pos;
        let losing = !p.category.is_positive();
        (
            p.category,
            (!p.checkmate, !p.variant_loss, p.variant_win),
            (!p.stalemate, !p.insufficient_material),
            tightening(p.dtm.or(p.dtw)),
            self.conversion ^ losing,
            (
                self.zeroing ^ losing,
                u8::from(p.dtz.is_some()),
                p.dtz.map_or(0, |d| -d),
            ),
            (6 - self.capture_rank, 6 - self.promotion_rank),
        )
    }
}

/// Order of a distance to the end of the game: negative values first, the one nearest zero
/// first; then none (or zero); then positive values, the largest first.
fn tightening(metric: Option<i32>) -> (u8, i32) {
    match metric {
        Some(m) if m < 0 => (0, -m),
        Some(m) if m > 0 => (2, -m),
        _ => (1, 0),
    }
}

/// `GET /antichess`: the position and every legal move, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TablebaseResponse {
    #[serde(flatten)]
    pub pos: PositionInfo,
    pub moves: Vec<MoveInfo>,
}

/// One move of a main line and the DTZ of the position after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MainlineStep {
    pub uci: String,
    pub san: String,
    pub dtz: i32,
    pub precise_dtz: Option<i32>,
    /// Only with `by=dtw` (antitb's extension): the DTW of the position after the move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw: Option<i32>,
}

/// `GET /antichess/mainline`: a line of best moves, who wins at its end, and the root's DTZ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MainlineResponse {
    pub mainline: Vec<MainlineStep>,
    /// `w` or `b` if the line ends the game, else null.
    pub winner: Option<char>,
    pub dtz: i32,
    pub precise_dtz: Option<i32>,
    /// Only with `by=dtw`: the root's DTW.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtw: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tightening_order() {
        let mut v = [Some(1), Some(-2), None, Some(2), Some(0), Some(-1)];
        v.sort_by_key(|m| tightening(*m));
        assert_eq!(v, [Some(-1), Some(-2), None, Some(0), Some(2), Some(1)]);
    }

    #[test]
    fn categories_with_the_clock() {
        assert_eq!(Category::from_dtz(100, 0), Category::Win);
        assert_eq!(Category::from_dtz(98, 3), Category::CursedWin);
        assert_eq!(Category::from_dtz(-60, 41), Category::BlessedLoss);
        assert_eq!(Category::from_dtz(-60, 40), Category::Loss);
        assert_eq!(Category::from_dtz(0, 99), Category::Draw);
        let info = |dtz, hm, before| PositionInfo::new(Flags::default(), dtz, None, hm, before);
        assert_eq!(info(Some(3), 1, 100).category, Category::CursedWin);
        assert_eq!(info(Some(-3), 1, 100).category, Category::BlessedLoss);
        assert_eq!(info(None, 0, 0).category, Category::Unknown);
        let won = Flags {
            variant_win: true,
            ..Flags::default()
        };
        assert_eq!(
            PositionInfo::new(won, Some(0), None, 0, 0).category,
            Category::Win
        );
    }
}
