//! Depth-first proof-number search (df-pn) over a transposition table.
//!
//! Numbers are the prover's: `pn` is the proof number, `dn` the disproof number, at OR nodes
//! (prover to move) and AND nodes alike. [`Searcher::search`] (MID in Nagai's paper) expands a
//! node and keeps working below its most-proving child until `pn ≥ limit.pn` or `dn ≥ limit.dn`;
//! the child gets the limit `min(limit, ⌈second·(1+ε)⌉)` on the side that selects it (ε = 1/4,
//! the 1+ε trick of Pawlewicz and Lew) and the rest of the parent's budget on the other side.
//! Child values are kept in the frame while it lives and re-read from the transposition table
//! between iterations, so transpositions found below one child are seen by its siblings.
//!
//! Repetitions (the graph-history interaction). A child that repeats a position of the
//! reversible part of the [`Path`] counts as disproved in that frame, and the disproofs that
//! follow are stored like any other: the search is *optimistic* about them, which keeps it fast in
//! the cyclic graphs of antichess endings (storing them as path-dependent made simple 3-piece
//! draws take tens of millions of nodes). Answers stay sound because neither kind of result is
//! taken from the table on trust: wins are re-played by the proof extraction (`extract.rs`),
//! `not a win` is certified (`certify.rs`).

use super::hash;
use super::path::Path;
use super::tt::{CAP, Entry, INF, NO_MOVE, Tt};
use super::{MoveStatus, Options, Oracle, Progress, ProveError, fits_tables};
use crate::rules::{Color, Move, MoveList, Position};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

/// Proof and disproof number of a node, for the prover.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Numbers {
    pub pn: u32,
    pub dn: u32,
}

impl Numbers {
    pub const PROVEN: Numbers = Numbers { pn: 0, dn: INF };
    pub const DISPROVEN: Numbers = Numbers { pn: INF, dn: 0 };
    /// A node nothing is known about yet.
    pub const FRESH: Numbers = Numbers { pn: 1, dn: 1 };
    /// No limit on either side: search until solved (or the budget ends).
    pub const UNLIMITED: Numbers = Numbers { pn: INF, dn: INF };

    pub fn is_solved(self) -> bool {
        self.pn == 0 || self.dn == 0
    }
}

/// How a position ends the search, for the prover.
pub(super) enum Leaf {
    /// The prover has won: by the end rule (`None`) or by a table value (`Some(wdl)` from the
    /// side to move's view).
    Won(Option<i8>),
    /// Not a win for the prover (the defender won, a draw by the tables or the bishops rule).
    Failed,
    /// Not a leaf: the side to move has this many legal moves.
    Open(u32),
}

/// A child in the frame of its parent.
pub(super) struct Child {
    pub mv: Move,
    pub pos: Position,
    pub key: u64,
    pub zeroing: bool,
    pub numbers: Numbers,
}

/// Where the search must stop.
pub(super) struct Budget {
    pub max_nodes: u64,
    pub deadline: Option<Instant>,
}

/// What the threads of a parallel search share besides the transposition table.
pub(super) struct Shared {
    /// Set by the main thread when its search returns: helpers stop.
    pub stop: AtomicBool,
    /// Set by a helper that solved the root: the main thread stops and reads its result.
    pub root_done: AtomicBool,
    /// Nodes the helpers have expanded (added every 1024 nodes), for the budget and progress.
    helper_nodes: AtomicU64,
    /// How many threads are searching below each position (by key hash; collisions only cost
    /// diversity). A thread choosing a defender's reply prefers those no other thread is in.
    busy: Box<[AtomicU8]>,
}

/// Entries of [`Shared::busy`] (a power of two).
const BUSY: usize = 1 << 16;

impl Shared {
    pub fn new() -> Shared {
        Shared {
            stop: AtomicBool::new(false),
            root_done: AtomicBool::new(false),
            helper_nodes: AtomicU64::new(0),
            busy: (0..BUSY).map(|_| AtomicU8::new(0)).collect(),
        }
    }

    /// Ready for a new parallel search (no thread is in one).
    pub fn reset(&self) {
        self.stop.store(false, Ordering::Relaxed);
        self.root_done.store(false, Ordering::Relaxed);
        self.helper_nodes.store(0, Ordering::Relaxed);
    }

    #[inline]
    fn busy_slot(&self, key: u64) -> &AtomicU8 {
        &self.busy[(key >> 48) as usize & (BUSY - 1)]
    }

    #[inline]
    fn is_busy(&self, key: u64) -> bool {
        self.busy_slot(key).load(Ordering::Relaxed) != 0
    }
}

/// One df-pn search: the table, the tables' oracle, the path, counters and budget. Proof
/// extraction and the disproof certificate search again through it where the table falls short.
/// A parallel search runs one per thread over one table (`lane` 0 is the main thread).
pub(super) struct Searcher<'a> {
    pub tt: &'a Tt,
    /// This thread's number, for the table's counters; 0 for the main thread.
    lane: usize,
    /// Shared with the other threads while a parallel search runs (`None` otherwise).
    pub shared: Option<&'a Shared>,
    /// Helpers: nodes already added to [`Shared::helper_nodes`].
    flushed: u64,
    oracle: &'a dyn Oracle,
    max_pieces: u32,
    opts: &'a Options,
    progress: &'a mut (dyn FnMut(&Progress) + Send),
    /// The side trying to win.
    pub prover: Color,
    /// Mixed into table keys so that searches for either side share one table.
    prover_word: u64,
    pub path: Path,
    pub budget: Budget,
    /// Set when the budget is spent or a stop is asked for: searches return what they have.
    pub aborted: bool,
    /// `nodes` at which the budget, stop flag and progress are looked at next.
    next_check: u64,
    start: Instant,
    next_progress: Instant,
    /// Expanded nodes.
    pub nodes: u64,
    /// Positions generated and evaluated as children.
    pub evaluated: u64,
    /// Table probes made.
    pub probes: u64,
    /// The root's numbers as last seen by the root.
    pub root_numbers: Numbers,
    /// The root's moves as last seen by the root (OR roots only).
    pub root_moves: Vec<(Move, MoveStatus)>,
    /// When the main thread next saves the store of solved positions ([`Options::solved`]).
    next_save: Instant,
    /// Records in the store after the last save during the search (a failed save is only
    /// tried again: the save at the end reports its error).
    pub solved_saved: Option<usize>,
}

impl<'a> Searcher<'a> {
    /// A searcher over `tt` for thread `lane` (0: the main thread, the only one that reports
    /// progress and keeps the budget).
    pub fn new(
        tt: &'a Tt,
        lane: usize,
        oracle: &'a dyn Oracle,
        opts: &'a Options,
        progress: &'a mut (dyn FnMut(&Progress) + Send),
    ) -> Searcher<'a> {
        let start = Instant::now();
        Searcher {
            tt,
            lane,
            shared: None,
            flushed: 0,
            oracle,
            max_pieces: oracle.max_pieces(),
            opts,
            progress,
            prover: Color::White,
            prover_word: 0,
            path: Path::new([], 0),
            budget: Budget {
                max_nodes: opts.max_nodes.unwrap_or(u64::MAX),
                deadline: opts.time.map(|t| start + t),
            },
            aborted: false,
            next_check: 0,
            start,
            next_progress: start + opts.progress_every,
            nodes: 0,
            evaluated: 0,
            probes: 0,
            root_numbers: Numbers::FRESH,
            root_moves: Vec::new(),
            next_save: start + opts.save_every,
            solved_saved: None,
        }
    }

    /// The table, the oracle and the options, for helper threads' searchers.
    pub fn parts(&self) -> (&'a Tt, &'a dyn Oracle, &'a Options) {
        (self.tt, self.oracle, self.opts)
    }

    /// Time since the searcher was made.
    pub fn elapsed(&self) -> std::time::Duration {
        self.start.elapsed()
    }

    /// Search for a win of `prover` from `root`, with the history (oldest first) before it.
    pub fn set_root(&mut self, root: &Position, history: &[Position], prover: Color) {
        self.prover = prover;
        self.prover_word = hash::prover_word(prover);
        self.path = Path::new(history.iter().map(hash::key), hash::key(root));
        self.root_numbers = Numbers::FRESH;
    }

    /// The table entry of the position with Zobrist key `key`, for this prover.
    pub fn entry(&self, key: u64) -> Option<Entry> {
        self.tt.get(key ^ self.prover_word)
    }

    /// The move first recorded as proving the OR node `key` for this prover.
    pub fn proved_move(&self, key: u64) -> Option<u16> {
        self.tt.proved_move(key ^ self.prover_word)
    }

    /// Store numbers for the position with Zobrist key `key`.
    pub fn store(&mut self, key: u64, numbers: Numbers, work: u32, best: u16) {
        self.tt.put(
            Entry {
                key: key ^ self.prover_word,
                pn: numbers.pn,
                dn: numbers.dn,
                work,
                best,
            },
            self.lane,
        );
    }

    /// Forget what the table says about `key` (its proof or disproof is not to be trusted).
    pub fn forget(&mut self, key: u64) {
        self.store(key, Numbers::FRESH, 0, NO_MOVE);
    }

    /// Count a node; look at the budget, stop flag and progress every 1024 nodes.
    fn tick(&mut self) {
        self.nodes += 1;
        if self.nodes < self.next_check {
            return;
        }
        self.next_check = self.nodes + 1024;
        let mut total = self.nodes;
        if let Some(shared) = self.shared {
            if self.lane > 0 {
                // A helper: report its nodes, stop when the main thread says so.
                shared
                    .helper_nodes
                    .fetch_add(self.nodes - self.flushed, Ordering::Relaxed);
                self.flushed = self.nodes;
                if shared.stop.load(Ordering::Relaxed) {
                    self.aborted = true;
                }
                return;
            }
            total += shared.helper_nodes.load(Ordering::Relaxed);
            if shared.root_done.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        if total >= self.budget.max_nodes {
            self.aborted = true;
        }
        let now = Instant::now();
        if self.budget.deadline.is_some_and(|d| now >= d) {
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
                nodes: total,
                elapsed: now - self.start,
                root_pn: self.root_numbers.pn,
                root_dn: self.root_numbers.dn,
                depth: self.path.depth(),
                tt_used: self.tt.used(),
                tt_capacity: self.tt.capacity(),
            };
            (self.progress)(&p);
        }
        if let Some(path) = &self.opts.solved
            && now >= self.next_save
        {
            // Helpers go on searching while the main thread saves.
            if let Ok(n) = super::solved::save(path, self.tt) {
                self.solved_saved = Some(n);
            }
            self.next_save = Instant::now() + self.opts.save_every;
        }
    }

    /// Look at the budget at the next node (after the budget was changed).
    pub fn recheck_budget(&mut self) {
        self.next_check = 0;
    }

    /// Decide `pos` if it is a leaf.
    pub fn leaf(&mut self, pos: &Position) -> Result<Leaf, ProveError> {
        let n = pos.count_legal_moves() as u32;
        let prover_to_move = pos.turn() == self.prover;
        if n == 0 {
            // No pieces or no legal move: the side to move has won.
            return Ok(if prover_to_move {
                Leaf::Won(None)
            } else {
                Leaf::Failed
            });
        }
        if pos.is_insufficient_material() {
            return Ok(Leaf::Failed);
        }
        if fits_tables(pos, self.max_pieces) {
            self.probes += 1;
            if let Some(w) = self.oracle.wdl(pos).map_err(ProveError::Table)? {
                return Ok(if w != 0 && (w > 0) == prover_to_move {
                    Leaf::Won(Some(w))
                } else {
                    Leaf::Failed
                });
            }
        }
        Ok(Leaf::Open(n))
    }

    /// The numbers of a child as its parent first sees them: repetition, table entry, leaf, or
    /// the initial numbers from mobility.
    fn first_numbers(
        &mut self,
        pos: &Position,
        key: u64,
        zeroing: bool,
    ) -> Result<Numbers, ProveError> {
        self.evaluated += 1;
        if !zeroing && self.path.repeats(key) {
            return Ok(Numbers::DISPROVEN);
        }
        if let Some(e) = self.entry(key) {
            return Ok(Numbers { pn: e.pn, dn: e.dn });
        }
        Ok(match self.leaf(pos)? {
            Leaf::Won(_) => {
                self.store_leaf(key, Numbers::PROVEN);
                Numbers::PROVEN
            }
            Leaf::Failed => {
                self.store_leaf(key, Numbers::DISPROVEN);
                Numbers::DISPROVEN
            }
            // Mobility: every defender reply must be refuted, every prover move must fail.
            // Plus half the pieces the prover still has to give away (measured on five 2-ply
            // opening wins: 24% fewer nodes than mobility alone).
            Leaf::Open(n) => {
                let to_lose = pos.board().by_color(self.prover).count() / 2;
                if pos.turn() == self.prover {
                    Numbers {
                        pn: 1 + to_lose,
                        dn: n,
                    }
                } else {
                    Numbers {
                        pn: n + to_lose,
                        dn: 1,
                    }
                }
            }
        })
    }

    /// Leaves are worth keeping only when a table was probed (the end rules are cheap).
    fn store_leaf(&mut self, key: u64, numbers: Numbers) {
        if self.max_pieces > 0 {
            self.store(key, numbers, 1, NO_MOVE);
        }
    }

    /// A child's numbers from the table between iterations (repetitions stay as they are).
    fn reread(&self, child: &Child) -> Option<Numbers> {
        if !child.zeroing && self.path.repeats(child.key) {
            return None;
        }
        self.entry(child.key)
            .map(|e| Numbers { pn: e.pn, dn: e.dn })
    }

    /// Search below `pos` (at the top of the path) until its numbers reach `limit` on either
    /// side, it is solved, or the search is aborted; store and return its numbers.
    pub fn search(
        &mut self,
        pos: &Position,
        key: u64,
        limit: Numbers,
    ) -> Result<Numbers, ProveError> {
        self.tick();
        if let Some(shared) = self.shared {
            shared.busy_slot(key).fetch_add(1, Ordering::Relaxed);
            let r = self.expand(pos, key, limit);
            shared.busy_slot(key).fetch_sub(1, Ordering::Relaxed);
            r
        } else {
            self.expand(pos, key, limit)
        }
    }

    /// [`Searcher::search`] once the node is counted (and marked busy in a parallel search).
    fn expand(&mut self, pos: &Position, key: u64, limit: Numbers) -> Result<Numbers, ProveError> {
        let at_root = self.path.at_root();
        let or = pos.turn() == self.prover;
        let old = self.entry(key);
        let start_nodes = self.nodes;
        let mut children: Vec<Child> = Vec::new();
        {
            // All children first, their table buckets requested ahead of use (most are cache
            // misses), then their numbers.
            // Filled in place: a returned list is copied whole (320 moves), 4% of the search.
            let mut moves = MoveList::new();
            pos.legal_moves_into(&mut moves);
            children.reserve(moves.len());
            for m in moves.iter() {
                let c = pos.after(m);
                let ck = hash::key_after(key, pos, &c);
                self.tt.prefetch(ck ^ self.prover_word);
                children.push(Child {
                    mv: *m,
                    pos: c,
                    key: ck,
                    zeroing: m.is_zeroing(),
                    numbers: Numbers::FRESH,
                });
            }
            for i in 0..children.len() {
                let c = &children[i];
                let n = self.first_numbers(&c.pos, c.key, c.zeroing)?;
                children[i].numbers = n;
                // A proved move (or a disproved reply) settles the node at once.
                if (or && n.pn == 0) || (!or && n.dn == 0) {
                    children.truncate(i + 1);
                    break;
                }
            }
        }
        let mut numbers;
        let mut best;
        loop {
            (numbers, best) = combine(or, &children);
            if at_root {
                self.root_numbers = numbers;
                if or {
                    self.record_root(&children);
                }
            }
            if numbers.pn >= limit.pn || numbers.dn >= limit.dn || self.aborted {
                break;
            }
            let (i, child_limit) = match self.shared {
                None => select(or, &children, limit, |_| false),
                Some(shared) => select(or, &children, limit, |c| shared.is_busy(c.key)),
            };
            let (ck, zeroing, cpos) = (children[i].key, children[i].zeroing, children[i].pos);
            let pushed = self.path.push(ck, zeroing);
            let r = self.search(&cpos, ck, child_limit);
            self.path.pop(pushed);
            children[i].numbers = r?;
            // Transpositions: unsolved siblings may have been searched below the chosen child.
            for (j, c) in children.iter_mut().enumerate() {
                if j != i
                    && !c.numbers.is_solved()
                    && let Some(n) = self.reread(c)
                {
                    c.numbers = n;
                }
            }
        }
        let work = old
            .map_or(0, |e| e.work)
            .saturating_add((self.nodes - start_nodes) as u32);
        let best = if numbers.is_solved() {
            best as u16
        } else {
            NO_MOVE
        };
        if or && numbers.pn == 0 {
            self.tt.record_proof(key ^ self.prover_word, best, work);
        }
        self.store(key, numbers, work, best);
        Ok(numbers)
    }

    /// What the win search knows of each root move (the root is an OR node).
    fn record_root(&mut self, children: &[Child]) {
        self.root_moves = children
            .iter()
            .map(|c| {
                let status = match (c.numbers.pn, c.numbers.dn) {
                    (0, _) => MoveStatus::Wins,
                    (_, 0) => MoveStatus::Fails,
                    (pn, dn) => MoveStatus::Open { pn, dn },
                };
                (c.mv, status)
            })
            .collect();
    }

    /// Search the root (at the top of the path) without limits, for `self.prover`.
    pub fn search_root(&mut self, root: &Position) -> Result<Numbers, ProveError> {
        let n = self.search(root, hash::key(root), Numbers::UNLIMITED)?;
        self.root_numbers = n;
        Ok(n)
    }

    /// Search `pos` on its own (a path of just itself) until it is solved or the budget ends:
    /// `Some(true)` disproved, `Some(false)` proved, `None` unknown.
    pub fn settle(&mut self, pos: &Position, key: u64) -> Result<Option<bool>, ProveError> {
        if self.aborted {
            return Ok(None);
        }
        let saved = std::mem::replace(&mut self.path, Path::detached(key));
        let n = self.search(pos, key, Numbers::UNLIMITED);
        self.path = saved;
        let n = n?;
        Ok(match (n.pn, n.dn) {
            (_, 0) => Some(true),
            (0, _) => Some(false),
            _ => None,
        })
    }
}

/// Numbers of a node from its children's, and the child that decides them.
pub(super) fn combine(or: bool, children: &[Child]) -> (Numbers, usize) {
    // The selecting side: the smallest pn at OR nodes, the smallest dn at AND nodes.
    let selecting = |c: &Child| if or { c.numbers.pn } else { c.numbers.dn };
    let (best, first) = children
        .iter()
        .enumerate()
        .map(|(i, c)| (i, selecting(c)))
        .min_by_key(|&(_, s)| s)
        .expect("an expanded node has moves");
    let rest = total(
        children
            .iter()
            .map(|c| if or { c.numbers.dn } else { c.numbers.pn }),
    );
    let rest = rest.min(u64::from(CAP)) as u32;
    let n = match (first, rest) {
        (0, _) if or => Numbers::PROVEN,
        (0, _) => Numbers::DISPROVEN,
        (_, 0) if or => Numbers::DISPROVEN,
        (_, 0) => Numbers::PROVEN,
        (f, r) if or => Numbers { pn: f, dn: r },
        (f, r) => Numbers { pn: r, dn: f },
    };
    (n, best)
}

/// The most-proving child and its limit. In a parallel search a defender's reply another thread
/// is searching (`busy`) counts with its disproof number [`VIRTUAL`] times over (a virtual
/// disproof number, after Kaneko's parallel df-pn), so threads spread over the replies, all of
/// which a proof needs; the prover's moves keep their numbers, so threads go down the most
/// proving move together and part at the next defender's turn (measured on four wins with the
/// <=4 tables: 1.e3 b5 2.Bxb5 h6 in a mean 14.3e6 nodes over six runs instead of 22.0e6 over
/// seven with both doubled, and 0-22 % fewer on three shorter ones). The numbers stored and
/// combined are never the virtual ones, and when the child so chosen could not be searched
/// within its limit, the truly best one is taken.
pub(super) fn select(
    or: bool,
    children: &[Child],
    limit: Numbers,
    busy: impl Fn(&Child) -> bool,
) -> (usize, Numbers) {
    if or {
        return select_by(or, children, limit, &|_| false);
    }
    let (i, l) = select_by(or, children, limit, &busy);
    let chosen = children[i].numbers.dn;
    if chosen < l.dn {
        (i, l)
    } else {
        select_by(or, children, limit, &|_| false)
    }
}

/// How many times over a busy reply's disproof number counts in [`select`].
const VIRTUAL: u32 = 3;

/// [`select`] with the selecting numbers of busy children counted [`VIRTUAL`] times over.
fn select_by(
    or: bool,
    children: &[Child],
    limit: Numbers,
    busy: &impl Fn(&Child) -> bool,
) -> (usize, Numbers) {
    // On the selecting side (pn at OR nodes, dn at AND nodes) take the smallest, remember the
    // second smallest; the other side is totalled.
    let selecting = |c: &Child| {
        let s = if or { c.numbers.pn } else { c.numbers.dn };
        if s != 0 && s < CAP && busy(c) {
            s.saturating_mul(VIRTUAL).min(CAP)
        } else {
            s
        }
    };
    let other = |c: &Child| if or { c.numbers.dn } else { c.numbers.pn };
    let mut best = 0;
    let mut first = INF;
    let mut second = INF;
    for (i, c) in children.iter().enumerate() {
        let s = selecting(c);
        if s < first {
            second = first;
            first = s;
            best = i;
        } else if s < second {
            second = s;
        }
    }
    let sum = total(children.iter().map(other));
    let (limit_sel, limit_other) = if or {
        (limit.pn, limit.dn)
    } else {
        (limit.dn, limit.pn)
    };
    let child_sel = if second >= CAP {
        limit_sel
    } else {
        let grown = u64::from(second) + u64::from(second) / 4 + 1;
        limit_sel.min(grown.min(u64::from(CAP)) as u32)
    };
    let child_other = if limit_other == INF {
        INF
    } else {
        let rest = sum - u64::from(other(&children[best]));
        (u64::from(limit_other).saturating_sub(rest)).min(u64::from(CAP)) as u32
    };
    let child_limit = if or {
        Numbers {
            pn: child_sel,
            dn: child_other,
        }
    } else {
        Numbers {
            pn: child_other,
            dn: child_sel,
        }
    };
    (best, child_limit)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn select_gives_limits_above_the_child() {
        let p = Position::startpos();
        let mv = p.legal_moves()[0];
        let child = |pn, dn| Child {
            mv,
            pos: p,
            key: 0,
            zeroing: false,
            numbers: Numbers { pn, dn },
        };
        let children = vec![child(3, 5), child(4, 2), child(9, 1)];
        let limit = Numbers { pn: 100, dn: 50 };
        let (i, l) = select(true, &children, limit, |_| false);
        assert_eq!(i, 0);
        assert!(l.pn > 3 && l.pn <= 100);
        assert_eq!(l.dn, 50 - 3);
        let (i, l) = select(false, &children, limit, |_| false);
        assert_eq!(i, 2);
        assert_eq!(l.pn, 100 - 7);
        assert!(l.dn > 1);
        assert_eq!(combine(true, &children), (Numbers { pn: 3, dn: 8 }, 0));
        assert_eq!(combine(false, &children), (Numbers { pn: 16, dn: 1 }, 2));

        // The prover's moves: another thread in child 0 changes nothing.
        let busy0 = |c: &Child| c.numbers.pn == 3;
        assert_eq!(
            select(true, &children, limit, busy0),
            select(true, &children, limit, |_| false)
        );
        // The defender's replies: another thread in child 2 (dn 1, counted 3): child 1 (dn 2)
        // is taken, with a limit above its dn from the virtual 3.
        let busy2 = |c: &Child| c.numbers.dn == 1;
        let (i, l) = select(false, &children, limit, busy2);
        assert_eq!(i, 1);
        // (The 1+ε limit: 3 + 3/4 rounded down + 1.)
        assert!(l.dn > 2 && l.dn <= 4, "{l:?}");
        assert_eq!(l.pn, 100 - 3 - 9);
        // Far apart (9 against 3): the busy reply stays the choice.
        let far = vec![child(3, 1), child(9, 9)];
        assert_eq!(select(false, &far, limit, busy2).0, 0);
        // A chosen reply that could not be searched within the node's limit gives way to the
        // truly best one.
        let (i, l) = select(false, &children, Numbers { pn: 100, dn: 2 }, busy2);
        assert_eq!((i, l.dn), (2, 2));
    }
}
