//! The solver proper: phases 1–4 of the module doc, for one table and one metric.

use super::{GenError, MAX_DISTANCE, Metric, Table, TableSource, Value, resolve};
use crate::index::{Index, transform_square};
use crate::material::Material;
use crate::rules::attacks::piece_attacks;
use crate::rules::{Bitboard, Board, Color, MoveList, Position, Role, Square};
use crate::value::PENDING;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Slots per parallel work item (a multiple of 64).
const CHUNK: u64 = 4096;
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

struct Solver<'a> {
    index: Index,
    material: Material,
    metric: Metric,
    source: &'a dyn TableSource,
    slots: [Vec<AtomicU16>; 2],
    /// One bit per slot: a quiet predecessor of a newly won position, to be checked for a loss.
    candidates: [Vec<AtomicU64>; 2],
    /// One bit per slot: a valid position without capture (what a file must store).
    quiet: [Vec<AtomicU64>; 2],
    max_level: AtomicU32,
    /// `decided[d]`: some slot of the current group holds `W(d)` or `L(d)` (an event source
    /// for level `d + 1`). `pending_win[d]`: some slot waits for its baseline `W(d)`.
    /// Levels with neither are skipped without a scan.
    decided: Vec<AtomicBool>,
    pending_win: Vec<AtomicBool>,
}

/// Generate one table: every position of `material` (any orientation; the canonical one is
/// used), both sides to move, in `metric`. Tables reached by captures and promotions come from
/// `source`. The result is the same for any number of rayon threads.
pub fn generate(
    material: Material,
    metric: Metric,
    source: &dyn TableSource,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Table, GenError> {
    let material = material.canonical();
    let index = Index::new(material);
    let n = index.size() as usize;
    let mk = || (0..n).map(|_| AtomicU16::new(0)).collect::<Vec<_>>();
    let flags = || {
        (0..=MAX_DISTANCE as usize + 1)
            .map(|_| AtomicBool::new(false))
            .collect::<Vec<_>>()
    };
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
        decided: flags(),
        pending_win: flags(),
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

impl Solver<'_> {
    #[inline]
    fn load(&self, side: usize, idx: u64) -> u16 {
        self.slots[side][idx as usize].load(Relaxed)
    }

    #[inline]
    fn store(&self, side: usize, idx: u64, v: Value) {
        self.slots[side][idx as usize].store(v.code(), Relaxed);
        if v.is_win() || v.is_loss() {
            let d = u32::from(v.distance());
            self.max_level.fetch_max(d, Relaxed);
            Self::flag(&self.decided, d);
        }
    }

    #[inline]
    fn flag(flags: &[AtomicBool], d: u32) {
        let f = &flags[d as usize];
        if !f.load(Relaxed) {
            f.store(true, Relaxed);
        }
    }

    /// Slot of a position of this table (same orientation as the table's slots).
    #[inline]
    fn slot_of(&self, pos: &Position) -> (usize, u64) {
        (pos.turn().index(), self.index.encode_board(pos.board()))
    }

    /// Value of a position after a zeroing move: another table, or this one (a pawn push into
    /// an already solved configuration).
    fn child_value(&self, child: &Position) -> Result<Value, GenError> {
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
                self.source.stored_value(p, self.metric)
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
    fn init_captures(&self) -> Result<(), GenError> {
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

    fn child_value_capture(&self, pos: &Position) -> Result<Value, GenError> {
        resolve(pos, self.metric, &mut |p: &Position| {
            self.source.stored_value(p, self.metric)
        })
    }

    /// Phase 2: baselines of the quiet positions of one group; stalemates.
    fn init_quiet(&self, chunks: &[Range<u64>]) -> Result<(), GenError> {
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
            Ok::<(), GenError>(())
        })?;
        // Levels of values already decided in this group (captures, stalemates, baselines).
        for f in self.decided.iter().chain(&self.pending_win) {
            f.store(false, Relaxed);
        }
        let top = chunks
            .par_iter()
            .map(|r| {
                let mut m = 0u32;
                for idx in r.clone() {
                    for side in 0..2 {
                        let code = self.load(side, idx);
                        let v = Value(code & !PENDING);
                        if v.is_win() || v.is_loss() {
                            let d = u32::from(v.distance());
                            if code & PENDING == 0 {
                                Self::flag(&self.decided, d);
                                m = m.max(d);
                            } else if v.is_win() {
                                Self::flag(&self.pending_win, d);
                                m = m.max(d);
                            }
                        }
                    }
                }
                m
            })
            .max()
            .unwrap_or(0);
        self.max_level.store(top, Relaxed);
        Ok(())
    }

    /// Phase 3: the level-by-level retrograde passes.
    fn levels(&self, chunks: &[Range<u64>], report: &(dyn Fn(u32) + Sync)) -> Result<(), GenError> {
        let mut n: u32 = 1;
        while n <= self.max_level.load(Relaxed) + 1 {
            if n > u32::from(super::MAX_DISTANCE) {
                return Err(GenError::Source(format!(
                    "{}: distance beyond {}",
                    self.material,
                    super::MAX_DISTANCE
                )));
            }
            if !self.decided[n as usize - 1].load(Relaxed)
                && !self.pending_win[n as usize].load(Relaxed)
            {
                n += 1;
                continue;
            }
            report(n);
            let lose_prev = Value::loss((n - 1) as u16).code();
            let win_prev = Value::win((n - 1) as u16).code();
            let win_pending = PENDING | Value::win(n as u16).code();
            chunks.par_iter().for_each(|r| {
                for idx in r.clone() {
                    for side in 0..2 {
                        let code = self.load(side, idx);
                        if code == lose_prev {
                            self.propagate_win(side, idx, n);
                        } else if code == win_prev {
                            self.mark_candidates(side, idx);
                        } else if code == win_pending {
                            self.store(side, idx, Value::win(n as u16));
                        }
                    }
                }
            });
            chunks.par_iter().for_each(|r| {
                for side in 0..2 {
                    for w in (r.start / 64)..r.end.div_ceil(64) {
                        let mut bits = self.candidates[side][w as usize].swap(0, Relaxed);
                        while bits != 0 {
                            let idx = w * 64 + u64::from(bits.trailing_zeros());
                            bits &= bits - 1;
                            self.check_loss(side, idx, n);
                        }
                    }
                }
            });
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
    fn propagate_win(&self, side: usize, idx: u64, n: u32) {
        self.for_each_quiet(side, idx, Self::color_of(1 - side), |ps, pi| {
            if self.load(ps, pi) & PENDING != 0 {
                self.store(ps, pi, Value::win(n as u16));
            }
        });
    }

    /// `(side, idx)` is `W(n−1)`: its undecided quiet predecessors that could be lost (no
    /// zeroing move that draws or wins) become candidates for [`Solver::check_loss`].
    fn mark_candidates(&self, side: usize, idx: u64) {
        self.for_each_quiet(side, idx, Self::color_of(1 - side), |ps, pi| {
            let code = self.load(ps, pi);
            if code & PENDING == 0 {
                return;
            }
            let baseline = Value(code & !PENDING);
            if baseline.0 == 0 || baseline.is_loss() {
                self.candidates[ps][(pi / 64) as usize].fetch_or(1 << (pi % 64), Relaxed);
            }
        });
    }

    /// A candidate whose every quiet non-pawn move leads to a win decided before level `n` is
    /// lost: `L(n)`, or `L(b)` if its best zeroing move loses more slowly.
    fn check_loss(&self, side: usize, idx: u64, n: u32) {
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
            self.store(side, idx, Value::loss(d as u16));
        }
    }

    /// Phase 4: what is still undecided is a draw.
    fn finish(&self, chunks: &[Range<u64>]) {
        chunks.par_iter().for_each(|r| {
            for idx in r.clone() {
                for side in 0..2 {
                    if self.load(side, idx) & PENDING != 0 {
                        self.store(side, idx, Value::DRAW);
                    }
                }
            }
        });
    }
}
