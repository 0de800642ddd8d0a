//! The solver proper: phases 1–4 of the module doc, for one table and one metric.

use super::{GenError, TableSource};
use crate::rules::attacks::piece_attacks;
use crate::rules::{Bitboard, Board, Color, MoveList, Position, Role, Square};
use crate::table::{
    Index, MAX_DISTANCE, Material, Metric, PENDING, Table, Value, resolve, transform_square,
};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Slots per parallel work item (a multiple of 64).
const CHUNK: u64 = 4096;
/// Frontier entries per parallel work item.
const LIST_CHUNK: usize = 1024;
/// Marks a quiet slot whose group has not been initialised yet.
const QUIET_UNINIT: u16 = PENDING | 0x7fff;

/// What the solver is doing, for progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    pub material: Material,
    pub metric: Metric,
    /// "captures", "init", "levels", "done".
    pub phase: &'static str,
    /// Pawn-configuration group being solved (0-based) and how many there are.
    pub group: usize,
    pub groups: usize,
    /// Current level (ply distance) during "levels".
    pub level: u32,
}

struct Solver<'a, S: ?Sized> {
    index: Index,
    material: Material,
    metric: Metric,
    source: &'a S,
    slots: [Vec<AtomicU16>; 2],
    /// One bit per slot: a quiet predecessor of a newly won position, to be checked for a loss.
    candidates: [Vec<AtomicU64>; 2],
    /// One bit per slot: a valid position without capture (what a file must store).
    quiet: [Vec<AtomicU64>; 2],
    max_level: AtomicU32,
    /// The frontier of the current group: which slots each level must visit.
    frontier: Mutex<Frontier>,
}

/// A frontier entry: `idx * 2 + side` (slot of a position), or `word * 2 + side` (word of the
/// candidate bit set).
type Entry = u32;

/// The slots of one distance in the current group, for the level that visits them.
#[derive(Default)]
enum Bucket {
    /// Every slot of the group with this distance (possibly none).
    #[default]
    Empty,
    Listed(Vec<Entry>),
    /// Too many to list: the level scans the whole group.
    Scan,
}

impl Bucket {
    fn is_empty(&self) -> bool {
        matches!(self, Bucket::Empty)
    }

    fn len(&self) -> usize {
        match self {
            Bucket::Listed(v) => v.len(),
            _ => 0,
        }
    }
}

/// Per-distance lists of the slots decided (or waiting for a baseline win) in the current
/// group, so that level `n` visits only the slots that became `W(n−1)`/`L(n−1)` and the pending
/// `W(n)` baselines instead of scanning the group. A list that would grow past `level_cap`, or
/// past the `total_cap` all lists share, becomes [`Bucket::Scan`] (freed): its level scans the
/// group as without lists. Lists only choose which slots are visited, never a value: a scan
/// visits exactly the slots a complete list holds, so the result does not depend on them.
struct Frontier {
    /// `decided[d]`: slots holding `W(d)` or `L(d)`, events of level `d + 1`.
    decided: Vec<Bucket>,
    /// `pending[d]`: slots waiting for their baseline `W(d)`, placed at level `d`.
    pending: Vec<Bucket>,
    /// Candidate words (`word * 2 + side`) that got their first bit at the current level.
    words: Bucket,
    /// Entries in all lists.
    total: usize,
    total_cap: usize,
    level_cap: usize,
    words_cap: usize,
}

impl Frontier {
    /// Append `items` to `b`, or turn it into [`Bucket::Scan`] if that exceeds a cap.
    fn push(
        b: &mut Bucket,
        items: &[Entry],
        total: &mut usize,
        level_cap: usize,
        total_cap: usize,
    ) {
        if items.is_empty() {
            return;
        }
        let len = b.len();
        match b {
            Bucket::Scan => {}
            _ if len + items.len() > level_cap || *total + items.len() > total_cap => {
                *total -= len;
                *b = Bucket::Scan;
            }
            Bucket::Listed(v) => {
                v.extend_from_slice(items);
                *total += items.len();
            }
            Bucket::Empty => {
                *b = Bucket::Listed(items.to_vec());
                *total += items.len();
            }
        }
    }

    /// Take the bucket of `d` (left empty), releasing its entries from the total.
    fn take(&mut self, pending: bool, d: u32) -> Bucket {
        let b = if pending {
            &mut self.pending[d as usize]
        } else {
            &mut self.decided[d as usize]
        };
        let b = std::mem::take(b);
        self.total -= b.len();
        b
    }
}

/// What one parallel work item decided, for the frontier (flushed at the end of the item).
#[derive(Default)]
struct Sink {
    /// Level being solved; entries of this distance go to `next`, others to `other`.
    level: u32,
    /// Largest distance decided.
    max: u32,
    /// Whether to collect entries of distance `level` (no when its bucket is already `Scan`).
    keep_next: bool,
    next: Vec<Entry>,
    /// `(distance << 32) | entry`.
    other: Vec<u64>,
    /// Candidate words that got their first bit.
    words: Vec<Entry>,
}

/// Generate one table: every position of `material` (any orientation; the canonical one is
/// used), both sides to move, in `metric`. Tables reached by captures and promotions come from
/// `source`. The result is the same for any number of rayon threads.
pub fn generate<S: TableSource + ?Sized>(
    material: Material,
    metric: Metric,
    source: &S,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Table, GenError<S::Error>> {
    let material = material.canonical();
    let index = Index::new(material);
    let n = index.size() as usize;
    let mk = || (0..n).map(|_| AtomicU16::new(0)).collect::<Vec<_>>();
    let flags = || {
        (0..=MAX_DISTANCE as usize + 1)
            .map(|_| Bucket::Empty)
            .collect::<Vec<_>>()
    };
    // Entries must fit in an `Entry`.
    let lists = (2 * n as u64) <= u64::from(Entry::MAX);
    let bits = || {
        (0..n.div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect::<Vec<_>>()
    };
    let solver = Solver {
        index,
        material,
        metric,
        source,
        slots: [mk(), mk()],
        candidates: [bits(), bits()],
        quiet: [bits(), bits()],
        max_level: AtomicU32::new(0),
        frontier: Mutex::new(Frontier {
            decided: flags(),
            pending: flags(),
            words: Bucket::Empty,
            total: 0,
            // At most n/8 entries: 0.25 byte per slot and side (0.5 with the slack of growing
            // vectors), so the solver's 4.5 n bytes stay below the writer's 6.25 n peak
            // (`build::Estimate`).
            total_cap: if lists { n / 8 } else { 0 },
            level_cap: 0,
            words_cap: 0,
        }),
    };
    let groups = solver.groups();
    let report = |phase, group, level| {
        progress(&Progress {
            material,
            metric,
            phase,
            group,
            groups: groups.len(),
            level,
        });
    };
    report("captures", 0, 0);
    solver.init_captures()?;
    for (g, ranges) in groups.iter().enumerate() {
        report("init", g, 0);
        let chunks = split(ranges);
        solver.init_quiet(&chunks)?;
        solver.levels(&chunks, &|level| report("levels", g, level))?;
        solver.finish(&chunks);
    }
    report("done", groups.len(), 0);
    let [w, b] = solver.slots;
    let unwrap = |v: Vec<AtomicU16>| {
        v.into_iter()
            .map(AtomicU16::into_inner)
            .collect::<Vec<u16>>()
    };
    let [qw, qb] = solver.quiet;
    let unbits = |v: Vec<AtomicU64>| {
        v.into_iter()
            .map(AtomicU64::into_inner)
            .collect::<Vec<u64>>()
    };
    Ok(Table {
        index: solver.index,
        metric,
        values: [unwrap(w), unwrap(b)],
        quiet: [unbits(qw), unbits(qb)],
    })
}

/// Cut ranges into chunk-aligned work items.
fn split(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for r in ranges {
        let mut s = r.start;
        while s < r.end {
            let e = ((s / CHUNK + 1) * CHUNK).min(r.end);
            out.push(s..e);
            s = e;
        }
    }
    out
}

impl<S: TableSource + ?Sized> Solver<'_, S> {
    #[inline]
    fn load(&self, side: usize, idx: u64) -> u16 {
        self.slots[side][idx as usize].load(Relaxed)
    }

    /// Note that `(side, idx)` now holds the win or loss `v`.
    #[inline]
    fn decided(&self, sink: &mut Sink, side: usize, idx: u64, v: Value) {
        let d = u32::from(v.distance());
        sink.max = sink.max.max(d);
        let e = (idx * 2 + side as u64) as Entry;
        if d == sink.level {
            if sink.keep_next {
                sink.next.push(e);
            }
        } else {
            sink.other.push(u64::from(d) << 32 | u64::from(e));
        }
    }

    /// Store the win or loss `v` in `(side, idx)`.
    #[inline]
    fn store(&self, sink: &mut Sink, side: usize, idx: u64, v: Value) {
        self.slots[side][idx as usize].store(v.code(), Relaxed);
        self.decided(sink, side, idx, v);
    }

    /// Store the win or loss `v` in `(side, idx)` if it still holds `old`; at a level, every
    /// write to a slot writes the same value, so exactly one writer succeeds.
    #[inline]
    fn store_if(&self, sink: &mut Sink, side: usize, idx: u64, old: u16, v: Value) {
        if self.slots[side][idx as usize]
            .compare_exchange(old, v.code(), Relaxed, Relaxed)
            .is_ok()
        {
            self.decided(sink, side, idx, v);
        }
    }

    /// Hand what `sink` collected to the frontier.
    fn flush(&self, sink: &mut Sink) {
        if sink.max > self.max_level.load(Relaxed) {
            self.max_level.fetch_max(sink.max, Relaxed);
        }
        if sink.next.is_empty() && sink.other.is_empty() && sink.words.is_empty() {
            return;
        }
        let mut guard = self.frontier.lock().expect("frontier lock");
        let f = &mut *guard;
        let (level_cap, total_cap) = (f.level_cap, f.total_cap);
        Frontier::push(
            &mut f.decided[sink.level as usize],
            &sink.next,
            &mut f.total,
            level_cap,
            total_cap,
        );
        for &x in &sink.other {
            Frontier::push(
                &mut f.decided[(x >> 32) as usize],
                &[x as Entry],
                &mut f.total,
                level_cap,
                total_cap,
            );
        }
        let words_cap = f.words_cap;
        Frontier::push(
            &mut f.words,
            &sink.words,
            &mut f.total,
            words_cap,
            total_cap,
        );
        drop(guard);
        sink.next.clear();
        sink.other.clear();
        sink.words.clear();
    }

    /// Slot of a position of this table (same orientation as the table's slots).
    #[inline]
    fn slot_of(&self, pos: &Position) -> (usize, u64) {
        (pos.turn().index(), self.index.encode_board(pos.board()))
    }

    /// Value of a position after a zeroing move: another table, or this one (a pawn push into
    /// an already solved configuration).
    fn child_value(&self, child: &Position) -> Result<Value, GenError<S::Error>> {
        resolve(child, self.metric, &mut |p: &Position| {
            if Material::of_position(p) == self.material {
                let (s, i) = self.slot_of(p);
                let code = self.load(s, i);
                debug_assert!(
                    code & PENDING == 0,
                    "pawn push into an unsolved configuration"
                );
                Ok(Value(code))
            } else {
                self.source
                    .stored_value(p, self.metric)
                    .map_err(GenError::Source)
            }
        })
    }

    /// Pawn-configuration groups, most advanced first; each is a list of index ranges.
    fn groups(&self) -> Vec<Vec<Range<u64>>> {
        let digits = self.index.pawn_digits();
        if digits == 0 {
            return vec![vec![0..self.index.size()]];
        }
        let cs = self.index.config_size();
        let mut by_adv: BTreeMap<u32, Vec<Range<u64>>> = BTreeMap::new();
        for c in 0..self.index.size() / cs {
            if let Some(pawns) = self.index.config_pawns(c) {
                let adv: u32 = pawns
                    .iter()
                    .map(|&(col, sq)| {
                        if col.is_white() {
                            sq.rank()
                        } else {
                            7 - sq.rank()
                        }
                    })
                    .sum();
                by_adv.entry(adv).or_default().push(c * cs..(c + 1) * cs);
            }
        }
        by_adv.into_values().rev().collect()
    }

    /// Phase 1: invalid slots, and positions with a capture (decided from smaller tables).
    fn init_captures(&self) -> Result<(), GenError<S::Error>> {
        let all = 0..self.index.size();
        let chunks = split(std::slice::from_ref(&all));
        chunks.par_iter().try_for_each(|r| {
            for idx in r.clone() {
                for side in 0..2 {
                    let code = match self.index.decode(side, idx) {
                        None => Value::INVALID.code(),
                        Some(pos) if pos.has_capture() => self.child_value_capture(&pos)?.code(),
                        Some(_) => {
                            self.quiet[side][(idx / 64) as usize]
                                .fetch_or(1 << (idx % 64), Relaxed);
                            QUIET_UNINIT
                        }
                    };
                    self.slots[side][idx as usize].store(code, Relaxed);
                }
            }
            Ok(())
        })
    }

    fn child_value_capture(&self, pos: &Position) -> Result<Value, GenError<S::Error>> {
        resolve(pos, self.metric, &mut |p: &Position| {
            self.source
                .stored_value(p, self.metric)
                .map_err(GenError::Source)
        })
    }

    /// Phase 2: baselines of the quiet positions of one group; stalemates.
    fn init_quiet(&self, chunks: &[Range<u64>]) -> Result<(), GenError<S::Error>> {
        chunks.par_iter().try_for_each(|r| {
            let mut list = MoveList::new();
            for idx in r.clone() {
                for side in 0..2 {
                    if self.load(side, idx) != QUIET_UNINIT {
                        continue;
                    }
                    let pos = self.index.decode_valid(side, idx);
                    list.clear();
                    pos.quiet_moves(&mut list);
                    let v = if list.is_empty() {
                        Value::win(0)
                    } else {
                        let mut baseline: Option<Value> = None;
                        let mut others = 0;
                        for m in list.iter() {
                            if m.role == Role::Pawn {
                                let v = self.metric.zeroing(self.child_value(&pos.after(m))?);
                                baseline = Some(baseline.map_or(v, |b| b.max(v)));
                            } else {
                                others += 1;
                            }
                        }
                        match baseline {
                            Some(b) if others == 0 => b,
                            b => Value(PENDING | b.map_or(0, Value::code)),
                        }
                    };
                    self.slots[side][idx as usize].store(v.code(), Relaxed);
                }
            }
            Ok::<(), GenError<S::Error>>(())
        })?;
        self.init_frontier(chunks);
        Ok(())
    }

    /// The frontier of a group before its levels: the values already decided (captures,
    /// stalemates, baselines) and the pending baseline wins, counted by distance; the distances
    /// with fewest slots are listed while the caps allow, the others are scanned for.
    fn init_frontier(&self, chunks: &[Range<u64>]) {
        // Per distance: (decided slots, pending wins).
        let hist = chunks
            .par_iter()
            .fold(Vec::<(u64, u64)>::new, |mut h, r| {
                for idx in r.clone() {
                    for side in 0..2 {
                        let code = self.load(side, idx);
                        let v = Value(code & !PENDING);
                        if v.is_win() || v.is_loss() {
                            let d = usize::from(v.distance());
                            if code & PENDING == 0 || v.is_win() {
                                if h.len() <= d {
                                    h.resize(d + 1, (0, 0));
                                }
                                if code & PENDING == 0 {
                                    h[d].0 += 1;
                                } else {
                                    h[d].1 += 1;
                                }
                            }
                        }
                    }
                }
                h
            })
            .reduce(Vec::new, |mut a, b| {
                if a.len() < b.len() {
                    a.resize(b.len(), (0, 0));
                }
                for (x, y) in a.iter_mut().zip(b) {
                    x.0 += y.0;
                    x.1 += y.1;
                }
                a
            });
        self.max_level
            .store(hist.len().saturating_sub(1) as u32, Relaxed);
        let group_slots: u64 = 2 * chunks.iter().map(|r| r.end - r.start).sum::<u64>();
        let mut guard = self.frontier.lock().expect("frontier lock");
        let f = &mut *guard;
        f.decided.fill_with(Bucket::default);
        f.pending.fill_with(Bucket::default);
        f.words = Bucket::Empty;
        f.total = 0;
        // A level visits a listed slot at a few times the cost of scanning one.
        f.level_cap = (group_slots / 8) as usize;
        f.words_cap = (group_slots / 64 / 4) as usize;
        // Smallest counts first: they save the most scanning per listed entry.
        let mut order: Vec<(u64, bool, usize)> = hist
            .iter()
            .enumerate()
            .flat_map(|(d, &(dec, pen))| [(dec, false, d), (pen, true, d)])
            .filter(|&(c, _, _)| c > 0)
            .collect();
        order.sort_unstable();
        let mut budget = f.total_cap as u64;
        // listed[d]: bit 0 the decided slots of distance d are listed, bit 1 the pending wins.
        let mut listed = vec![0u8; hist.len()];
        for (c, pending, d) in order {
            let b = if pending {
                &mut f.pending[d]
            } else {
                &mut f.decided[d]
            };
            if c <= f.level_cap as u64 && c <= budget {
                budget -= c;
                listed[d] |= 1 << u8::from(pending);
                *b = Bucket::Listed(Vec::with_capacity(c as usize));
            } else {
                *b = Bucket::Scan;
            }
        }
        drop(guard);
        chunks.par_iter().for_each_init(Vec::new, |out, r| {
            for idx in r.clone() {
                for side in 0..2 {
                    let code = self.load(side, idx);
                    let v = Value(code & !PENDING);
                    if v.is_win() || v.is_loss() {
                        let pending = code & PENDING != 0;
                        let d = usize::from(v.distance());
                        if (!pending || v.is_win()) && listed[d] >> u8::from(pending) & 1 != 0 {
                            out.push((d, pending, (idx * 2 + side as u64) as Entry));
                        }
                    }
                }
            }
            if !out.is_empty() {
                let mut f = self.frontier.lock().expect("frontier lock");
                f.total += out.len();
                for &(d, pending, e) in out.iter() {
                    let b = if pending {
                        &mut f.pending[d]
                    } else {
                        &mut f.decided[d]
                    };
                    if let Bucket::Listed(v) = b {
                        v.push(e);
                    }
                }
                out.clear();
            }
        });
    }

    /// Phase 3: the level-by-level retrograde passes. Level `n` visits the slots of
    /// `decided[n − 1]` and `pending[n]` (their lists, or a scan of the group when either is
    /// [`Bucket::Scan`]), then the candidate words that got a bit (their list, or a scan of the
    /// bit set); levels with nothing to visit are skipped.
    fn levels(
        &self,
        chunks: &[Range<u64>],
        report: &(dyn Fn(u32) + Sync),
    ) -> Result<(), GenError<S::Error>> {
        let mut n: u32 = 1;
        while n <= self.max_level.load(Relaxed) + 1 {
            if n > u32::from(MAX_DISTANCE) {
                return Err(GenError::TooLong {
                    material: self.material,
                });
            }
            let (events, pending, keep_next) = {
                let mut f = self.frontier.lock().expect("frontier lock");
                let events = f.take(false, n - 1);
                let pending = f.take(true, n);
                let keep_next = !matches!(f.decided[n as usize], Bucket::Scan);
                (events, pending, keep_next)
            };
            if events.is_empty() && pending.is_empty() {
                n += 1;
                continue;
            }
            report(n);
            let new_sink = || Sink {
                level: n,
                keep_next,
                ..Sink::default()
            };
            let lose_prev = Value::loss((n - 1) as u16).code();
            let win_prev = Value::win((n - 1) as u16).code();
            let win_pending = PENDING | Value::win(n as u16).code();
            let win = Value::win(n as u16);
            let event = |sink: &mut Sink, side: usize, idx: u64, code: u16| {
                if code == lose_prev {
                    self.propagate_win(sink, side, idx, n);
                } else if code == win_prev {
                    self.mark_candidates(sink, side, idx);
                } else if code == win_pending {
                    self.store_if(sink, side, idx, code, win);
                }
            };
            if matches!(events, Bucket::Scan) || matches!(pending, Bucket::Scan) {
                drop((events, pending));
                chunks.par_iter().for_each_init(new_sink, |sink, r| {
                    for idx in r.clone() {
                        for side in 0..2 {
                            event(sink, side, idx, self.load(side, idx));
                        }
                    }
                    self.flush(sink);
                });
            } else {
                for list in [pending, events] {
                    if let Bucket::Listed(list) = list {
                        list.par_chunks(LIST_CHUNK)
                            .for_each_init(new_sink, |sink, part| {
                                for &e in part {
                                    let (side, idx) = ((e & 1) as usize, u64::from(e >> 1));
                                    event(sink, side, idx, self.load(side, idx));
                                }
                                self.flush(sink);
                            });
                    }
                }
            }
            let words = std::mem::take(&mut self.frontier.lock().expect("frontier lock").words);
            let check_word = |sink: &mut Sink, side: usize, w: u64| {
                let word = &self.candidates[side][w as usize];
                if word.load(Relaxed) == 0 {
                    return;
                }
                let mut bits = word.swap(0, Relaxed);
                while bits != 0 {
                    let idx = w * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    self.check_loss(sink, side, idx, n);
                }
            };
            match words {
                Bucket::Empty => {}
                Bucket::Listed(list) => {
                    self.frontier.lock().expect("frontier lock").total -= list.len();
                    list.par_chunks(LIST_CHUNK / 4)
                        .for_each_init(new_sink, |sink, part| {
                            for &e in part {
                                check_word(sink, (e & 1) as usize, u64::from(e >> 1));
                            }
                            self.flush(sink);
                        });
                }
                Bucket::Scan => {
                    chunks.par_iter().for_each_init(new_sink, |sink, r| {
                        for side in 0..2 {
                            for w in (r.start / 64)..r.end.div_ceil(64) {
                                check_word(sink, side, w);
                            }
                        }
                        self.flush(sink);
                    });
                }
            }
            n += 1;
        }
        Ok(())
    }

    /// Call `f(slot side, slot index)` for every quiet non-pawn move of `mover`'s pieces from
    /// slot `(side, idx)`. With `mover` = the side to move these are the forward moves; with
    /// `mover` = the other side they are the un-moves (non-pawn movement is symmetric).
    ///
    /// Fast path: with a unique leading piece, the position's index under each symmetry that
    /// keeps the leading piece in its domain (one, or two on the diagonal) is known, and moving
    /// another unique piece changes one digit of each; the canonical index is the smallest.
    /// Other moves re-encode the board.
    #[inline]
    fn for_each_quiet(&self, side: usize, idx: u64, mover: Color, mut f: impl FnMut(usize, u64)) {
        let ix = &self.index;
        let sq = ix.squares(idx);
        let k = ix.pieces();
        let mut occ = Bitboard::EMPTY;
        for &s in &sq[..k] {
            occ = occ.with(Square::new(u32::from(s)));
        }
        let mut board: Option<Board> = None;
        let get_board = |board: &mut Option<Board>| {
            *board.get_or_insert_with(|| *ix.decode_valid(side, idx).board())
        };
        // (symmetry, index under it); the identity's index is `idx` itself.
        let mut bases = [(0u8, idx); 2];
        let mut nb = 0;
        if let Some(mask) = ix.lead_symmetries(sq[0]) {
            nb = 1;
            let mut rest = mask & !1;
            while rest != 0 && nb < 2 {
                let t = rest.trailing_zeros() as u8;
                rest &= rest - 1;
                if let Some(e) = ix.encode_under(&get_board(&mut board), t) {
                    bases[nb] = (t, e);
                    nb += 1;
                }
            }
            if rest != 0 {
                nb = 0;
            }
        }
        let out_side = 1 - side;
        for (j, &s) in sq.iter().enumerate().take(k) {
            let (piece, unique) = ix.digit_piece(j);
            if piece.color != mover || piece.role == Role::Pawn {
                continue;
            }
            let from = Square::new(u32::from(s));
            for to in piece_attacks(piece.role, from, occ) & !occ {
                let out = if nb > 0 && unique && j > 0 {
                    let w = ix.weight(j) as i64;
                    let mut best = u64::MAX;
                    for &(t, e) in &bases[..nb] {
                        let (a, b) = (
                            transform_square(t, from).index() as i64,
                            transform_square(t, to).index() as i64,
                        );
                        best = best.min((e as i64 + (b - a) * w) as u64);
                    }
                    best
                } else if nb > 0 && j == 0 && ix.lead_symmetries(to.index() as u8) == Some(1) {
                    // The leading piece moves inside its domain, off the symmetry axes.
                    let lead = ix.weight(0) as i64;
                    let (a, b) = (ix.domain_number(from) as i64, ix.domain_number(to) as i64);
                    (idx as i64 + (b - a) * lead) as u64
                } else {
                    let mut b = get_board(&mut board);
                    b.clear(from);
                    b.put(to, piece);
                    ix.encode_board(&b)
                };
                f(out_side, out);
            }
        }
    }

    #[inline]
    fn color_of(side: usize) -> Color {
        if side == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// `(side, idx)` is `L(n−1)`: its undecided quiet predecessors win in `n`.
    fn propagate_win(&self, sink: &mut Sink, side: usize, idx: u64, n: u32) {
        self.for_each_quiet(side, idx, Self::color_of(1 - side), |ps, pi| {
            let code = self.load(ps, pi);
            if code & PENDING != 0 {
                self.store_if(sink, ps, pi, code, Value::win(n as u16));
            }
        });
    }

    /// `(side, idx)` is `W(n−1)`: its undecided quiet predecessors that could be lost (no
    /// zeroing move that draws or wins) become candidates for [`Solver::check_loss`].
    fn mark_candidates(&self, sink: &mut Sink, side: usize, idx: u64) {
        self.for_each_quiet(side, idx, Self::color_of(1 - side), |ps, pi| {
            let code = self.load(ps, pi);
            if code & PENDING == 0 {
                return;
            }
            let baseline = Value(code & !PENDING);
            if baseline.0 == 0 || baseline.is_loss() {
                let (w, bit) = (pi / 64, 1 << (pi % 64));
                let word = &self.candidates[ps][w as usize];
                if word.load(Relaxed) & bit == 0 && word.fetch_or(bit, Relaxed) == 0 {
                    sink.words.push((w * 2 + ps as u64) as Entry);
                }
            }
        });
    }

    /// A candidate whose every quiet non-pawn move leads to a win decided before level `n` is
    /// lost: `L(n)`, or `L(b)` if its best zeroing move loses more slowly.
    fn check_loss(&self, sink: &mut Sink, side: usize, idx: u64, n: u32) {
        let code = self.load(side, idx);
        if code & PENDING == 0 {
            return;
        }
        let baseline = Value(code & !PENDING);
        let mut all_won = true;
        self.for_each_quiet(side, idx, Self::color_of(side), |cs, ci| {
            if all_won {
                let v = Value(self.load(cs, ci));
                all_won = v.is_win() && u32::from(v.distance()) < n;
            }
        });
        if all_won {
            let d = if baseline.0 == 0 {
                n
            } else {
                n.max(u32::from(baseline.distance()))
            };
            self.store(sink, side, idx, Value::loss(d as u16));
        }
    }

    /// Phase 4: what is still undecided is a draw.
    fn finish(&self, chunks: &[Range<u64>]) {
        chunks.par_iter().for_each(|r| {
            for idx in r.clone() {
                for side in 0..2 {
                    if self.load(side, idx) & PENDING != 0 {
                        self.slots[side][idx as usize].store(Value::DRAW.code(), Relaxed);
                    }
                }
            }
        });
    }
}
