//! The capture search (SPEC.md §4): captures are compulsory and every capture leaves the table,
//! so a position whose side to move can capture is valued from the positions its captures
//! reach, recursively, down to quiet positions, whose values are looked up. Tables store quiet
//! positions only; the solver, the prober and the verifier all value the rest with [`resolve`].

use super::{Metric, Value};
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
    let mut list = MoveList::new();
    pos.captures(&mut list);
    let mut best: Option<Value> = None;
    for m in list.iter() {
        let child = pos.after(m);
        let v = metric.zeroing(resolve(&child, metric, lookup)?);
        best = Some(best.map_or(v, |b| b.max(v)));
    }
    Ok(best.expect("a position with a capture has a capture move"))
}
