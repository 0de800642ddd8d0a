//! The capture search (SPEC.md §4): captures are compulsory and every capture leaves the table,
//! so a position whose side to move can capture is valued from the positions its captures
//! reach, recursively, down to quiet positions, whose values are looked up. Tables store quiet
//! positions only; the solver, the prober and the verifier all value the rest with [`resolve`].

use super::{Metric, Value, Wdl};
use crate::rules::{MoveList, Position};

/// The value of any position, resolving captures (en passant included) by search and looking up
/// quiet positions with `lookup` (SPEC.md §4). A side to move without pieces has won: `W(0)`.
/// A side to move whose opponent has no pieces has lost (the opponent has won, SPEC.md §1;
/// such a position is in no table and never arises in play, but a FEN can give it): every move
/// hands the turn to the side without pieces, `L(1)`, or with no legal move it has won, `W(0)`.
pub fn resolve<E>(
    pos: &Position,
    metric: Metric,
    lookup: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    if pos.us().is_empty() {
        return Ok(Value::win(0));
    }
    if pos.them().is_empty() {
        return Ok(if pos.legal_moves().is_empty() {
            Value::win(0)
        } else {
            Value::loss(1)
        });
    }
    if !pos.has_capture() {
        return lookup(pos);
    }
    best_capture(pos, metric, &mut |child: &Position| {
        resolve(child, metric, lookup)
    })
}

/// The best of the captures of `pos`, which has one, each child valued by `child`.
fn best_capture<E>(
    pos: &Position,
    metric: Metric,
    child: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    let mut list = MoveList::new();
    pos.captures(&mut list);
    let mut best: Option<Value> = None;
    for m in list.iter() {
        let v = metric.zeroing(child(&pos.after(m))?);
        best = Some(best.map_or(v, |b| b.max(v)));
    }
    Ok(best.expect("a position with a capture has a capture move"))
}

/// Whether [`resolve`] values `pos` by a capture search: both sides have pieces and the side
/// to move can capture (otherwise it is looked up, or decided by a side without pieces).
#[inline]
pub fn searches_captures(pos: &Position) -> bool {
    !pos.us().is_empty() && !pos.them().is_empty() && pos.has_capture()
}

/// [`resolve`], valuing the positions its captures reach that can capture in turn with
/// `capturing` instead of searching them here (the quiet ones with `lookup`): a caller that
/// keeps such values spares their search each time another capture reaches them.
pub fn resolve_with<E>(
    pos: &Position,
    metric: Metric,
    lookup: &mut impl FnMut(&Position) -> Result<Value, E>,
    capturing: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    if !searches_captures(pos) {
        return resolve(pos, metric, lookup);
    }
    best_capture(pos, metric, &mut |child: &Position| {
        if searches_captures(child) {
            capturing(child)
        } else if child.us().is_empty() || child.them().is_empty() {
            resolve(child, metric, lookup)
        } else {
            lookup(child)
        }
    })
}

/// The DTW of a position by one ply of search (SPEC.md §3): the best of its moves, each child
/// valued with [`resolve`] and `lookup` and taken one ply later; with no legal move the side to
/// move has won, `W(0)`. This is how the side to move a `.dtw` file leaves out is read: every
/// move from it leads to the stored side of the same table, or out of the table by a capture or
/// a promotion.
pub fn dtw_by_search<E>(
    pos: &Position,
    lookup: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    dtw_by_search_among(pos, &mut |_: &Position| Ok(true), lookup)
}

/// The DTW of a decisive position of WDL class `w` on the side to move a `.dtw` file leaves
/// out, by one ply of search with `lookup`: from a loss over every move; from a win only over
/// the moves whose child `is_loss` says is lost for the opponent (a WDL read, cheaper than a
/// DTW one), as only those can be best.
pub fn dtw_of_left_out<E>(
    pos: &Position,
    w: Wdl,
    is_loss: &mut impl FnMut(&Position) -> Result<bool, E>,
    lookup: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    if w.is_loss() {
        dtw_by_search(pos, lookup)
    } else {
        dtw_by_search_among(pos, is_loss, lookup)
    }
}

/// [`dtw_by_search`] over the moves whose child `keep` accepts, so that a caller who knows
/// which moves cannot be best spares their lookups: from a won position, for instance, only
/// the moves into the opponent's losses (a WDL read, cheaper than a DTW one). `keep` must
/// accept the best move; with no legal move the side to move has won, `W(0)`.
pub fn dtw_by_search_among<E>(
    pos: &Position,
    keep: &mut impl FnMut(&Position) -> Result<bool, E>,
    lookup: &mut impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Value, E> {
    let mut best: Option<Value> = None;
    for m in pos.legal_moves().iter() {
        let child = pos.after(m);
        if !keep(&child)? {
            continue;
        }
        let v = resolve(&child, Metric::Dtw, lookup)?.after_move();
        best = Some(best.map_or(v, |b| b.max(v)));
    }
    Ok(best.unwrap_or(Value::win(0)))
}

/// The DTZ of a quiet position when it is one of the short values `.dtz` files leave out,
/// `W(0)`, `W(1)`, `W(2)` or `L(1)` (SPEC.md §2), found by at most two plies of search with WDL
/// lookups; `None` when it is none of them. `w` is the position's WDL, `stored` the distance
/// its slot holds: exact if the value is not short, a neighbour's filler otherwise, which spares
/// a search (a stored win of at most 2 plies, or a stored `L(1)`, can only be a filler). `wdl`
/// gives the WDL of any position from its side to move's view, captures resolved (for instance
/// [`resolve`] in [`Metric::Wdl`]). This is how the Syzygy probers resolve their "threat"
/// positions, extended to exact plies.
///
/// - `W(0)`: no legal move (stalemated, which wins).
/// - `W(1)`: a zeroing move (a pawn move: the position is quiet) into a loss for the opponent.
/// - `W(2)`: neither, and a non-zeroing move to a position valued `L(1)`.
/// - `L(1)`: every move loses at once: a zeroing move into a win for the opponent, or a quiet
///   move that leaves the opponent without a legal move.
pub fn short_dtz<E>(
    pos: &Position,
    w: Wdl,
    stored: u16,
    wdl: &mut impl FnMut(&Position) -> Result<Wdl, E>,
) -> Result<Option<Value>, E> {
    match w {
        Wdl::Win => {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return Ok(Some(Value::win(0)));
            }
            for m in moves.iter().filter(|m| m.is_zeroing()) {
                if wdl(&pos.after(m))? == Wdl::Loss {
                    return Ok(Some(Value::win(1)));
                }
            }
            if stored <= 2 {
                return Ok(Some(Value::win(2)));
            }
            for m in moves.iter().filter(|m| !m.is_zeroing()) {
                if loses_in_one(&pos.after(m), wdl)? {
                    return Ok(Some(Value::win(2)));
                }
            }
            Ok(None)
        }
        Wdl::Loss if stored == 1 || loses_in_one(pos, wdl)? => Ok(Some(Value::loss(1))),
        _ => Ok(None),
    }
}

/// Is a position valued `L(1)`: it has a legal move, and every one loses at once (SPEC.md §2)?
/// A zeroing move loses at once into a win for the opponent (scored by WDL), a quiet move when
/// it leaves the opponent without a legal move (stalemated, which wins).
fn loses_in_one<E>(
    pos: &Position,
    wdl: &mut impl FnMut(&Position) -> Result<Wdl, E>,
) -> Result<bool, E> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return Ok(false);
    }
    // Quiet moves first: they rarely stalemate, and need no lookup to tell.
    if !moves.iter().filter(|m| !m.is_zeroing()).all(|m| {
        let child = pos.after(m);
        !child.has_capture() && !child.has_quiet_move()
    }) {
        return Ok(false);
    }
    for m in moves.iter().filter(|m| m.is_zeroing()) {
        if wdl(&pos.after(m))? != Wdl::Win {
            return Ok(false);
        }
    }
    Ok(true)
}
