//! Depth-first proof-number search, proof extraction, and the certificate of a disproof.
//!
//! Numbers are the prover's: `pn` is the proof number, `dn` the disproof number, at OR nodes
//! (prover to move) and AND nodes alike. `MID(n, th_pn, th_dn)` expands `n` and keeps working
//! below its most-proving child until `pn ≥ th_pn` or `dn ≥ th_dn`; the child gets
//! `th = min(th, ⌈second·(1+ε)⌉)` on the side that selects it (ε = 1/4) and the rest of the
//! parent's budget on the other side. Child values are kept in the frame while it lives and
//! re-read from the transposition table between iterations, so transpositions found below one
//! child are seen by its siblings.
//!
//! Repetitions (the graph-history interaction). The path holds the Zobrist keys of the positions
//! from the game history through the root to the current node; only the part since the last
//! zeroing move can repeat. A child that repeats a path position counts as disproved in that
//! frame, and the disproofs that follow are stored like any other: the search is *optimistic*
//! about them, which keeps it fast in the cyclic graphs of antichess endings (storing them as
//! path-dependent made simple 3-piece draws take tens of millions of nodes). Answers stay sound
//! because neither kind of result is taken from the table on trust:
//! - a win is extracted as an acyclic proof, one node per position, depth first, never entering a
//!   position of the extraction path (where the table's proof went through one, the node is
//!   searched again with the extraction path as history);
//! - `not a win` is *certified*: from the root, the disproved entries of the table are followed
//!   (every move at OR nodes, the disproved replies at AND nodes) and the largest subset closed
//!   under "every prover move stays in the set or fails at a leaf; some defender reply does" is
//!   computed. If the root is in it, the defender can keep every game inside the set for ever or
//!   end it at a leaf that is not a win for the prover, so the prover cannot win; cycles in the
//!   set are endless play, not wins.

use super::hash;
use super::proof::{Proof, Step};
use super::tt::{CAP, Entry, INF, NO_MOVE, Tt};
use super::{Answer, MoveStatus, Options, Oracle, Progress, ProveError, Report, fits_tables};
use crate::probe::ProbeError;
use crate::rules::{Color, Move, Position};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Proof and disproof number.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Val {
    pn: u32,
    dn: u32,
}

impl Val {
    const PROVEN: Val = Val { pn: 0, dn: INF };
    const DISPROVEN: Val = Val { pn: INF, dn: 0 };

    fn solved(self) -> bool {
        self.pn == 0 || self.dn == 0
    }
}

/// How a leaf is decided, for the prover.
enum Leaf {
    /// The prover has won: by the end rule (`None`) or by a table value (`Some(wdl)` from the
    /// side to move's view).
    Won(Option<i8>),
    /// Not a win for the prover (the defender won, a draw by the tables or the bishops rule).
    Failed,
    /// Not a leaf: the side to move has this many legal moves.
    Open(u32),
}

struct Child {
    mv: Move,
    pos: Position,
    key: u64,
    zeroing: bool,
    v: Val,
}

struct Limits {
    max_nodes: u64,
    deadline: Option<Instant>,
}

pub(super) struct Search<'a> {
    tt: Tt,
    oracle: &'a dyn Oracle,
    max_pieces: u32,
    opts: &'a Options,
    progress: &'a mut (dyn FnMut(&Progress) + Send),
    prover: Color,
    pword: u64,
    /// Keys of the positions from the oldest history position to the current node.
    path: Vec<u64>,
    /// Index in `path` of the first position after the last zeroing move.
    since: usize,
    /// Index of the root in `path`.
    root_index: usize,
    limits: Limits,
    start: Instant,
    next_progress: Instant,
    next_check: u64,
    aborted: bool,
    error: Option<ProbeError>,
    nodes: u64,
    evaluated: u64,
    probes: u64,
    root_val: Val,
    root_moves: Vec<(Move, MoveStatus)>,
}

impl<'a> Search<'a> {
    fn new(
        oracle: &'a dyn Oracle,
        opts: &'a Options,
        progress: &'a mut (dyn FnMut(&Progress) + Send),
    ) -> Result<Search<'a>, ProveError> {
        let start = Instant::now();
        Ok(Search {
            tt: Tt::with_bytes(opts.memory).map_err(ProveError::Memory)?,
            oracle,
            max_pieces: oracle.max_pieces(),
            opts,
            progress,
            prover: Color::White,
            pword: 0,
            path: Vec::new(),
            since: 0,
            root_index: 0,
            limits: Limits {
                max_nodes: opts.max_nodes.unwrap_or(u64::MAX),
                deadline: opts.time.map(|t| start + t),
            },
            start,
            next_progress: start + opts.progress_every,
            next_check: 0,
            aborted: false,
            error: None,
            nodes: 0,
            evaluated: 0,
            probes: 0,
            root_val: Val { pn: 1, dn: 1 },
            root_moves: Vec::new(),
        })
    }

    /// Set the path to the history (oldest first) plus the root, for a search by `prover`.
    fn set_root(&mut self, root: &Position, history: &[Position], prover: Color) {
        self.prover = prover;
        self.pword = hash::prover_word(prover);
        self.path.clear();
        self.path.extend(history.iter().map(hash::key));
        self.path.push(hash::key(root));
        self.since = 0;
        self.root_index = self.path.len() - 1;
        self.root_val = Val { pn: 1, dn: 1 };
    }

    fn enter(&mut self, key: u64, zeroing: bool) -> usize {
        let saved = self.since;
        self.path.push(key);
        if zeroing {
            self.since = self.path.len() - 1;
        }
        saved
    }

    fn leave(&mut self, saved: usize) {
        self.path.pop();
        self.since = saved;
    }

    /// Budget, stop flag and progress, looked at every 1024 nodes.
    fn tick(&mut self) {
        self.nodes += 1;
        if self.nodes < self.next_check {
            return;
        }
        self.next_check = self.nodes + 1024;
        if self.nodes >= self.limits.max_nodes {
            self.aborted = true;
        }
        let now = Instant::now();
        if self.limits.deadline.is_some_and(|d| now >= d) {
            self.aborted = true;
        }
        if self
            .opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.aborted = true;
        }
        if now >= self.next_progress {
            self.next_progress = now + self.opts.progress_every;
            let p = Progress {
                prover: self.prover,
                nodes: self.nodes,
                elapsed: now - self.start,
                root_pn: self.root_val.pn,
                root_dn: self.root_val.dn,
                depth: (self.path.len() - 1).saturating_sub(self.root_index),
                tt_used: self.tt.used(),
                tt_capacity: self.tt.capacity(),
            };
            (self.progress)(&p);
        }
    }

    /// Decide `pos` if it is a leaf.
    fn leaf(&mut self, pos: &Position) -> Leaf {
        let n = pos.count_legal_moves() as u32;
        let prover_to_move = pos.turn() == self.prover;
        if n == 0 {
            // No pieces or no legal move: the side to move has won.
            return if prover_to_move {
                Leaf::Won(None)
            } else {
                Leaf::Failed
            };
        }
        if pos.is_insufficient_material() {
            return Leaf::Failed;
        }
        if fits_tables(pos, self.max_pieces) {
            self.probes += 1;
            match self.oracle.wdl(pos) {
                Ok(Some(w)) => {
                    return if w != 0 && (w > 0) == prover_to_move {
                        Leaf::Won(Some(w))
                    } else {
                        Leaf::Failed
                    };
                }
                Ok(None) => {}
                Err(e) => {
                    self.error = Some(e);
                    self.aborted = true;
                }
            }
        }
        Leaf::Open(n)
    }

    /// Path index of `key` if it is on the reversible part of the path.
    fn on_path(&self, key: u64) -> Option<usize> {
        self.path[self.since..]
            .iter()
            .position(|&k| k == key)
            .map(|i| self.since + i)
    }

    /// The value of a child as its parent first sees it: repetition, table entry, leaf, or the
    /// initial numbers from mobility.
    fn child_value(&mut self, pos: &Position, key: u64, zeroing: bool) -> Val {
        self.evaluated += 1;
        if !zeroing && self.on_path(key).is_some() {
            return Val::DISPROVEN;
        }
        if let Some(e) = self.tt.get(key ^ self.pword) {
            return Val { pn: e.pn, dn: e.dn };
        }
        match self.leaf(pos) {
            Leaf::Won(_) => {
                self.store_leaf(key, Val::PROVEN);
                Val::PROVEN
            }
            Leaf::Failed => {
                self.store_leaf(key, Val::DISPROVEN);
                Val::DISPROVEN
            }
            // Mobility: every defender reply must be refuted, every prover move must fail.
            // Plus half the pieces the prover still has to give away (measured on five 2-ply
            // opening wins: 24% fewer nodes than mobility alone).
            Leaf::Open(n) => {
                let to_lose = pos.board().by_color(self.prover).count() / 2;
                if pos.turn() == self.prover {
                    Val {
                        pn: 1 + to_lose,
                        dn: n,
                    }
                } else {
                    Val {
                        pn: n + to_lose,
                        dn: 1,
                    }
                }
            }
        }
    }

    /// Leaves are worth keeping only when a table was probed (the end rules are cheap).
    fn store_leaf(&mut self, key: u64, v: Val) {
        if self.max_pieces > 0 {
            self.tt.put(Entry {
                key: key ^ self.pword,
                pn: v.pn,
                dn: v.dn,
                work: 1,
                best: NO_MOVE,
            });
        }
    }

    /// A child's value from the table between iterations (repetitions stay as they are).
    fn refresh(&self, k: &Child) -> Option<Val> {
        if !k.zeroing && self.on_path(k.key).is_some() {
            return None;
        }
        self.tt
            .get(k.key ^ self.pword)
            .map(|e| Val { pn: e.pn, dn: e.dn })
    }

    /// Numbers of a node from its children, and the child that decides them.
    fn combine(or: bool, kids: &[Child]) -> (Val, usize) {
        // The selecting side: the smallest pn at OR nodes, the smallest dn at AND nodes.
        let sel = |k: &Child| if or { k.v.pn } else { k.v.dn };
        let (best, first) = kids
            .iter()
            .enumerate()
            .map(|(i, k)| (i, sel(k)))
            .min_by_key(|&(_, s)| s)
            .expect("an expanded node has moves");
        let rest = total(kids.iter().map(|k| if or { k.v.dn } else { k.v.pn }));
        let rest = rest.min(u64::from(CAP)) as u32;
        let v = match (first, rest) {
            (0, _) if or => Val::PROVEN,
            (0, _) => Val::DISPROVEN,
            (_, 0) if or => Val::DISPROVEN,
            (_, 0) => Val::PROVEN,
            (f, r) if or => Val { pn: f, dn: r },
            (f, r) => Val { pn: r, dn: f },
        };
        (v, best)
    }

    /// The multiple-iterative-deepening step of df-pn: expand `pos` (at the top of the path) and
    /// search below it until its numbers reach a threshold.
    fn mid(&mut self, pos: &Position, key: u64, th_pn: u32, th_dn: u32) -> Val {
        self.tick();
        let me = self.path.len() - 1;
        let or = pos.turn() == self.prover;
        let old = self.tt.get(key ^ self.pword);
        let start_nodes = self.nodes;
        let mut kids: Vec<Child> = Vec::new();
        {
            // All children first, their table buckets requested ahead of use (most are cache
            // misses), then their values.
            let moves = pos.legal_moves();
            kids.reserve(moves.len());
            for m in moves.iter() {
                let c = pos.after(m);
                let ck = hash::key(&c);
                self.tt.prefetch(ck ^ self.pword);
                kids.push(Child {
                    mv: *m,
                    pos: c,
                    key: ck,
                    zeroing: m.is_zeroing(),
                    v: Val { pn: 1, dn: 1 },
                });
            }
            for i in 0..kids.len() {
                let v = self.child_value(&kids[i].pos, kids[i].key, kids[i].zeroing);
                kids[i].v = v;
                // A proved move (or a disproved reply) settles the node at once.
                if (or && v.pn == 0) || (!or && v.dn == 0) {
                    kids.truncate(i + 1);
                    break;
                }
            }
        }
        let mut val;
        let mut best;
        loop {
            (val, best) = Self::combine(or, &kids);
            if me == self.root_index {
                self.root_val = val;
                if or {
                    self.record_root(&kids);
                }
            }
            if val.pn >= th_pn || val.dn >= th_dn || self.aborted {
                break;
            }
            let (i, cpn, cdn) = Self::select(or, &kids, th_pn, th_dn);
            let (ck, zeroing, cpos) = (kids[i].key, kids[i].zeroing, kids[i].pos);
            let saved = self.enter(ck, zeroing);
            let r = self.mid(&cpos, ck, cpn, cdn);
            self.leave(saved);
            kids[i].v = r;
            // Transpositions: unsolved siblings may have been searched below the chosen child.
            for (j, k) in kids.iter_mut().enumerate() {
                if j != i
                    && !k.v.solved()
                    && let Some(v) = self.refresh(k)
                {
                    k.v = v;
                }
            }
        }
        let work = old
            .map_or(0, |e| e.work)
            .saturating_add((self.nodes - start_nodes) as u32);
        self.tt.put(Entry {
            key: key ^ self.pword,
            pn: val.pn,
            dn: val.dn,
            work,
            best: if val.solved() { best as u16 } else { NO_MOVE },
        });
        val
    }

    /// The most-proving child and its thresholds.
    fn select(or: bool, kids: &[Child], th_pn: u32, th_dn: u32) -> (usize, u32, u32) {
        // On the selecting side (pn at OR nodes, dn at AND nodes) take the smallest, remember the
        // second smallest; the other side is totalled.
        let sel = |k: &Child| if or { k.v.pn } else { k.v.dn };
        let other = |k: &Child| if or { k.v.dn } else { k.v.pn };
        let mut best = 0;
        let mut first = INF;
        let mut second = INF;
        for (i, k) in kids.iter().enumerate() {
            let s = sel(k);
            if s < first {
                second = first;
                first = s;
                best = i;
            } else if s < second {
                second = s;
            }
        }
        let sum = total(kids.iter().map(other));
        let (th_sel, th_other) = if or { (th_pn, th_dn) } else { (th_dn, th_pn) };
        let c_sel = if second >= CAP {
            th_sel
        } else {
            let grown = u64::from(second) + u64::from(second) / 4 + 1;
            th_sel.min(grown.min(u64::from(CAP)) as u32)
        };
        let c_other = if th_other == INF {
            INF
        } else {
            let rest = sum - u64::from(other(&kids[best]));
            (u64::from(th_other).saturating_sub(rest)).min(u64::from(CAP)) as u32
        };
        if or {
            (best, c_sel, c_other)
        } else {
            (best, c_other, c_sel)
        }
    }

    /// What the win search knows of each root move (the root is an OR node).
    fn record_root(&mut self, kids: &[Child]) {
        self.root_moves = kids
            .iter()
            .map(|k| {
                let status = match (k.v.pn, k.v.dn) {
                    (0, _) => MoveStatus::Wins,
                    (_, 0) => MoveStatus::Fails,
                    (pn, dn) => MoveStatus::Open { pn, dn },
                };
                (k.mv, status)
            })
            .collect();
    }

    /// Search the root (at the top of the path) for `self.prover`.
    fn search_root(&mut self, root: &Position) -> Val {
        let key = hash::key(root);
        let v = self.mid(root, key, INF, INF);
        self.root_val = v;
        v
    }
}

/// The non-selecting number of a node from its children's (the disproof number of an OR node,
/// the proof number of an AND node): `INF` when a child has it, otherwise the sum.
fn total(values: impl Iterator<Item = u32>) -> u64 {
    let mut sum = 0u64;
    for v in values {
        if v == INF {
            return u64::from(INF);
        }
        sum += u64::from(v);
    }
    sum
}

/// State of one proof extraction.
struct Extract {
    steps: Vec<Step>,
    /// Finished nodes by position key.
    done: HashMap<u64, u32>,
    /// Positions on the extraction path (and the game history): never re-entered.
    on_path: HashSet<u64>,
    /// Re-searches still allowed.
    researches: u32,
}

/// Expanded nodes allowed to one re-search during extraction.
const RESEARCH_NODES: u64 = 200_000;

impl Search<'_> {
    /// Extract an acyclic proof (one node per position) for `self.prover` from the root at the
    /// top of the path. `None` if the search's claim cannot be turned into one.
    fn extract(&mut self, root: &Position, history: &[Position]) -> Option<Proof> {
        let mut st = Extract {
            steps: Vec::new(),
            done: HashMap::new(),
            on_path: history.iter().map(hash::key).collect(),
            researches: 64,
        };
        let key = hash::key(root);
        let root_id = self.extract_node(&mut st, root, key)?;
        Some(Proof::new(*root, self.prover, st.steps, root_id))
    }

    fn extract_node(&mut self, st: &mut Extract, pos: &Position, key: u64) -> Option<u32> {
        if let Some(&id) = st.done.get(&key) {
            return Some(id);
        }
        let step = match self.leaf(pos) {
            Leaf::Won(None) => Step::End,
            Leaf::Won(Some(w)) => Step::Table(w),
            Leaf::Failed => return None,
            Leaf::Open(_) => {
                st.on_path.insert(key);
                let s = if pos.turn() == self.prover {
                    self.extract_or(st, pos, key)
                } else {
                    self.extract_and(st, pos)
                };
                st.on_path.remove(&key);
                s?
            }
        };
        let id = st.steps.len() as u32;
        st.steps.push(step);
        st.done.insert(key, id);
        Some(id)
    }

    fn extract_or(&mut self, st: &mut Extract, pos: &Position, key: u64) -> Option<Step> {
        let moves = pos.legal_moves();
        for attempt in 0..2 {
            let hint = self.tt.get(key ^ self.pword).map_or(NO_MOVE, |e| e.best) as usize;
            let order = std::iter::once(hint)
                .filter(|&h| h < moves.len())
                .chain((0..moves.len()).filter(|&i| i != hint));
            for i in order {
                let m = moves[i];
                let c = pos.after(&m);
                let ck = hash::key(&c);
                if st.on_path.contains(&ck) {
                    continue;
                }
                let promising = st.done.contains_key(&ck)
                    || self.tt.get(ck ^ self.pword).is_some_and(|e| e.pn == 0)
                    || matches!(self.leaf(&c), Leaf::Won(_));
                if !promising {
                    continue;
                }
                let saved = self.enter(ck, m.is_zeroing());
                let r = self.extract_node(st, &c, ck);
                self.leave(saved);
                if let Some(id) = r {
                    return Some(Step::Or(m, id));
                }
            }
            // The table's proof went through the path or was overwritten: search again from
            // here with the extraction path as history, then retry once.
            if attempt > 0 || st.researches == 0 || self.error.is_some() {
                break;
            }
            st.researches -= 1;
            let saved_limits = (self.limits.max_nodes, self.limits.deadline, self.aborted);
            self.limits.max_nodes = self.nodes + RESEARCH_NODES;
            self.limits.deadline = None;
            self.aborted = false;
            self.next_check = 0;
            // Entries below may claim proofs through the path: forget this node's own.
            self.tt.put(Entry {
                key: key ^ self.pword,
                pn: 1,
                dn: 1,
                work: 0,
                best: NO_MOVE,
            });
            let v = self.mid(pos, key, INF, INF);
            (self.limits.max_nodes, self.limits.deadline, self.aborted) = saved_limits;
            self.next_check = 0;
            if v.pn != 0 {
                break;
            }
        }
        None
    }

    fn extract_and(&mut self, st: &mut Extract, pos: &Position) -> Option<Step> {
        let moves = pos.legal_moves();
        let mut replies = Vec::with_capacity(moves.len());
        for m in moves.iter() {
            let c = pos.after(m);
            let ck = hash::key(&c);
            if st.on_path.contains(&ck) {
                return None;
            }
            let saved = self.enter(ck, m.is_zeroing());
            let r = self.extract_node(st, &c, ck);
            self.leave(saved);
            replies.push((*m, r?));
        }
        Some(Step::And(replies))
    }
}

/// A node of a disproof certificate.
struct CertNode {
    or: bool,
    /// An AND node with a reply that fails at a leaf: safe whatever happens to its children.
    anchored: bool,
    /// Removed from the set.
    out: bool,
    /// AND nodes: children still in the set.
    live: u32,
    /// AND nodes: replies not yet settled, tried when the live ones run out.
    open: Vec<(Position, u64)>,
}

/// Most nodes a certificate may have (beyond it the search answers `unknown`).
const CERT_MAX_NODES: usize = 20_000_000;

/// A disproof certificate under construction (see [`Search::certify_disproof`]).
struct Cert {
    history: HashSet<u64>,
    index: HashMap<u64, u32>,
    nodes: Vec<CertNode>,
    parents: Vec<Vec<u32>>,
    /// Nodes whose children are still to be looked at.
    todo: Vec<(u32, Position)>,
    /// Nodes just removed, whose parents are still to be told.
    removed: Vec<u32>,
}

impl Cert {
    /// The node of `pos`, added (and queued) if new.
    fn node(&mut self, pos: Position, key: u64, prover: Color) -> u32 {
        if let Some(&j) = self.index.get(&key) {
            return j;
        }
        let j = self.nodes.len() as u32;
        self.index.insert(key, j);
        self.nodes.push(CertNode {
            or: pos.turn() == prover,
            anchored: false,
            out: false,
            live: 0,
            open: Vec::new(),
        });
        self.parents.push(Vec::new());
        self.todo.push((j, pos));
        j
    }

    fn link(&mut self, parent: u32, child: u32) {
        self.parents[child as usize].push(parent);
        self.nodes[parent as usize].live += 1;
    }

    fn remove(&mut self, id: u32) {
        self.nodes[id as usize].out = true;
        self.removed.push(id);
    }
}

impl Search<'_> {
    /// Certify that the prover cannot win from the root (see the module doc): build the set of
    /// disproved positions around the root and shrink it to its greatest closed subset, settling
    /// positions the table left open on the way. Returns the size of the set, or, if the root
    /// does not stay in it, the keys of the positions that were removed (their disproofs in the
    /// table are not to be trusted).
    fn certify_disproof(
        &mut self,
        root: &Position,
        history: &[Position],
    ) -> Result<usize, Vec<u64>> {
        let mut c = Cert {
            history: history.iter().map(hash::key).collect(),
            index: HashMap::new(),
            nodes: Vec::new(),
            parents: Vec::new(),
            todo: Vec::new(),
            removed: Vec::new(),
        };
        c.node(*root, hash::key(root), self.prover);
        loop {
            while let Some((id, pos)) = c.todo.pop() {
                if c.nodes.len() > CERT_MAX_NODES || self.error.is_some() || self.aborted {
                    return Err(Vec::new());
                }
                self.cert_expand(&mut c, id, &pos);
            }
            if c.removed.is_empty() {
                break;
            }
            // Greatest fixed point: an OR node goes with any child, an AND node with its last.
            while let Some(id) = c.removed.pop() {
                for p in std::mem::take(&mut c.parents[id as usize]) {
                    let n = &mut c.nodes[p as usize];
                    if n.out {
                        continue;
                    }
                    if n.or {
                        c.remove(p);
                        continue;
                    }
                    n.live -= 1;
                    if n.live == 0 && !n.anchored && !self.cert_revive(&mut c, p) {
                        c.remove(p);
                    }
                }
            }
        }
        if c.nodes[0].out {
            Err(c
                .index
                .iter()
                .filter(|&(_, &j)| c.nodes[j as usize].out)
                .map(|(&k, _)| k)
                .collect())
        } else {
            Ok(c.nodes.iter().filter(|n| !n.out).count())
        }
    }

    /// Look at the children of certificate node `id`.
    fn cert_expand(&mut self, c: &mut Cert, id: u32, pos: &Position) {
        let or = c.nodes[id as usize].or;
        let mut kids: Vec<(Position, u64)> = Vec::new();
        for m in pos.legal_moves().iter() {
            let child = pos.after(m);
            let ck = hash::key(&child);
            // Coming back to the game before the root is a repetition: not a win.
            let fails = c.history.contains(&ck)
                || match self.leaf(&child) {
                    Leaf::Failed => true,
                    Leaf::Won(_) if or => {
                        c.remove(id);
                        return;
                    }
                    Leaf::Won(_) => continue,
                    Leaf::Open(_) => false,
                };
            if fails {
                c.nodes[id as usize].anchored |= !or;
                continue;
            }
            if let Some(&j) = c.index.get(&ck) {
                if c.nodes[j as usize].out {
                    if or {
                        c.remove(id);
                        return;
                    }
                } else {
                    kids.push((child, ck));
                }
                continue;
            }
            match self.tt.get(ck ^ self.pword) {
                Some(e) if e.dn == 0 => kids.push((child, ck)),
                Some(e) if e.pn == 0 && or => {
                    c.remove(id);
                    return;
                }
                Some(e) if e.pn == 0 => {}
                // Never searched, or left open (a repetition settled it in its parent's frame):
                // an OR node needs it now, an AND node perhaps later.
                _ if or => {
                    if self.settle(&child, ck) == Some(true) {
                        kids.push((child, ck));
                    } else {
                        c.remove(id);
                        return;
                    }
                }
                _ => c.nodes[id as usize].open.push((child, ck)),
            }
        }
        for (child, ck) in kids {
            let j = c.node(child, ck, self.prover);
            c.link(id, j);
        }
        let n = &c.nodes[id as usize];
        if !n.or && !n.anchored && n.live == 0 && !self.cert_revive(c, id) {
            c.remove(id);
        }
    }

    /// An AND node without live children: settle its open replies until one is disproved.
    fn cert_revive(&mut self, c: &mut Cert, id: u32) -> bool {
        while let Some((child, ck)) = c.nodes[id as usize].open.pop() {
            let usable = match c.index.get(&ck) {
                Some(&j) => !c.nodes[j as usize].out,
                None => self.settle(&child, ck) == Some(true),
            };
            if usable {
                let j = c.node(child, ck, self.prover);
                c.link(id, j);
                return true;
            }
        }
        false
    }

    /// Search `pos` on its own (a path of just itself) until it is solved or the budget ends:
    /// `Some(true)` disproved, `Some(false)` proved, `None` unknown.
    fn settle(&mut self, pos: &Position, key: u64) -> Option<bool> {
        if self.aborted {
            return None;
        }
        let saved = (
            std::mem::replace(&mut self.path, vec![key]),
            self.since,
            self.root_index,
        );
        self.since = 0;
        self.root_index = usize::MAX;
        let v = self.mid(pos, key, INF, INF);
        (self.path, self.since, self.root_index) = saved;
        match (v.pn, v.dn) {
            (_, 0) => Some(true),
            (0, _) => Some(false),
            _ => None,
        }
    }
}

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

/// The whole of [`super::prove`], on the search thread.
pub(super) fn run(
    root: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Report, ProveError> {
    let mut s = Search::new(oracle, opts, progress)?;
    let stm = root.turn();
    s.set_root(root, history, stm);
    let report = |s: &Search,
                  answer: Answer,
                  proof: Option<Proof>,
                  disproof: Option<usize>,
                  note: Option<String>| Report {
        answer,
        proof,
        disproof_size: disproof,
        nodes: s.nodes,
        evaluated: s.evaluated,
        probes: s.probes,
        time: s.start.elapsed(),
        root_moves: with_unseen(root, &s.root_moves),
        root_pn: s.root_val.pn,
        root_dn: s.root_val.dn,
        tt_used: s.tt.used(),
        tt_capacity: s.tt.capacity(),
        note,
    };

    // The root itself may be a leaf.
    match s.leaf(root) {
        Leaf::Won(w) => {
            let step = w.map_or(Step::End, Step::Table);
            let proof = Proof::new(*root, stm, vec![step], 0);
            return Ok(report(&s, Answer::Win, Some(proof), None, None));
        }
        Leaf::Failed => {
            if let Some(e) = s.error.take() {
                return Err(ProveError::Table(e));
            }
            // Decided by a table or the bishops rule: is it a loss?
            s.set_root(root, history, !stm);
            return Ok(match s.leaf(root) {
                Leaf::Won(w) => {
                    let step = w.map_or(Step::End, Step::Table);
                    let proof = Proof::new(*root, !stm, vec![step], 0);
                    report(&s, Answer::Loss, Some(proof), None, None)
                }
                _ => report(&s, Answer::NotAWin, None, Some(1), None),
            });
        }
        Leaf::Open(_) => {}
    }
    if let Some(e) = s.error.take() {
        return Err(ProveError::Table(e));
    }

    // Search; a disproof that does not certify had trusted a repetition on another path: drop
    // the positions it could not keep and search again (each round the table's proofs, which
    // the failed certificate ran into, win more positions back).
    let mut round = 0;
    let cert = loop {
        let v = s.search_root(root);
        if let Some(e) = s.error.take() {
            return Err(ProveError::Table(e));
        }
        if v.pn == 0 {
            return Ok(match s.extract(root, history) {
                Some(p) => report(&s, Answer::Win, Some(p), None, None),
                None => {
                    let note = "the search found a win but no acyclic proof could be extracted"
                        .to_string();
                    report(&s, Answer::Unknown, None, None, Some(note))
                }
            });
        }
        if v.dn != 0 {
            return Ok(report(&s, Answer::Unknown, None, None, None));
        }
        match s.certify_disproof(root, history) {
            Ok(n) => break n,
            Err(dropped) => {
                if let Some(e) = s.error.take() {
                    return Err(ProveError::Table(e));
                }
                round += 1;
                if s.aborted || dropped.is_empty() || round > MAX_ROUNDS {
                    let note =
                        "the search found no win, but its disproof did not certify".to_string();
                    return Ok(report(&s, Answer::Unknown, None, None, Some(note)));
                }
                for k in dropped {
                    s.tt.put(Entry {
                        key: k ^ s.pword,
                        pn: 1,
                        dn: 1,
                        work: 0,
                        best: NO_MOVE,
                    });
                }
            }
        }
    };
    let win_moves = s.root_moves.clone();
    let win_val = s.root_val;
    // Not a win. Does every move lose?
    let mut answer = Answer::NotAWin;
    let mut proof = None;
    let mut note = None;
    if opts.try_loss && !s.aborted {
        s.set_root(root, history, !stm);
        let v = s.search_root(root);
        if let Some(e) = s.error.take() {
            return Err(ProveError::Table(e));
        }
        if v.pn == 0 {
            match s.extract(root, history) {
                Some(p) => {
                    answer = Answer::Loss;
                    proof = Some(p);
                }
                None => {
                    note =
                        Some("a loss was found but no acyclic proof could be extracted".to_string())
                }
            }
        } else if v.dn != 0 {
            note = Some("the budget ran out while checking for a loss".to_string());
        }
    }
    s.root_moves = win_moves;
    s.root_val = win_val;
    Ok(report(&s, answer, proof, Some(cert), note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_gives_thresholds_above_the_child() {
        let p = Position::startpos();
        let mv = p.legal_moves()[0];
        let kid = |pn, dn| Child {
            mv,
            pos: p,
            key: 0,
            zeroing: false,
            v: Val { pn, dn },
        };
        let kids = vec![kid(3, 5), kid(4, 2), kid(9, 1)];
        let (i, cpn, cdn) = Search::select(true, &kids, 100, 50);
        assert_eq!(i, 0);
        assert!(cpn > 3 && cpn <= 100);
        assert_eq!(cdn, 50 - 3);
        let (i, cpn, cdn) = Search::select(false, &kids, 100, 50);
        assert_eq!(i, 2);
        assert_eq!(cpn, 100 - 7);
        assert!(cdn > 1);
        assert_eq!(Search::combine(true, &kids), (Val { pn: 3, dn: 8 }, 0));
        assert_eq!(Search::combine(false, &kids), (Val { pn: 16, dn: 1 }, 2));
    }
}
