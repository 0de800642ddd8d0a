//! The root search on several threads: helper threads run the same df-pn from the root over the
//! main thread's transposition table, each steering away from defender's replies another thread
//! is in (virtual disproof numbers, [`super::dfpn::select`]), so what one thread solves the
//! others read from the table. The main thread keeps the budget and the progress; when its search
//! returns or a helper solves the root, the helpers stop and the main thread reads the root's
//! result with a search of its own (from the table, usually at once). Everything after the root
//! search (proof extraction, the disproof certificate) runs on the main thread alone and trusts
//! the table no more than before, so the decided answer does not depend on the thread count
//! (the proof may).

use super::dfpn::{Budget, Numbers, Searcher, Shared};
use super::tt::Tt;
use super::{Options, Oracle, Progress, ProveError, STACK_BYTES};
use crate::rules::{Color, Position};
use std::sync::atomic::Ordering;

/// What a helper counted.
#[derive(Default)]
struct Counts {
    nodes: u64,
    evaluated: u64,
    probes: u64,
}

/// Search the root (set on `s` by [`Searcher::set_root`]) on `threads` threads until it is solved
/// or the budget ends; the helpers' counts are added to `s`'s.
pub(super) fn search_root<'a>(
    s: &mut Searcher<'a>,
    shared: &'a Shared,
    root: &Position,
    history: &[Position],
    threads: usize,
) -> Result<Numbers, ProveError> {
    if threads <= 1 {
        return s.search_root(root);
    }
    shared.reset();
    let (tt, oracle, opts) = s.parts();
    let prover = s.prover;
    let (n, counts, error) = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut error = None;
        for lane in 1..threads {
            let spawned = std::thread::Builder::new()
                .name(format!("antitb-prove-{lane}"))
                .stack_size(STACK_BYTES)
                .spawn_scoped(scope, move || {
                    helper(tt, lane, oracle, opts, shared, root, history, prover)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    error = Some(ProveError::Thread(e.to_string()));
                    break;
                }
            }
        }
        let n = if error.is_none() {
            s.shared = Some(shared);
            let n = s.search_root(root);
            s.shared = None;
            Some(n)
        } else {
            None
        };
        shared.stop.store(true, Ordering::Relaxed);
        let mut counts = Counts::default();
        for h in handles {
            match h.join() {
                Ok(Ok(c)) => {
                    counts.nodes += c.nodes;
                    counts.evaluated += c.evaluated;
                    counts.probes += c.probes;
                }
                Ok(Err(e)) => error = error.or(Some(e)),
                Err(_) => {
                    error = error.or(Some(ProveError::Thread("a helper panicked".to_string())))
                }
            }
        }
        (n, counts, error)
    });
    s.nodes += counts.nodes;
    s.evaluated += counts.evaluated;
    s.probes += counts.probes;
    if let Some(e) = error {
        return Err(e);
    }
    let n = n.expect("the main thread searched")?;
    // The main thread may have stopped because a helper solved the root, not for the budget:
    // what follows (the extraction, the certificate, the search for a loss) must not take that
    // for a spent budget. The budget is looked at again at the next node.
    s.aborted = false;
    s.recheck_budget();
    if n.is_solved() {
        return Ok(n);
    }
    // A helper solved the root (or the budget ran out): read what the table holds, searching on
    // where it was overwritten, within what is left of the budget.
    s.search_root(root)
}

/// One helper thread: the root search until it is solved or the main thread stops it.
#[allow(clippy::too_many_arguments)]
fn helper(
    tt: &Tt,
    lane: usize,
    oracle: &dyn Oracle,
    opts: &Options,
    shared: &Shared,
    root: &Position,
    history: &[Position],
    prover: Color,
) -> Result<Counts, ProveError> {
    let mut quiet = |_: &Progress| {};
    let mut h = Searcher::new(tt, lane, oracle, opts, &mut quiet);
    h.shared = Some(shared);
    h.budget = Budget {
        max_nodes: u64::MAX,
        deadline: None,
    };
    h.set_root(root, history, prover);
    let n = h.search_root(root);
    if n.as_ref().map_or(true, |n| n.is_solved()) {
        // Solved (or failed): the main thread need not search on.
        shared.root_done.store(true, Ordering::Relaxed);
    }
    n?;
    Ok(Counts {
        nodes: h.nodes,
        evaluated: h.evaluated,
        probes: h.probes,
    })
}
