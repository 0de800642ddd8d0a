//! The whole of [`super::prove`] on the search thread: the win search, its proof or its
//! certified disproof, then the search for a loss.

use super::certify::{Certificate, certify};
use super::dfpn::{Leaf, Numbers, Searcher, Shared};
use super::extract::{Extracted, extract};
use super::parallel;
use super::proof::{Proof, Step};
use super::solved;
use super::tt::Tt;
use super::{Answer, MoveStatus, Options, Oracle, Progress, ProveError, Report};
use crate::rules::{Move, Position};

/// Searches of the root after a disproof that did not certify.
const MAX_ROUNDS: u32 = 100;

/// The root moves as the search saw them, followed by those it never generated.
fn with_unseen(root: &Position, seen: &[(Move, MoveStatus)]) -> Vec<(Move, MoveStatus)> {
    let mut out = seen.to_vec();
    if !seen.is_empty() {
        for m in root.legal_moves().iter() {
            if !seen.iter().any(|(s, _)| s == m) {
                out.push((*m, MoveStatus::Unseen));
            }
        }
    }
    out
}

/// What the driver has found, before the searcher's counters are added.
struct Outcome {
    answer: Answer,
    proof: Option<Proof>,
    disproof_size: Option<usize>,
    note: Option<String>,
}

impl Outcome {
    fn new(answer: Answer) -> Outcome {
        Outcome {
            answer,
            proof: None,
            disproof_size: None,
            note: None,
        }
    }

    fn with_proof(self, proof: Proof) -> Outcome {
        Outcome {
            proof: Some(proof),
            ..self
        }
    }

    /// An extracted proof, with a note of the proofs it took from the library.
    fn with_extracted(self, x: Extracted) -> Outcome {
        let out = self.with_proof(x.proof);
        match x.grafted {
            0 => out,
            n => out.with_note(&format!(
                "the proof takes {n} proof{} whole from the proof library",
                if n == 1 { "" } else { "s" }
            )),
        }
    }

    fn with_note(self, note: &str) -> Outcome {
        Outcome {
            note: Some(note.to_string()),
            ..self
        }
    }
}

pub(super) fn run(
    root: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Report, ProveError> {
    let threads = opts.threads.max(1);
    let tt = Tt::with_bytes(opts.memory, threads).map_err(ProveError::Memory)?;
    let mut notes = Vec::new();
    let mut solved_loaded = 0;
    if let Some(path) = &opts.solved {
        match solved::load(path, &tt, 0) {
            Ok(n) => solved_loaded = n,
            Err(e) => notes.push(format!("solved positions not loaded: {e}")),
        }
    }
    let shared = Shared::new();
    let mut s = Searcher::new(&tt, 0, oracle, opts, progress);
    let outcome = decide(&mut s, &shared, root, history, opts)?;
    notes.extend(outcome.note);
    let mut solved_saved = s.solved_saved;
    if let Some(path) = &opts.solved {
        match solved::save(path, &tt) {
            Ok(n) => solved_saved = Some(n),
            Err(e) => notes.push(format!("solved positions not saved: {e}")),
        }
    }
    Ok(Report {
        answer: outcome.answer,
        proof: outcome.proof,
        disproof_size: outcome.disproof_size,
        nodes: s.nodes,
        evaluated: s.evaluated,
        probes: s.probes,
        time: s.elapsed(),
        root_moves: with_unseen(root, &s.root_moves),
        root_pn: s.root_numbers.pn,
        root_dn: s.root_numbers.dn,
        tt_used: s.tt.used(),
        tt_capacity: s.tt.capacity(),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        solved_loaded,
        solved_saved,
    })
}

fn decide<'a>(
    s: &mut Searcher<'a>,
    shared: &'a Shared,
    root: &Position,
    history: &[Position],
    opts: &Options,
) -> Result<Outcome, ProveError> {
    let stm = root.turn();
    s.set_root(root, history, stm);

    // The root itself may be a leaf.
    match s.leaf(root)? {
        Leaf::Won(w) => {
            let step = w.map_or(Step::End, Step::Table);
            let proof = Proof::new(*root, stm, vec![step], 0);
            return Ok(Outcome::new(Answer::Win).with_proof(proof));
        }
        Leaf::Failed => {
            // Decided by a table or the bishops rule: is it a loss?
            s.set_root(root, history, !stm);
            return Ok(match s.leaf(root)? {
                Leaf::Won(w) => {
                    let step = w.map_or(Step::End, Step::Table);
                    let proof = Proof::new(*root, !stm, vec![step], 0);
                    Outcome::new(Answer::Loss).with_proof(proof)
                }
                _ => Outcome {
                    disproof_size: Some(1),
                    ..Outcome::new(Answer::NotAWin)
                },
            });
        }
        Leaf::Open(_) => {}
    }

    // Search; a disproof that does not certify had trusted a repetition on another path: drop
    // the positions it could not keep and search again (each round the table's proofs, which
    // the failed certificate ran into, win more positions back).
    let mut round = 0;
    let certified = loop {
        let n = parallel::search_root(s, shared, root, history, opts.threads)?;
        if n.pn == 0 {
            return Ok(match extract(s, root, history)? {
                Ok(x) => Outcome::new(Answer::Win).with_extracted(x),
                Err(why) => Outcome::new(Answer::Unknown)
                    .with_note(&format!("the search found a win but {why}")),
            });
        }
        if n.dn != 0 {
            return Ok(Outcome::new(Answer::Unknown));
        }
        match certify(s, root, history)? {
            Certificate::Holds(size) => break size,
            Certificate::Broken(dropped) => {
                round += 1;
                if s.aborted || dropped.is_empty() || round > MAX_ROUNDS {
                    return Ok(Outcome::new(Answer::Unknown)
                        .with_note("the search found no win, but its disproof did not certify"));
                }
                for k in dropped {
                    s.forget(k);
                }
            }
        }
    };
    let mut outcome = Outcome {
        disproof_size: Some(certified),
        ..Outcome::new(Answer::NotAWin)
    };
    // Not a win. Does every move lose? (The report keeps the win search's view of the root.)
    if opts.try_loss && !s.aborted {
        let win_moves = std::mem::take(&mut s.root_moves);
        let win_numbers: Numbers = s.root_numbers;
        s.set_root(root, history, !stm);
        let n = parallel::search_root(s, shared, root, history, opts.threads)?;
        if n.pn == 0 {
            outcome = match extract(s, root, history)? {
                Ok(x) => Outcome {
                    answer: Answer::Loss,
                    ..outcome
                }
                .with_extracted(x),
                Err(why) => outcome.with_note(&format!("a loss was found but {why}")),
            };
        } else if n.dn != 0 {
            outcome = outcome.with_note("the budget ran out while checking for a loss");
        }
        s.root_moves = win_moves;
        s.root_numbers = win_numbers;
    }
    Ok(outcome)
}
