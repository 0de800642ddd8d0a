//! A game: a start position plus moves, with threefold repetition.

use super::position::{Move, Outcome, Position};

/// A sequence of positions from a start position. Knows threefold repetition, which a single
/// [`Position`] cannot.
#[derive(Clone, Debug)]
pub struct Game {
    history: Vec<Position>,
}

impl Game {
    pub fn new(start: Position) -> Game {
        Game {
            history: vec![start],
        }
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.history
            .last()
            .expect("a game has at least one position")
    }

    /// Play a legal move.
    pub fn play(&mut self, m: &Move) {
        let next = self.position().after(m);
        self.history.push(next);
    }

    /// How many times the current position (placement, side to move, en passant) has occurred.
    pub fn repetitions(&self) -> usize {
        let cur = self.position();
        self.history
            .iter()
            .rev()
            .take(cur.halfmoves() as usize + 1)
            .filter(|p| {
                p.board() == cur.board()
                    && p.turn() == cur.turn()
                    && p.ep_square() == cur.ep_square()
            })
            .count()
    }

    /// The game's outcome: the position's own outcome, or a draw by threefold repetition.
    pub fn outcome(&self) -> Option<Outcome> {
        self.position()
            .outcome()
            .or_else(|| (self.repetitions() >= 3).then_some(Outcome::Draw))
    }
}
