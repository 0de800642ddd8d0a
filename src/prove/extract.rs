//! Proof extraction: turn the table's claim that the root is proved into an acyclic [`Proof`],
//! one node per position, depth first, never entering a position of the extraction path (or of
//! the game history). At OR nodes it follows the move that first proved the node (kept apart
//! from the entries, [`super::tt::Tt::record_proof`]), then the table's best move, then any that
//! looks proved. Where the proof so found went through a position of the path, or was
//! overwritten, the node is searched again with the extraction path as history. A position with a
//! proof in the proof library ([`super::Options::library`]) takes that proof whole (checked by the
//! library first), unless it passes through a position of the extraction path: so a line proven
//! reply by reply (`prove --all --library`) serves the positions above it.

use super::ProveError;
use super::dfpn::{Leaf, Searcher};
use super::hash;
use super::library::{ProofLibrary, Stored};
use super::proof::{Proof, Step};
use super::tt::NO_MOVE;
use crate::rules::Position;
use std::collections::{HashMap, HashSet};

/// Nodes the re-searches of one extraction may expand together, at least: beyond it, as many as
/// the search expanded before the extraction. (A count of 64 re-searches was the limit before;
/// measured on 1.e3 b5 2.Bxb5 h6 at 16 and 32 MB and on 1.e3 f6 at 3 GB after 4.2e8 nodes, the
/// root proved but no proof came out; with re-searches bounded by nodes alone the 16 and 32 MB
/// runs extract with 0.2 % more nodes.) A search that starts from a store of solved positions
/// (`solved.rs`) may prove its root in a few nodes and leave the extraction to rebuild what the
/// table could not hold, hence a floor well above a small search.
const MIN_RESEARCH_NODES: u64 = 10_000_000;

/// One proof extraction.
struct Extraction<'s, 'a> {
    searcher: &'s mut Searcher<'a>,
    steps: Vec<Step>,
    /// Finished nodes by position key.
    done: HashMap<u64, u32>,
    /// Positions on the extraction path (and the game history): never re-entered.
    on_path: HashSet<u64>,
    /// Nodes the re-searches may still expand.
    research_nodes: u64,
    /// Re-searches run so far.
    researches: u64,
    /// The proof library of [`super::Options::library`] and the keys of its positions.
    library: Option<(ProofLibrary, HashSet<u64>)>,
    /// Proofs taken whole from the library.
    grafted: u64,
}

/// An extracted proof.
pub(super) struct Extracted {
    pub proof: Proof,
    /// Proofs taken whole from the proof library.
    pub grafted: u64,
}

/// Extract an acyclic proof for `searcher.prover` from `root` (at the top of the searcher's
/// path), or say why the search's claim could not be turned into one.
pub(super) fn extract(
    searcher: &mut Searcher,
    root: &Position,
    history: &[Position],
) -> Result<Result<Extracted, String>, ProveError> {
    let prover = searcher.prover;
    let research_nodes = searcher.nodes.max(MIN_RESEARCH_NODES);
    let library = searcher.parts().2.library.as_deref().and_then(|dir| {
        let lib = ProofLibrary::open(dir).ok()?;
        let keys = lib.keys();
        Some((lib, keys))
    });
    let mut x = Extraction {
        searcher,
        steps: Vec::new(),
        done: HashMap::new(),
        on_path: history.iter().map(hash::key).collect(),
        research_nodes,
        researches: 0,
        library,
        grafted: 0,
    };
    let start = x.searcher.nodes;
    Ok(match x.node(root, hash::key(root))? {
        Some(id) => Ok(Extracted {
            proof: Proof::new(*root, prover, x.steps, id),
            grafted: x.grafted,
        }),
        None => Err(format!(
            "no acyclic proof could be extracted ({} re-searches, {} nodes)",
            x.researches,
            x.searcher.nodes - start
        )),
    })
}

impl Extraction<'_, '_> {
    /// The proof node of `pos`, extracted if new.
    fn node(&mut self, pos: &Position, key: u64) -> Result<Option<u32>, ProveError> {
        if let Some(&id) = self.done.get(&key) {
            return Ok(Some(id));
        }
        if let Some(id) = self.library_proof(pos, key) {
            return Ok(Some(id));
        }
        let step = match self.searcher.leaf(pos)? {
            Leaf::Won(None) => Step::End,
            Leaf::Won(Some(w)) => Step::Table(w),
            Leaf::Failed => return Ok(None),
            Leaf::Open(_) => {
                self.on_path.insert(key);
                let s = if pos.turn() == self.searcher.prover {
                    self.or_node(pos, key)
                } else {
                    self.and_node(pos)
                };
                self.on_path.remove(&key);
                match s? {
                    Some(s) => s,
                    None => return Ok(None),
                }
            }
        };
        let id = self.steps.len() as u32;
        self.steps.push(step);
        self.done.insert(key, id);
        Ok(Some(id))
    }

    /// The library's proof of `pos` for this prover, taken into the extraction whole (its nodes
    /// at positions already extracted are shared), unless it passes through a position of the
    /// extraction path (which would close a cycle).
    fn library_proof(&mut self, pos: &Position, key: u64) -> Option<u32> {
        let (lib, keys) = self.library.as_ref()?;
        if !keys.contains(&key) {
            return None;
        }
        let Stored::Proof(proof) = lib.get(pos, self.searcher.parts().1) else {
            return None;
        };
        if proof.prover != self.searcher.prover {
            return None;
        }
        // Each node's position, from the root down (children come before their parents).
        let n = proof.steps.len();
        let mut at: Vec<Option<Position>> = vec![None; n];
        at[proof.root_id as usize] = Some(proof.root);
        for id in (0..n).rev() {
            let Some(p) = at[id] else { continue };
            match &proof.steps[id] {
                Step::Or(m, c) => at[*c as usize] = Some(p.after(m)),
                Step::And(replies) => {
                    for (m, c) in replies {
                        at[*c as usize] = Some(p.after(m));
                    }
                }
                Step::End | Step::Table(_) => {}
            }
        }
        // Children first: each node of the proof becomes a node of the extraction.
        let mut new_id = vec![u32::MAX; n];
        for id in 0..n {
            let Some(p) = at[id] else { continue };
            let k = hash::key(&p);
            if self.on_path.contains(&k) && id != proof.root_id as usize {
                return None;
            }
            if let Some(&d) = self.done.get(&k) {
                new_id[id] = d;
                continue;
            }
            let step = match &proof.steps[id] {
                Step::Or(m, c) => Step::Or(*m, new_id[*c as usize]),
                Step::And(replies) => Step::And(
                    replies
                        .iter()
                        .map(|(m, c)| (*m, new_id[*c as usize]))
                        .collect(),
                ),
                Step::End => Step::End,
                Step::Table(w) => Step::Table(*w),
            };
            new_id[id] = self.steps.len() as u32;
            self.steps.push(step);
            self.done.insert(k, new_id[id]);
        }
        self.grafted += 1;
        Some(new_id[proof.root_id as usize])
    }

    /// The prover's move: the one that first proved the node, the table's best move, then any
    /// other that looks proved.
    fn or_node(&mut self, pos: &Position, key: u64) -> Result<Option<Step>, ProveError> {
        let moves = pos.legal_moves();
        for attempt in 0..2 {
            // First the move that first proved this node (its proof is older than the node's,
            // so following these moves never closes a cycle unless the line was replaced or a
            // key confused); then the table's best move; then any other that looks proved.
            let recorded = match self.searcher.proved_move(key) {
                Some(r) if attempt == 0 => usize::from(r),
                _ => usize::from(NO_MOVE),
            };
            let hint = self.searcher.entry(key).map_or(NO_MOVE, |e| e.best) as usize;
            let mut order: Vec<usize> = Vec::with_capacity(moves.len());
            for i in [recorded, hint].into_iter().chain(0..moves.len()) {
                if i < moves.len() && !order.contains(&i) {
                    order.push(i);
                }
            }
            for i in order {
                let m = moves[i];
                let c = pos.after(&m);
                let ck = hash::key(&c);
                if self.on_path.contains(&ck) {
                    continue;
                }
                let promising = i == recorded
                    || self.done.contains_key(&ck)
                    || self.searcher.entry(ck).is_some_and(|e| e.pn == 0)
                    || matches!(self.searcher.leaf(&c)?, Leaf::Won(_));
                if !promising {
                    continue;
                }
                let pushed = self.searcher.path.push(ck, m.is_zeroing());
                let r = self.node(&c, ck);
                self.searcher.path.pop(pushed);
                if let Some(id) = r? {
                    return Ok(Some(Step::Or(m, id)));
                }
            }
            // The table's proof went through the path or was overwritten: search again from
            // here with the extraction path as history, then retry once.
            if attempt > 0 || self.research_nodes == 0 {
                break;
            }
            if !self.research(pos, key)? {
                break;
            }
        }
        Ok(None)
    }

    /// Search `pos` again, with at most half the nodes the re-searches have left (one that cannot
    /// succeed leaves the others room); did it prove it?
    fn research(&mut self, pos: &Position, key: u64) -> Result<bool, ProveError> {
        let s = &mut *self.searcher;
        let saved = (s.budget.max_nodes, s.budget.deadline, s.aborted);
        let start = s.nodes;
        s.budget.max_nodes = start + self.research_nodes.div_ceil(2);
        s.budget.deadline = None;
        s.aborted = false;
        s.recheck_budget();
        // Entries below may claim proofs through the path: forget this node's own.
        s.forget(key);
        let n = s.search(pos, key, super::dfpn::Numbers::UNLIMITED);
        self.researches += 1;
        self.research_nodes = self.research_nodes.saturating_sub(s.nodes - start);
        (s.budget.max_nodes, s.budget.deadline, s.aborted) = saved;
        s.recheck_budget();
        Ok(n?.pn == 0)
    }

    /// The defender's replies: every one must lead to a proof node.
    fn and_node(&mut self, pos: &Position) -> Result<Option<Step>, ProveError> {
        let moves = pos.legal_moves();
        let mut replies = Vec::with_capacity(moves.len());
        for m in moves.iter() {
            let c = pos.after(m);
            let ck = hash::key(&c);
            if self.on_path.contains(&ck) {
                return Ok(None);
            }
            let pushed = self.searcher.path.push(ck, m.is_zeroing());
            let r = self.node(&c, ck);
            self.searcher.path.pop(pushed);
            match r? {
                Some(id) => replies.push((*m, id)),
                None => return Ok(None),
            }
        }
        Ok(Some(Step::And(replies)))
    }
}
