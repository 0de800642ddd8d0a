//! A whole line: every reply of the side to move proven one after the other ([`prove_line`]),
//! and the proofs of the replies merged into one proof of the line.
//!
//! The root is a position whose side to move is the *defender* (Black after 1.e3). Each legal
//! reply is searched on its own with [`super::prove`] (its own budget and transposition table),
//! so a report names the reply that resists and how much each one cost. When every reply is a
//! win for the opponent, their proofs become one: an AND root listing every reply, with the
//! positions the replies' proofs share written once (FORMAT.md: one node per position).

use super::library::{ProofLibrary, Stored};
use super::proof::{Proof, Step};
use super::{Answer, Options, Oracle, Progress, ProveError, Report};
use crate::rules::{Color, Move, Position};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// One reply of the line and what the prover found after it (its [`Report`] is about the side to
/// move after the reply, the line's opponent).
#[derive(Clone, Debug)]
pub struct Reply {
    pub mv: Move,
    /// `None` when the search stopped (Ctrl-C) before this reply was searched.
    pub report: Option<Report>,
    /// The proof came from the proof library (no search).
    pub from_library: bool,
    /// A library file of this position that could not be used (it was proven again).
    pub library_rejected: Option<String>,
}

impl Reply {
    /// The opponent wins after this reply.
    pub fn loses(&self) -> bool {
        self.report
            .as_ref()
            .is_some_and(|r| r.answer == Answer::Win)
    }

    /// The side to move of the line wins with this reply.
    pub fn wins(&self) -> bool {
        self.report
            .as_ref()
            .is_some_and(|r| r.answer == Answer::Loss)
    }
}

/// The result of [`prove_line`].
#[derive(Clone, Debug)]
pub struct LineReport {
    /// About the side to move of the root: [`Answer::Loss`] when every reply loses (the proof is
    /// the merged proof of the opponent's win), [`Answer::Win`] when a reply wins (the proof plays
    /// it), [`Answer::NotAWin`] when no reply is lost or won yet but the opponent cannot force a
    /// win after one of them, else [`Answer::Unknown`].
    pub answer: Answer,
    pub proof: Option<Proof>,
    /// Every legal reply, in move generation order.
    pub replies: Vec<Reply>,
    /// Nodes of the replies' proofs that the merged proof shares instead of repeating.
    pub shared_nodes: usize,
    pub time: Duration,
}

/// Prove every legal move of `root`'s side to move, one after the other, each with the budget of
/// `opts` (nodes, time and memory apply per reply; [`Options::stop`] ends the whole line).
/// `history` is as for [`super::prove`]; each reply's search also treats a return to `root` as
/// a repetition. `progress` gets the reply being searched with each progress report.
///
/// With a `library`, a move whose position has a proof there is not searched, and each proof
/// found is added as soon as its move is done.
///
/// A root whose side to move has no legal move has already won: the report has no replies and
/// the answer [`Answer::Win`] without a proof (there is no line to prove).
pub fn prove_line(
    root: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
    library: Option<&ProofLibrary>,
    progress: &mut (dyn FnMut(Move, &Progress) + Send),
) -> Result<LineReport, ProveError> {
    let start = Instant::now();
    let mut replies = Vec::new();
    for &mv in root.legal_moves().iter() {
        let child = root.after(&mv);
        let child_history: Vec<Position> = if mv.is_zeroing() {
            Vec::new()
        } else {
            history.iter().copied().chain([*root]).collect()
        };
        let found = prove_stored(&child, &child_history, oracle, opts, library, &mut |p| {
            progress(mv, p)
        })?;
        replies.push(Reply {
            mv,
            report: found.report,
            from_library: found.from_library,
            library_rejected: found.library_rejected,
        });
    }
    let mut out = LineReport {
        answer: Answer::Unknown,
        proof: None,
        replies,
        shared_nodes: 0,
        time: Duration::ZERO,
    };
    if out.replies.is_empty() {
        out.answer = Answer::Win;
    } else if let Some(r) = out.replies.iter().find(|r| r.wins()) {
        // The reply's proof (the line's side to move wins from the position after it), under
        // an OR root playing it.
        if let Some(p) = r.report.as_ref().and_then(|rep| rep.proof.as_ref()) {
            let mut steps = p.steps.clone();
            steps.push(Step::Or(r.mv, p.root_id));
            let root_id = (steps.len() - 1) as u32;
            out.proof = Some(Proof::new(*root, root.turn(), steps, root_id));
            out.answer = Answer::Win;
        }
    } else if out.replies.iter().all(Reply::loses) {
        let proofs: Vec<(Move, &Proof)> = out
            .replies
            .iter()
            .filter_map(|r| Some((r.mv, r.report.as_ref()?.proof.as_ref()?)))
            .collect();
        if proofs.len() == out.replies.len()
            && let Some((proof, shared)) = merge(root, !root.turn(), &proofs)
        {
            out.answer = Answer::Loss;
            out.proof = Some(proof);
            out.shared_nodes = shared;
        }
    } else if out.replies.iter().any(|r| {
        r.report
            .as_ref()
            .is_some_and(|rep| rep.answer == Answer::NotAWin)
    }) {
        out.answer = Answer::NotAWin;
    }
    out.time = start.elapsed();
    Ok(out)
}

/// What [`prove_stored`] found: a report, and how the library served.
#[derive(Clone, Debug)]
pub struct Found {
    /// `None` when the search was stopped ([`Options::stop`]) before it began.
    pub report: Option<Report>,
    /// The proof came from the library (no search).
    pub from_library: bool,
    /// A library file of this position that could not be used (the position was searched).
    pub library_rejected: Option<String>,
}

/// [`super::prove`] through a proof `library`: a position whose proof is stored there (and
/// passes the checker) is not searched; a proof found by the search is added to it at once.
/// Without a library this is [`super::prove`].
pub fn prove_stored(
    pos: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
    library: Option<&ProofLibrary>,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Found, ProveError> {
    let mut found = Found {
        report: None,
        from_library: false,
        library_rejected: None,
    };
    match library.map(|l| l.get(pos, oracle)) {
        Some(Stored::Proof(proof)) => {
            found.report = Some(Report::from_library(pos, proof));
            found.from_library = true;
            return Ok(found);
        }
        Some(Stored::Rejected(why)) => found.library_rejected = Some(why),
        Some(Stored::Absent) | None => {}
    }
    if opts
        .stop
        .as_ref()
        .is_some_and(|s| s.load(Ordering::Relaxed))
    {
        return Ok(found);
    }
    let report = super::prove(pos, history, oracle, opts, progress)?;
    if let (Some(lib), Some(proof)) = (library, &report.proof) {
        let comment = format!(
            "{} for the side to move; found by antitb prove in {:.3} s, {} nodes",
            report.answer.text(),
            report.time.as_secs_f64(),
            report.nodes
        );
        lib.put(proof, &comment).map_err(ProveError::Library)?;
    }
    found.report = Some(report);
    Ok(found)
}

/// Merge proofs that `winner` wins after each move of `root` into one proof whose root is an AND
/// node over those moves (the last step). A position that several proofs reach is written once:
/// the first proof's subgraph serves every later one. Returns the proof and the number of nodes
/// of the inputs that were shared instead of copied; `None` if a proof passes through `root`
/// itself (the searches treat a return to the root as a repetition, so none should).
///
/// Acyclic by construction: a node is copied only after its children (post-order), and a
/// position met again is replaced by the copy already made, whose descendants are all earlier
/// copies; so no copy can lead back to a node still being copied.
fn merge(root: &Position, winner: Color, proofs: &[(Move, &Proof)]) -> Option<(Proof, usize)> {
    const UNSET: u32 = u32::MAX;
    let mut steps: Vec<Step> = Vec::new();
    // The root is written last; meeting it inside a reply's proof would make a cycle.
    let mut ids: HashMap<Position, u32> = HashMap::from([(root.without_counters(), UNSET)]);
    let mut children = Vec::with_capacity(proofs.len());
    for &(mv, proof) in proofs {
        debug_assert_eq!(proof.prover, winner);
        // local[node]: the merged id of the reply proof's node.
        let mut local = vec![UNSET; proof.steps.len()];
        let mut stack = vec![(proof.root_id, root.after(&mv), false)];
        while let Some((node, pos, expanded)) = stack.pop() {
            if local[node as usize] != UNSET {
                continue;
            }
            let key = pos.without_counters();
            if !expanded {
                if let Some(&id) = ids.get(&key) {
                    if id == UNSET {
                        return None;
                    }
                    local[node as usize] = id;
                    continue;
                }
                stack.push((node, pos, true));
                match &proof.steps[node as usize] {
                    Step::Or(m, c) => stack.push((*c, pos.after(m), false)),
                    Step::And(r) => stack.extend(r.iter().map(|(m, c)| (*c, pos.after(m), false))),
                    Step::End | Step::Table(_) => {}
                }
                continue;
            }
            let step = match &proof.steps[node as usize] {
                Step::Or(m, c) => Step::Or(*m, local[*c as usize]),
                Step::And(r) => {
                    Step::And(r.iter().map(|(m, c)| (*m, local[*c as usize])).collect())
                }
                s => s.clone(),
            };
            let id = steps.len() as u32;
            steps.push(step);
            ids.insert(key, id);
            local[node as usize] = id;
        }
        children.push((mv, local[proof.root_id as usize]));
    }
    let shared = proofs.iter().map(|(_, p)| p.size()).sum::<usize>() - steps.len();
    let root_id = steps.len() as u32;
    steps.push(Step::And(children));
    Some((Proof::new(*root, winner, steps, root_id), shared))
}
