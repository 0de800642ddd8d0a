//! What a table's WDL solve tells its DTW solve: the WDL class of every slot, two bits per slot
//! and side ([`WdlHint`]).
//!
//! DTW decides exactly the WDL wins and losses (cursed wins and blessed losses included:
//! SPEC.md §2, the 50-move rule decides only *how* a won game is won), so once a table's WDL is
//! solved its DTW solve need not find *which* positions are decided, only *when*:
//! * a draw is a draw at once: no capture search and no baseline from the pawn moves;
//! * only a loss can be a loss: a position that wins is never a loss candidate, whose check
//!   generates every move (without the hint, most candidates are positions that turn out to
//!   win or draw: 3.6 times the losses found in NPvNP, 35 times in KQvRB);
//! * a win needs only its winning zeroing moves: its captures and pawn moves into anything but
//!   the opponent's losses are left out by their class
//!   ([`TableSource::outcome`](super::TableSource::outcome)) before their distance is searched
//!   (the ≤4-piece set: 0.79x the CPU time).
//!
//! The hint only saves work: the solve decides every value by the same rules with or without
//! it, and `antitb verify` checks DTW against WDL independently.

use super::exact::ScratchError;
use super::solve::Solved;
use crate::table::{FRAME, NOT_STORED, TableValues, Value};
use rayon::prelude::*;

/// The WDL class of a slot as the DTW solve uses it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Class {
    /// A win (cursed wins included), or no position.
    Win,
    Draw,
    /// A loss (blessed losses included).
    Loss,
}

/// The WDL class of every slot of one table, by side and index, from its solved WDL or DTZ
/// values (see the module doc).
pub struct WdlHint {
    size: u64,
    /// Per side: a bit per slot, set for draws.
    draw: [Vec<u64>; 2],
    /// Per side: a bit per slot, set for losses.
    loss: [Vec<u64>; 2],
}

impl std::fmt::Debug for WdlHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WdlHint({} slots)", self.size)
    }
}

impl WdlHint {
    /// The classes of a table solved in WDL or DTZ (any metric whose values carry the WDL).
    pub fn of(table: &Solved) -> Result<WdlHint, ScratchError> {
        let size = table.index().size();
        let frames = table.frames();
        let words = (FRAME / 64) as usize;
        let side = |s: usize| -> Result<(Vec<u64>, Vec<u64>), ScratchError> {
            let parts: Vec<(Vec<u64>, Vec<u64>)> = (0..frames)
                .into_par_iter()
                .map_init(Vec::new, |buf, f| {
                    table.frame(s, f, buf)?;
                    let n = buf.len().div_ceil(64);
                    let (mut draw, mut loss) = (vec![0u64; n], vec![0u64; n]);
                    for (i, &x) in buf.iter().enumerate() {
                        match Value::from_code(x & !NOT_STORED) {
                            Some(v) if v == Value::INVALID => {}
                            Some(v) if v.is_draw() => draw[i / 64] |= 1 << (i % 64),
                            Some(v) if v.is_loss() => loss[i / 64] |= 1 << (i % 64),
                            _ => {}
                        }
                    }
                    Ok((draw, loss))
                })
                .collect::<Result<_, ScratchError>>()?;
            let mut draw = Vec::with_capacity(frames * words);
            let mut loss = Vec::with_capacity(frames * words);
            for (d, l) in parts {
                draw.extend(d);
                loss.extend(l);
            }
            Ok((draw, loss))
        };
        let (w, b) = (side(0)?, side(1)?);
        Ok(WdlHint {
            size,
            draw: [w.0, b.0],
            loss: [w.1, b.1],
        })
    }

    /// Slots per side.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes held: two bits per slot and side.
    pub fn bytes(size: u64) -> u64 {
        4 * size.div_ceil(64) * 8
    }

    /// The class of slot `idx` of side `side`.
    #[inline]
    pub fn class(&self, side: usize, idx: u64) -> Class {
        let (w, b) = ((idx / 64) as usize, idx % 64);
        if self.draw[side][w] >> b & 1 != 0 {
            Class::Draw
        } else if self.loss[side][w] >> b & 1 != 0 {
            Class::Loss
        } else {
            Class::Win
        }
    }
}
