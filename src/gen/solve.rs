//! The solver proper: phases 1–4 of the module doc, for one table and one metric, one *unit*
//! at a time, with one state byte per slot and side to move.
//!
//! # Units
//! A table without pawns is one unit. With pawns, a unit is a batch of pawn configurations of
//! equal total advancement (at most [`SolveOptions::unit_slots`] slots per side, but never less
//! than one configuration): non-pawn moves stay in a configuration, pawn moves raise the
//! advancement, so the units are solved most advanced first and a pawn push always leads into
//! a finished unit, read from the [`ExactStore`]. Memory is one unit's state bytes.
//!
//! # State bytes
//! See [`state`]. A *window* of distances `base .. base + len` is held exactly (a code per kind
//! and distance: win, loss, and with DTW a pending baseline win); decided values below it are
//! `OLD_WIN`/`OLD_LOSS`, values beyond it `FAR_*`. When the levels reach the end of the window
//! it *shifts* to start at the level before the current one: the exact distances of the values
//! that become old are written to a *spill* (an [`ExactStore`] over the unit's slots) and the
//! far values are derived again from their zeroing moves (a far value is always the best of its
//! zeroing moves: a capture position's captures, or a quiet position's pawn moves). A unit
//! ends by merging its spills and its window into exact values in the table's store.

use super::exact::{ExactStore, FrameCache, ScratchError};
use super::hint::{Class, WdlHint};
use super::{GenError, TableSource};
use crate::rules::attacks::piece_attacks;
use crate::rules::{Bitboard, Color, Move, MoveList, Position, Role, Square};
use crate::table::index::{INDEX_SCHEME, Mover};
use crate::table::{
    FRAME, Index, LeadCache, MAX_DISTANCE, Material, Metric, NOT_STORED, Placement, Table,
    TableValues, Value, resolve, resolve_with, searches_captures,
};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Slots per parallel work item (a multiple of 64).
const CHUNK: u64 = 4096;
// The first pass writes a chunk's quiet bits as whole words.
const _: () = assert!(CHUNK.is_multiple_of(64));
/// Frontier entries per parallel work item.
const LIST_CHUNK: usize = 1024;
/// Slots a scan reads in the time one position's moves are visited, for
/// [`Direction::Auto`]'s choice.
const SCAN_SLOTS_PER_VISIT: u64 = 64;

/// The state byte of a slot during a unit's solve.
pub mod state {
    /// No position has this slot.
    pub const INVALID: u8 = 0;
    /// Decided: a draw.
    pub const DRAW: u8 = 1;
    /// Decided win or loss at a distance below the window (exact value spilled).
    pub const OLD_WIN: u8 = 2;
    pub const OLD_LOSS: u8 = 3;
    /// Decided win or loss at a distance beyond the window (the best zeroing move).
    pub const FAR_WIN: u8 = 4;
    pub const FAR_LOSS: u8 = 5;
    /// Undecided quiet position without a zeroing move; `_CAND`: to be checked for a loss.
    pub const PEND_NONE: u8 = 6;
    pub const PEND_NONE_CAND: u8 = 7;
    /// Undecided; its best zeroing move loses (the distance is derived again when needed).
    pub const PEND_LOSS: u8 = 8;
    pub const PEND_LOSS_CAND: u8 = 9;
    /// Undecided; its best zeroing move draws (it can only become a win).
    pub const PEND_DRAW: u8 = 10;
    /// Undecided; its best zeroing move wins beyond the window.
    pub const PEND_WIN_FAR: u8 = 11;
    /// Undecided (DTZ); its best zeroing move is a cursed win `W(101)`.
    pub const PEND_W101: u8 = 12;
    /// First window code.
    pub const WINDOW: u8 = 16;
}

/// Kinds of window codes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    Win,
    Loss,
    /// A pending baseline win (DTW only).
    PendingWin,
}

/// The distances held exactly: `base .. base + len`, with `kinds` codes per distance.
#[derive(Copy, Clone, Debug)]
struct Window {
    base: u32,
    len: u32,
    kinds: u32,
}

impl Window {
    fn new(metric: Metric, len: Option<u32>) -> Window {
        let kinds = match metric {
            Metric::Wdl | Metric::Dtz => 2,
            Metric::Dtw => 3,
        };
        let max = (256 - u32::from(state::WINDOW)) / kinds;
        Window {
            base: 0,
            len: len.unwrap_or(max).clamp(4, max),
            kinds,
        }
    }

    #[inline]
    fn contains(&self, d: u32) -> bool {
        d >= self.base && d < self.base + self.len
    }

    #[inline]
    fn code(&self, kind: Kind, d: u32) -> u8 {
        debug_assert!(self.contains(d));
        let k = match kind {
            Kind::Win => 0,
            Kind::Loss => 1,
            Kind::PendingWin => 2,
        };
        debug_assert!(k < self.kinds);
        state::WINDOW + ((d - self.base) * self.kinds + k) as u8
    }

    #[inline]
    fn decode(&self, code: u8) -> Option<(Kind, u32)> {
        if code < state::WINDOW {
            return None;
        }
        let x = u32::from(code - state::WINDOW);
        let kind = match x % self.kinds {
            0 => Kind::Win,
            1 => Kind::Loss,
            _ => Kind::PendingWin,
        };
        Some((kind, self.base + x / self.kinds))
    }

    /// The code of a decided value (window, far, or draw).
    #[inline]
    fn decided(&self, v: Value) -> u8 {
        let d = u32::from(v.distance());
        if v.is_draw() {
            state::DRAW
        } else if self.contains(d) {
            self.code(if v.is_win() { Kind::Win } else { Kind::Loss }, d)
        } else if v.is_win() {
            state::FAR_WIN
        } else {
            state::FAR_LOSS
        }
    }

    /// The value of a decided window code.
    #[inline]
    fn value(&self, code: u8) -> Option<Value> {
        match self.decode(code)? {
            (Kind::Win, d) => Some(Value::win(d as u16)),
            (Kind::Loss, d) => Some(Value::loss(d as u16)),
            (Kind::PendingWin, _) => None,
        }
    }
}

#[inline]
fn is_pending(code: u8) -> bool {
    (state::PEND_NONE..=state::PEND_W101).contains(&code)
}

/// Whether an undecided slot could still be lost: no zeroing move that draws or wins (a
/// candidate of [`UnitSolver::check_loss`] or not).
#[inline]
fn could_lose(code: u8) -> bool {
    (state::PEND_NONE..=state::PEND_LOSS_CAND).contains(&code)
}

/// Bit of [`Classes`]: an undecided position (any pending code, baseline wins included).
const UNDECIDED: u8 = 1;
/// Bit of [`Classes`]: a win decided before the current level.
const WON_BEFORE: u8 = 2;

/// What each state byte means at one level, looked up instead of decoded in the hot loops.
struct Classes([u8; 256]);

impl Classes {
    /// The classes at level `n` of window `w`.
    fn at(w: &Window, n: u32) -> Classes {
        let mut c = [0u8; 256];
        for (code, class) in c.iter_mut().enumerate() {
            let code = code as u8;
            if is_pending(code) || matches!(w.decode(code), Some((Kind::PendingWin, _))) {
                *class |= UNDECIDED;
            }
            if code == state::OLD_WIN || matches!(w.decode(code), Some((Kind::Win, d)) if d < n) {
                *class |= WON_BEFORE;
            }
        }
        Classes(c)
    }

    #[inline]
    fn undecided(&self, code: u8) -> bool {
        self.0[code as usize] & UNDECIDED != 0
    }

    #[inline]
    fn won_before(&self, code: u8) -> bool {
        self.0[code as usize] & WON_BEFORE != 0
    }
}

/// What the solver is doing, for progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    pub material: Material,
    pub metric: Metric,
    /// "captures", "init", "levels", "done".
    pub phase: &'static str,
    /// Unit being solved (0-based) and how many there are.
    pub group: usize,
    pub groups: usize,
    /// Current level (ply distance) during "levels".
    pub level: u32,
}

/// Most slots per side in one unit of a table with pawns, by default: the unit's state bytes,
/// quiet bits and frontier take about 2.75 bytes a slot, 2.9 GB.
pub const UNIT_SLOTS: u64 = 1 << 30;

/// Frontier entries (8 bytes each, 32 MiB) the lists of any unit may hold together, however
/// small it is: a unit of fewer than 2^26 slots per side would otherwise list only what a
/// quarter byte per slot allows, and scan itself at the levels whose slots it did not list.
/// With it KPvBP (all metrics, 1 thread) took 0.905x the CPU time, 11.47 → 10.38 user-s,
/// most of it in the DTW solve, whose capture positions are decided at many distances.
pub const LIST_FLOOR: u64 = 1 << 22;

/// The frontier entries the lists of a unit of `len` slots per side may hold: all together and
/// in one list. A quarter byte per slot and side in all (2·len/32 entries), an eighth of the
/// slots in one; at least `floor` ([`SolveOptions::list_floor`]) either way, and never more
/// than one entry per slot.
pub fn list_caps(len: u64, floor: u64) -> (u64, u64) {
    let floor = floor.min(2 * len);
    ((2 * len / 32).max(floor), (2 * len / 8).max(floor))
}

/// How a table is solved.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// Directory for scratch files (the exact values of large tables, spills).
    pub scratch: PathBuf,
    /// Most slots per side in one unit of a table with pawns (at least one configuration).
    pub unit_slots: u64,
    /// Distances held exactly (default: as many as a byte holds); small values exercise the
    /// window shifts in tests.
    pub window: Option<u32>,
    /// Make a table with more than one unit resumable: its exact values go to
    /// `scratch/M.EXT.scratch`, checkpointed in `M.EXT.resume` after a unit when
    /// [`SolveOptions::checkpoint_every`] has passed since the last one, and a solve that finds
    /// a matching checkpoint starts after the units it records (the exact store's module doc,
    /// "Resume").
    /// The caller removes the files once the table is written ([`Solved::remove_resume_files`]).
    pub resume: bool,
    /// Least time between two checkpoints (each syncs the scratch file and writes the frame
    /// table).
    pub checkpoint_every: Duration,
    /// The table's WDL classes, from its WDL or DTZ solve: a DTW solve given them skips the
    /// work they make needless ([`WdlHint`]); the values are the same without. Ignored by the
    /// other metrics.
    pub wdl_hint: Option<Arc<WdlHint>>,
    /// How each level is solved (default: whichever visits fewer slots); the values are the
    /// same either way.
    pub levels: Direction,
    /// Frontier entries a unit's lists may hold however small it is (default [`LIST_FLOOR`]);
    /// 0 leaves small units to scan as large ones do, for tests. The values are the same.
    pub list_floor: u64,
}

/// How a level of the retrograde passes (phase 3 of the [module doc](super)) finds the
/// positions it decides.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Whichever form visits the fewest slots: backward its events; forward the undecided
    /// positions, and mixed the losses of the level before and the undecided positions that
    /// could be lost, each with a scan's cost added.
    #[default]
    Auto,
    /// Backward: un-move from each position decided at the level before (a loss's
    /// predecessors win; a win's become loss candidates, then checked).
    Backward,
    /// Forward: every undecided position looks at its own moves (one to a loss of the level
    /// before wins; all to earlier wins lose).
    Forward,
    /// Wins backward, losses forward, in one scan of the unit: the losses of the level before
    /// make their predecessors win, and every undecided position that could be lost looks at
    /// its own moves. This pays where the level before decided many wins but few undecided
    /// positions can still be lost: in DTW, whose WDL classes leave only the known losses
    /// (wins and losses alternate levels there, so a level often has no loss event at all).
    Mixed,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            scratch: std::env::temp_dir(),
            unit_slots: UNIT_SLOTS,
            window: None,
            resume: false,
            checkpoint_every: Duration::from_secs(60),
            wdl_hint: None,
            levels: Direction::Auto,
            list_floor: LIST_FLOOR,
        }
    }
}

/// A solved table: its exact values, by side and index, for the writer.
pub struct Solved {
    pub index: Index,
    pub metric: Metric,
    store: ExactStore,
}

impl TableValues for Solved {
    type Error = ScratchError;

    fn index(&self) -> &Index {
        &self.index
    }

    fn metric(&self) -> Metric {
        self.metric
    }

    fn frame(&self, side: usize, f: usize, out: &mut Vec<u16>) -> Result<(), ScratchError> {
        self.store.frame(side, f, out)
    }
}

impl Solved {
    /// Frames per side ([`FRAME`] slots each, the last one shorter).
    pub fn frames(&self) -> usize {
        self.store.frames()
    }

    /// Remove the resume files of a resumable solve (once the table's files are written); a
    /// solve that was not resumable has none.
    pub fn remove_resume_files(&self) {
        self.store.remove_resume_files();
    }

    /// The whole table in memory.
    pub fn into_table(self) -> Result<Table, ScratchError> {
        let n = self.index.size() as usize;
        let mut values = [Vec::with_capacity(n), Vec::with_capacity(n)];
        let mut quiet = [vec![0u64; n.div_ceil(64)], vec![0u64; n.div_ceil(64)]];
        let mut buf = Vec::new();
        for side in 0..2 {
            for f in 0..self.store.frames() {
                self.store.frame(side, f, &mut buf)?;
                for &x in &buf {
                    let i = values[side].len();
                    if x & NOT_STORED == 0 && x != Value::INVALID.code() {
                        quiet[side][i / 64] |= 1 << (i % 64);
                    }
                    values[side].push(x & !NOT_STORED);
                }
            }
        }
        Ok(Table {
            index: self.index,
            metric: self.metric,
            values,
            quiet,
        })
    }
}

/// Generate one table in memory: every position of `material` (any orientation; the canonical
/// one is used), both sides to move, in `metric`. Tables reached by captures and promotions
/// come from `source`. The result is the same for any number of rayon threads.
pub fn generate<S: TableSource + ?Sized>(
    material: Material,
    metric: Metric,
    source: &S,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Table, GenError<S::Error>> {
    Ok(solve(material, metric, source, &SolveOptions::default(), progress)?.into_table()?)
}

/// Solve one table into its exact values, by frames ([`Solved`]): the whole table is never
/// held as `u16`s, so this is what builds of large tables use.
pub fn solve<S: TableSource + ?Sized>(
    material: Material,
    metric: Metric,
    source: &S,
    opts: &SolveOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Solved, GenError<S::Error>> {
    let material = material.canonical();
    let index = Index::new(material);
    let units = units(&index, material, opts.unit_slots);
    let resumable = opts.resume && units.len() > 1;
    // What a checkpoint must match to be resumed: the table, the metric, the index and the units.
    let key = format!(
        "{material} {} index scheme {INDEX_SCHEME} size {} units {} of at most {} slots",
        metric.extension(),
        index.size(),
        units.len(),
        opts.unit_slots
    );
    let stem = format!("{material}.{}", metric.extension());
    let (store, done) = if resumable {
        match ExactStore::resume(index.size(), &opts.scratch, &stem, &key)? {
            Some((store, done)) => (store, done as usize),
            None => (
                ExactStore::resumable(index.size(), &opts.scratch, &stem)?,
                0,
            ),
        }
    } else {
        // Named like the writer's temporaries (`M.<kind>.tmp.<pid>`), so a build removes those
        // of a killed run.
        let name = format!("{stem}.exact.tmp.{}", std::process::id());
        (ExactStore::new(index.size(), &opts.scratch, &name)?, 0)
    };
    let hint = opts
        .wdl_hint
        .as_deref()
        .filter(|h| metric == Metric::Dtw && h.size() == index.size());
    let table = TableSolve {
        index: &index,
        material,
        metric,
        source,
        store: &store,
        opts,
        hint,
    };
    let report = |phase, group, level| {
        progress(&Progress {
            material,
            metric,
            phase,
            group,
            groups: units.len(),
            level,
        });
    };
    if done == 0 {
        table.put_mirror_configs()?;
    } else {
        report("resumed", done, 0);
    }
    let mut last_checkpoint = Instant::now();
    for (u, unit) in units.iter().enumerate().skip(done) {
        report("captures", u, 0);
        let mut s = UnitSolver::new(&table, unit);
        s.init()?;
        report("init", u, 0);
        s.init_frontier();
        s.levels(&|level| report("levels", u, level))?;
        s.finish()?;
        drop(s);
        if resumable && u + 1 < units.len() && last_checkpoint.elapsed() >= opts.checkpoint_every {
            store.checkpoint(&key, (u + 1) as u64)?;
            last_checkpoint = Instant::now();
        }
    }
    report("done", units.len(), 0);
    Ok(Solved {
        index,
        metric,
        store,
    })
}

/// What every unit of one table shares.
struct TableSolve<'a, S: ?Sized> {
    index: &'a Index,
    material: Material,
    metric: Metric,
    source: &'a S,
    store: &'a ExactStore,
    opts: &'a SolveOptions,
    /// The WDL classes, in a DTW solve given them.
    hint: Option<&'a WdlHint>,
}

/// Slots of one unit: blocks of `block_len` slots starting at `starts[i]` (global index), in
/// order; local slot `i · block_len + r` is global `starts[i] + r`.
struct Unit {
    starts: Vec<u64>,
    block_len: u64,
}

impl Unit {
    fn len(&self) -> u64 {
        self.starts.len() as u64 * self.block_len
    }

    #[inline]
    fn global(&self, local: u64) -> u64 {
        self.starts[(local / self.block_len) as usize] + local % self.block_len
    }
}

/// Pawn configurations [`largest_unit`] counts one by one; beyond, it draws this many and
/// scales (the layouts of five or six pawns have millions of configurations).
const COUNTED_CONFIGS: u64 = 1 << 20;

/// Slots per side of the largest unit of `index`'s table when units
/// hold at most `unit_slots` slots ([`SolveOptions::unit_slots`]): what the solver's state
/// bytes, bit sets and lists scale with. Exact up to 2^20 pawn configurations, estimated
/// from as many drawn beyond.
pub fn largest_unit(index: &Index, unit_slots: u64) -> u64 {
    // Configurations by advancement, counted as [`units`] batches them: the same for every
    // table of one pawn layout (its lead colour and pawns of each colour), so counted once per
    // process (a plan of the six-piece set has thousands of tables with pawns and a few dozen
    // layouts).
    static COUNTS: Mutex<BTreeMap<(Color, usize, usize), Vec<u64>>> = Mutex::new(BTreeMap::new());
    let Some(layout) = index.pawn_layout() else {
        return index.size();
    };
    let mut counts = COUNTS.lock().expect("unit counts lock");
    let counts = counts
        .entry(layout)
        .or_insert_with(|| advancement_counts(index, COUNTED_CONFIGS));
    let cs = index.rest_size();
    let per_unit = (unit_slots / cs).max(1);
    counts
        .iter()
        .map(|&k| k.min(per_unit) * cs)
        .max()
        .unwrap_or(0)
}

/// How many pawn configurations of `index`'s table have each total advancement, in
/// increasing advancement: counted one by one up to `counted` configurations, beyond that
/// `counted` configurations drawn by a fixed generator (the same counts every run), scaled by
/// `configs / counted`.
fn advancement_counts(index: &Index, counted: u64) -> Vec<u64> {
    let configs = index.lead_count();
    let mut by_adv: BTreeMap<u32, u64> = BTreeMap::new();
    if configs <= counted {
        for c in 0..configs {
            if let Some(adv) = index.config_advancement(c) {
                *by_adv.entry(adv).or_default() += 1;
            }
        }
    } else {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..counted {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if let Some(adv) = index.config_advancement(state % configs) {
                *by_adv.entry(adv).or_default() += 1;
            }
        }
        // Scaled after counting: a whole number of configurations per draw would lose up to
        // half of them just above `counted`.
        for k in by_adv.values_mut() {
            *k = (u128::from(*k) * u128::from(configs) / u128::from(counted)) as u64;
        }
    }
    by_adv.into_values().collect()
}

/// The units of `material` (canonical, with its `index`) of at most `unit_slots` slots (never
/// less than one configuration), in the order they are solved (module doc).
fn units(index: &Index, material: Material, unit_slots: u64) -> Vec<Unit> {
    if !material.has_pawns() {
        return vec![Unit {
            starts: vec![0],
            block_len: index.size(),
        }];
    }
    let cs = index.rest_size();
    let mut by_adv: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    for c in 0..index.lead_count() {
        if let Some(adv) = index.config_advancement(c) {
            by_adv.entry(adv).or_default().push(c * cs);
        }
    }
    let per_unit = (unit_slots / cs).max(1) as usize;
    by_adv
        .into_values()
        .rev()
        .flat_map(|starts| {
            starts
                .chunks(per_unit)
                .map(|c| Unit {
                    starts: c.to_vec(),
                    block_len: cs,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

impl<S: TableSource + ?Sized> TableSolve<'_, S> {
    /// Pawn configurations that are not canonical (their mirror image has the smaller number)
    /// are in no unit: their slots are no position, stored as such.
    fn put_mirror_configs(&self) -> Result<(), ScratchError> {
        if !self.material.has_pawns() {
            return Ok(());
        }
        let cs = self.index.rest_size();
        let invalid = vec![Value::INVALID.code(); cs.min(FRAME) as usize];
        for c in 0..self.index.lead_count() {
            if self.index.config_pawns(c).is_some() {
                continue;
            }
            for side in 0..2 {
                let mut at = c * cs;
                while at < (c + 1) * cs {
                    let len = ((c + 1) * cs - at).min(invalid.len() as u64);
                    self.store.put(side, at, &invalid[..len as usize])?;
                    at += len;
                }
            }
        }
        Ok(())
    }

    /// The value of a position of this table in a finished unit (after a pawn push).
    fn finished_value(
        &self,
        p: &Position,
        cache: &mut FrameCache,
    ) -> Result<Value, GenError<S::Error>> {
        let side = p.turn().index();
        let idx = self.index.encode_board(p.board());
        let code = self.store.get(side, idx, cache)? & !NOT_STORED;
        Value::from_code(code).ok_or_else(|| {
            self.store
                .fault(format!("{}: no value for {p}", self.material))
                .into()
        })
    }

    /// Value of a position reached by a quiet pawn move: of this table in a finished unit
    /// (read as it is, [`in_finished_unit`]), or [`TableSolve::searched_value`].
    fn child_value(
        &self,
        m: &Move,
        child: &Position,
        cache: &mut FrameCache,
    ) -> Result<Value, GenError<S::Error>> {
        if in_finished_unit(m, child) {
            return self.finished_value(child, cache);
        }
        self.searched_value(child)
    }

    /// Value of a position not in a finished unit of this table (of another table, with an
    /// en-passant capture, or with a capture), resolving captures by search: captures and
    /// promotions leave this table for good, so every position searched is another table's.
    fn searched_value(&self, pos: &Position) -> Result<Value, GenError<S::Error>> {
        resolve(pos, self.metric, &mut |p: &Position| {
            self.source
                .stored_value(p, self.metric)
                .map_err(GenError::Source)
        })
    }

    /// Whether a position not in a finished unit of this table (as for
    /// [`TableSolve::searched_value`]) is won, drawn or lost (`W(1)`, `D`, `L(1)`), resolving
    /// captures by search: a read of classes only, for skipping the moves that cannot be best
    /// before their values are looked up.
    fn child_outcome(&self, child: &Position) -> Result<Value, GenError<S::Error>> {
        resolve(child, Metric::Wdl, &mut |p: &Position| {
            self.source
                .outcome(p, self.metric)
                .map_err(GenError::Source)
        })
    }

    /// The DTW of a won position with a capture: the best of the captures into the opponent's
    /// losses. A quiet child's class is read first ([`TableSource::outcome`]), so that the
    /// others' distances are never looked up; a child that can capture in turn is valued
    /// whole by [`TableSource::capture_value`], which keeps what it found for the next
    /// capture that reaches it (its class alone would be a search as well, kept nowhere).
    fn winning_captures_value(&self, pos: &Position) -> Result<Value, GenError<S::Error>> {
        let mut list = MoveList::new();
        pos.captures(&mut list);
        let mut best: Option<Value> = None;
        for m in list.iter() {
            let child = pos.after(m);
            let v = if searches_captures(&child) {
                let v = self
                    .source
                    .capture_value(&child, self.metric)
                    .map_err(GenError::Source)?;
                if !v.is_loss() {
                    continue;
                }
                v
            } else {
                if !self.child_outcome(&child)?.is_loss() {
                    continue;
                }
                self.searched_value(&child)?
            };
            let v = self.metric.zeroing(v);
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        // The WDL solve found a win: one of its captures keeps it, unless a table disagrees.
        best.ok_or_else(|| {
            self.store
                .fault(format!(
                    "{}: won by the WDL solve, but no capture wins in {pos}",
                    self.material
                ))
                .into()
        })
    }

    /// The best zeroing move of a position: its captures' if it has any, else its pawn moves'
    /// (`None`: no zeroing move).
    fn zeroing_value(
        &self,
        pos: &Position,
        cache: &mut FrameCache,
    ) -> Result<Option<Value>, GenError<S::Error>> {
        if pos.has_capture() {
            return Ok(Some(self.searched_value(pos)?));
        }
        let mut list = MoveList::new();
        pos.quiet_pawn_moves(&mut list);
        let mut best: Option<Value> = None;
        for m in list.iter() {
            let v = self
                .metric
                .zeroing(self.child_value(m, &pos.after(m), cache)?);
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        Ok(best)
    }
}

/// Whether `child`, reached by the quiet pawn move `m`, is a position of the table being
/// solved, in a finished unit whose value the store holds as it is: a push that does not
/// promote (so leaves the material as it was) and leaves no en-passant capture (a slot is the
/// position without one). The store keeps the exact value of every slot, a capturing
/// position's too, so its captures need no search.
#[inline]
fn in_finished_unit(m: &Move, child: &Position) -> bool {
    m.promotion.is_none() && child.ep_square().is_none()
}

/// A frontier entry: `local * 2 + side`.
type Entry = u64;

/// The slots of one distance in the current unit, for the level that visits them.
#[derive(Default)]
enum Bucket {
    /// Every slot of the unit with this distance (possibly none).
    #[default]
    Empty,
    Listed(Vec<Entry>),
    /// Too many to list: the level scans the whole unit.
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

/// Per-distance lists of the slots decided (or waiting for a baseline win) in the window, so
/// that level `n` visits only the slots that became `W(n−1)`/`L(n−1)` and the pending `W(n)`
/// baselines instead of scanning the unit; and the list of loss candidates of the current
/// level. A list that would grow past `level_cap`, or past the `total_cap` all lists share,
/// becomes [`Bucket::Scan`] (freed): its level scans the unit as without lists. Lists only
/// choose which slots are visited, never a value: a scan visits exactly the slots a complete
/// list holds, so the result does not depend on them. Lists are visited in the order they were
/// filled: sorting them first, for locality, made KQRBvN's WDL+DTZ 1.03x slower (2026-12-03).
struct Frontier {
    /// `decided[d − base]`: slots holding `W(d)` or `L(d)`, events of level `d + 1`.
    decided: Vec<Bucket>,
    /// `pending[d − base]`: slots waiting for their baseline `W(d)`, placed at level `d`.
    pending: Vec<Bucket>,
    /// Loss candidates marked at the current level.
    candidates: Bucket,
    base: u32,
    /// `counts[d − base]`: slots decided at distance `d` (listed or not), wins and losses.
    counts: Vec<[u64; 2]>,
    /// Slots still undecided (any pending code).
    undecided: u64,
    /// Of those, the slots that could still be lost ([`could_lose`]).
    losable: u64,
    total: usize,
    total_cap: usize,
    level_cap: usize,
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

    /// Take the bucket of distance `d` (left empty), releasing its entries from the total.
    fn take(&mut self, pending: bool, d: u32) -> Bucket {
        let Some(i) = d.checked_sub(self.base) else {
            return Bucket::Empty;
        };
        let v = if pending {
            &mut self.pending
        } else {
            &mut self.decided
        };
        let Some(b) = v.get_mut(i as usize) else {
            return Bucket::Empty;
        };
        let b = std::mem::take(b);
        self.total -= b.len();
        b
    }

    fn is_scan(&self, d: u32) -> bool {
        d.checked_sub(self.base)
            .and_then(|i| self.decided.get(i as usize))
            .is_some_and(|b| matches!(b, Bucket::Scan))
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
    /// `(distance, entry)` of the losses decided beyond the level (by a slower baseline loss);
    /// every win is decided at the level.
    other: Vec<(u32, Entry)>,
    /// Loss candidates marked.
    candidates: Vec<Entry>,
    /// Slots decided; of them, those that could have been lost ([`could_lose`]) and the wins
    /// and losses at distance `level`.
    decisions: u64,
    losable: u64,
    at_level: [u64; 2],
}

/// What a work item reuses from slot to slot: the lead part of the last slot taken apart, and
/// the [`Mover`] that [`UnitSolver::for_each_quiet`] sets for each moving piece (made once
/// here rather than for every slot: it is a few hundred bytes).
#[derive(Default)]
struct Walk {
    lead: LeadCache,
    mover: Mover,
}

/// The state codes a forward level reads and writes ([`UnitSolver::settle`]).
struct Codes<'a> {
    /// What each code means at this level.
    classes: &'a Classes,
    /// `L(n−1)`.
    lose_prev: u8,
    /// `W(n)`.
    win_now: u8,
    /// A baseline `W(n)` waiting to be placed (or a code no slot holds).
    pending_now: u8,
}

/// The solver of one unit.
struct UnitSolver<'a, S: ?Sized> {
    t: &'a TableSolve<'a, S>,
    unit: &'a Unit,
    len: u64,
    codes: [Vec<AtomicU8>; 2],
    /// One bit per slot: a valid position without capture (what a file must store).
    quiet: [Vec<AtomicU64>; 2],
    window: Window,
    max_level: AtomicU32,
    frontier: Mutex<Frontier>,
    /// Exact distances of the values that became old at each window shift.
    spills: Vec<ExactStore>,
    chunks: Vec<Range<u64>>,
}

impl<'a, S: TableSource + ?Sized> UnitSolver<'a, S> {
    fn new(t: &'a TableSolve<'a, S>, unit: &'a Unit) -> UnitSolver<'a, S> {
        let len = unit.len();
        let bytes = || (0..len).map(|_| AtomicU8::new(0)).collect::<Vec<_>>();
        let bits = || {
            (0..len.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect::<Vec<_>>()
        };
        let mut chunks = Vec::new();
        let mut s = 0;
        while s < len {
            let e = (s + CHUNK).min(len);
            chunks.push(s..e);
            s = e;
        }
        let window = Window::new(t.metric, t.opts.window);
        let (total_cap, level_cap) = list_caps(len, t.opts.list_floor);
        UnitSolver {
            t,
            unit,
            len,
            codes: [bytes(), bytes()],
            quiet: [bits(), bits()],
            window,
            max_level: AtomicU32::new(0),
            frontier: Mutex::new(Frontier {
                decided: Vec::new(),
                pending: Vec::new(),
                candidates: Bucket::Empty,
                base: 0,
                counts: Vec::new(),
                undecided: 0,
                losable: 0,
                total: 0,
                total_cap: total_cap as usize,
                level_cap: level_cap as usize,
            }),
            spills: Vec::new(),
            chunks,
        }
    }

    #[inline]
    fn load(&self, side: usize, local: u64) -> u8 {
        self.codes[side][local as usize].load(Relaxed)
    }

    #[inline]
    fn set(&self, side: usize, local: u64, code: u8) {
        self.codes[side][local as usize].store(code, Relaxed);
    }

    #[inline]
    fn is_quiet(&self, side: usize, local: u64) -> bool {
        self.quiet[side][(local / 64) as usize].load(Relaxed) >> (local % 64) & 1 != 0
    }

    /// Note the largest distance of a value decided outside the levels.
    #[inline]
    fn note_distance(&self, v: Value) {
        // Read first: most values are no farther, and a read leaves the line shared where a
        // write would take it from the other threads.
        let d = u32::from(v.distance());
        if !v.is_draw() && d > self.max_level.load(Relaxed) {
            self.max_level.fetch_max(d, Relaxed);
        }
    }

    /// Phases 1 and 2, in one pass over the unit: invalid slots; positions with a capture,
    /// decided from smaller tables; quiet positions, marked, with their baselines and
    /// stalemates ([`UnitSolver::first_code`]).
    fn init(&self) -> Result<(), GenError<S::Error>> {
        let t = self.t;
        self.chunks.par_iter().try_for_each_init(
            // The frame cache (for pawn pushes into finished units) is made on first use.
            || (MoveList::new(), None),
            |(list, cache), r| {
                // Each placement a step from the last where it can be.
                let mut scan = t.index.scan();
                // The quiet bits of the current 64 slots: a chunk starts and ends a word (but
                // for the unit's last), so the word is written whole, once.
                let mut quiet = [0u64; 2];
                for local in r.clone() {
                    let global = self.unit.global(local);
                    // Both sides' positions share the board.
                    let board = scan.board(global);
                    for (side, bits) in quiet.iter_mut().enumerate() {
                        let code = if let Some(board) = board {
                            let pos = Index::position_on(side, board);
                            let capture = pos.has_capture();
                            *bits |= u64::from(!capture) << (local % 64);
                            self.first_code(&pos, capture, side, global, list, cache)?
                        } else {
                            state::INVALID
                        };
                        self.set(side, local, code);
                    }
                    if local % 64 == 63 || local + 1 == r.end {
                        for (side, bits) in quiet.iter_mut().enumerate() {
                            self.quiet[side][(local / 64) as usize].store(*bits, Relaxed);
                            *bits = 0;
                        }
                    }
                }
                Ok(())
            },
        )
    }

    /// The code the valid position `pos` (side to move `side`, slot `global`; whether it has
    /// a `capture`) has before the levels. A position with a capture is decided as the best of its
    /// captures, all of which leave the table. A quiet one waits for the levels with its
    /// baseline, its best zeroing move (pawn pushes into finished units, promotions into
    /// other tables), unless it has no other move, or no move at all (a stalemate, won).
    fn first_code(
        &self,
        pos: &Position,
        capture: bool,
        side: usize,
        global: u64,
        list: &mut MoveList,
        cache: &mut Option<FrameCache>,
    ) -> Result<u8, GenError<S::Error>> {
        let t = self.t;
        let w = self.window;
        let class = t.hint.map(|h| h.class(side, global));
        // Only a DTW solve is given the classes; a known win needs only the moves that keep it.
        let won = t.metric == Metric::Dtw && class == Some(Class::Win);
        if class == Some(Class::Draw) {
            // A capture position's value would be searched, a quiet one's baseline found: a
            // known draw needs neither.
            return Ok(state::DRAW);
        }
        if capture {
            let v = if won {
                t.winning_captures_value(pos)?
            } else {
                resolve_with(
                    pos,
                    t.metric,
                    &mut |p: &Position| {
                        t.source.stored_value(p, t.metric).map_err(GenError::Source)
                    },
                    &mut |p: &Position| {
                        t.source
                            .capture_value(p, t.metric)
                            .map_err(GenError::Source)
                    },
                )?
            };
            self.note_distance(v);
            return Ok(w.decided(v));
        }
        if !t.material.has_pawns() {
            // Without pawns a quiet position has no zeroing move: it waits for the levels,
            // unless it has no move at all (without its moves' list).
            return Ok(if !pos.has_quiet_move() {
                w.decided(Value::win(0))
            } else if class == Some(Class::Win) {
                // A known win is never a loss candidate (as below).
                state::PEND_DRAW
            } else {
                state::PEND_NONE
            });
        }
        list.clear();
        pos.quiet_pawn_moves(list);
        // Only the pawn moves are valued: of the others it matters only whether there is one.
        let piece_moves = pos.has_quiet_piece_move();
        if list.is_empty() && !piece_moves {
            // Stalemate: the side to move has won.
            return Ok(w.decided(Value::win(0)));
        }
        let cache = cache.get_or_insert_with(FrameCache::default);
        // In DTW only does the distance of a pawn move that keeps a known win need a search:
        // the others are left out by their class.
        let mut baseline: Option<Value> = None;
        for m in list.iter() {
            let child = pos.after(m);
            // Outside this table a class read spares the search of a distance that cannot be
            // best; in it, the value is read as cheaply as the class.
            let v = if in_finished_unit(m, &child) {
                Some(t.finished_value(&child, cache)?)
            } else if won && !t.child_outcome(&child)?.is_loss() {
                None
            } else {
                Some(t.searched_value(&child)?)
            };
            let v = match v {
                Some(v) if !won || v.is_loss() => t.metric.zeroing(v),
                // Not better than a draw (below).
                _ => Value::DRAW,
            };
            baseline = Some(baseline.map_or(v, |b| b.max(v)));
        }
        if let Some(b) = baseline {
            self.note_distance(b);
        }
        Ok(match self.pending_code(baseline, !piece_moves) {
            // A known win is never a loss candidate: waiting as for a drawn baseline, it can
            // only become a win.
            state::PEND_NONE | state::PEND_LOSS if won => state::PEND_DRAW,
            c => c,
        })
    }

    /// The code of a quiet position given its best zeroing move (`decided`: it has no other
    /// move, so that is its value).
    fn pending_code(&self, baseline: Option<Value>, decided: bool) -> u8 {
        let w = &self.window;
        match baseline {
            Some(b) if decided => w.decided(b),
            None => state::PEND_NONE,
            Some(b) if b.is_draw() => state::PEND_DRAW,
            Some(b) if b.is_loss() => state::PEND_LOSS,
            Some(b) => {
                let d = u32::from(b.distance());
                match self.t.metric {
                    // Nothing beats a win in one but a terminal position.
                    Metric::Wdl | Metric::Dtz if d == 1 => w.decided(b),
                    Metric::Wdl | Metric::Dtz => {
                        debug_assert_eq!(d, 101);
                        state::PEND_W101
                    }
                    Metric::Dtw if w.contains(d) => w.code(Kind::PendingWin, d),
                    Metric::Dtw => state::PEND_WIN_FAR,
                }
            }
        }
    }

    /// The pending win distance of a code, if it waits for a baseline win.
    #[inline]
    fn pending_win(&self, code: u8) -> Option<u32> {
        if code == state::PEND_W101 {
            return Some(101);
        }
        match self.window.decode(code) {
            Some((Kind::PendingWin, d)) => Some(d),
            _ => None,
        }
    }

    /// The frontier before the levels (and after a shift): the window's decided values and
    /// pending baseline wins, counted by distance; the distances with fewest slots are listed
    /// while the caps allow, the others are scanned for.
    fn init_frontier(&self) {
        let w = self.window;
        let n = w.len as usize + 1;
        // Per window distance: (decided wins and losses, pending wins); and the undecided
        // slots, and those of them that could be lost.
        let classes = Classes::at(&w, w.base);
        let (hist, (undecided, losable)) = self
            .chunks
            .par_iter()
            .fold(
                || (vec![([0u64; 2], 0u64); n], (0u64, 0u64)),
                |(mut h, mut open), r| {
                    for local in r.clone() {
                        for side in 0..2 {
                            let code = self.load(side, local);
                            open.0 += u64::from(classes.undecided(code));
                            open.1 += u64::from(could_lose(code));
                            if let Some(d) = self.pending_win(code) {
                                if let Some(i) = d.checked_sub(w.base)
                                    && (i as usize) < n
                                {
                                    h[i as usize].1 += 1;
                                }
                            } else if let Some((kind, d)) = w.decode(code) {
                                h[(d - w.base) as usize].0[usize::from(kind == Kind::Loss)] += 1;
                            }
                        }
                    }
                    (h, open)
                },
            )
            .reduce(
                || (vec![([0u64; 2], 0u64); n], (0, 0)),
                |(mut a, u), (b, v)| {
                    for (x, y) in a.iter_mut().zip(b) {
                        x.0[0] += y.0[0];
                        x.0[1] += y.0[1];
                        x.1 += y.1;
                    }
                    (a, (u.0 + v.0, u.1 + v.1))
                },
            );
        let mut guard = self.frontier.lock().expect("frontier lock");
        let f = &mut *guard;
        f.base = w.base;
        f.counts = hist.iter().map(|&(decided, _)| decided).collect();
        f.undecided = undecided;
        f.losable = losable;
        f.decided = (0..n).map(|_| Bucket::Empty).collect();
        f.pending = (0..n).map(|_| Bucket::Empty).collect();
        f.candidates = Bucket::Empty;
        f.total = 0;
        // Smallest counts first: they save the most scanning per listed entry.
        let mut order: Vec<(u64, bool, usize)> = hist
            .iter()
            .enumerate()
            .flat_map(|(d, &(dec, pen))| [(dec[0] + dec[1], false, d), (pen, true, d)])
            .filter(|&(c, _, _)| c > 0)
            .collect();
        order.sort_unstable();
        let mut budget = f.total_cap as u64;
        // listed[d]: bit 0 the decided slots of distance d are listed, bit 1 the pending wins.
        let mut listed = vec![0u8; n];
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
        self.chunks.par_iter().for_each_init(Vec::new, |out, r| {
            for local in r.clone() {
                for side in 0..2 {
                    let code = self.load(side, local);
                    let e = local * 2 + side as u64;
                    if let Some(d) = self.pending_win(code) {
                        if let Some(i) = d.checked_sub(w.base)
                            && (i as usize) < n
                            && listed[i as usize] & 2 != 0
                        {
                            out.push((i as usize, true, e));
                        }
                    } else if let Some((_, d)) = w.decode(code) {
                        let i = (d - w.base) as usize;
                        if listed[i] & 1 != 0 {
                            out.push((i, false, e));
                        }
                    }
                }
            }
            if !out.is_empty() {
                let mut f = self.frontier.lock().expect("frontier lock");
                f.total += out.len();
                for &(i, pending, e) in out.iter() {
                    let b = if pending {
                        &mut f.pending[i]
                    } else {
                        &mut f.decided[i]
                    };
                    if let Bucket::Listed(v) = b {
                        v.push(e);
                    }
                }
                out.clear();
            }
        });
    }

    /// Note that `(side, local)` now holds the decided win or loss `v`.
    #[inline]
    fn decided(&self, sink: &mut Sink, side: usize, local: u64, d: u32, won: bool, was: u8) {
        sink.max = sink.max.max(d);
        sink.decisions += 1;
        sink.losable += u64::from(could_lose(was));
        let e = local * 2 + side as u64;
        if d == sink.level {
            sink.at_level[usize::from(!won)] += 1;
            if sink.keep_next {
                sink.next.push(e);
            }
        } else if self.window.contains(d) {
            debug_assert!(!won, "a win is decided at the level");
            sink.other.push((d, e));
        }
    }

    /// Hand what `sink` collected to the frontier.
    fn flush(&self, sink: &mut Sink) {
        if sink.max > self.max_level.load(Relaxed) {
            self.max_level.fetch_max(sink.max, Relaxed);
        }
        if sink.decisions == 0 && sink.candidates.is_empty() {
            return;
        }
        let mut guard = self.frontier.lock().expect("frontier lock");
        let f = &mut *guard;
        let (level_cap, total_cap, base) = (f.level_cap, f.total_cap, f.base);
        f.undecided -= sink.decisions;
        f.losable -= sink.losable;
        if let Some(c) = f.counts.get_mut((sink.level - base) as usize) {
            c[0] += sink.at_level[0];
            c[1] += sink.at_level[1];
        }
        for &(d, _) in &sink.other {
            f.counts[(d - base) as usize][1] += 1;
        }
        if !sink.next.is_empty() {
            Frontier::push(
                &mut f.decided[(sink.level - base) as usize],
                &sink.next,
                &mut f.total,
                level_cap,
                total_cap,
            );
        }
        for &(d, e) in &sink.other {
            Frontier::push(
                &mut f.decided[(d - base) as usize],
                &[e],
                &mut f.total,
                level_cap,
                total_cap,
            );
        }
        Frontier::push(
            &mut f.candidates,
            &sink.candidates,
            &mut f.total,
            level_cap,
            total_cap,
        );
        drop(guard);
        sink.next.clear();
        sink.other.clear();
        sink.candidates.clear();
        sink.decisions = 0;
        sink.losable = 0;
        sink.at_level = [0; 2];
    }

    /// Phase 3: the level-by-level retrograde passes (module doc of [`super`]). Level `n`
    /// visits the slots of distance `n − 1` and the pending `W(n)` (their lists, or a scan of
    /// the unit), then the loss candidates it marked; levels with nothing to visit are
    /// skipped. The window shifts before a level it cannot hold.
    fn levels(&mut self, report: &(dyn Fn(u32) + Sync)) -> Result<(), GenError<S::Error>> {
        let mut n: u32 = 1;
        while n <= self.max_level.load(Relaxed) + 1 {
            if n > u32::from(MAX_DISTANCE) {
                return Err(GenError::TooLong {
                    material: self.t.material,
                });
            }
            if n + 1 >= self.window.base + self.window.len {
                self.shift(n - 1)?;
            }
            let (events, pending, keep_next, form) = {
                let mut f = self.frontier.lock().expect("frontier lock");
                let events = f.take(false, n - 1);
                let pending = f.take(true, n);
                let [wins, losses] = (n - 1)
                    .checked_sub(f.base)
                    .and_then(|i| f.counts.get(i as usize))
                    .copied()
                    .unwrap_or([0; 2]);
                // Backward visits the events (a win twice: its un-moves mark candidates whose
                // moves are then checked); forward the undecided slots, and mixed the losses
                // and the slots that could be lost, both in a scan of the unit.
                let scan = 2 * self.len / SCAN_SLOTS_PER_VISIT;
                let form = match self.t.opts.levels {
                    Direction::Auto => [
                        (2 * wins + losses, Direction::Backward),
                        (f.undecided + scan, Direction::Forward),
                        (losses + f.losable + scan, Direction::Mixed),
                    ]
                    .into_iter()
                    .min_by_key(|&(cost, _)| cost)
                    .map_or(Direction::Backward, |(_, form)| form),
                    form => form,
                };
                (events, pending, !f.is_scan(n), form)
            };
            if events.is_empty() && pending.is_empty() {
                n += 1;
                continue;
            }
            report(n);
            self.level(n, events, pending, keep_next, form)?;
            n += 1;
        }
        Ok(())
    }

    /// One level in `form` (not [`Direction::Auto`]): backward, its events then the loss
    /// candidates they marked; forward, every undecided slot ([`UnitSolver::settle`]); mixed,
    /// in one scan, the events that are losses and the pending `W(n)` as backward, and every
    /// slot that could be lost as a loss candidate ([`UnitSolver::check_loss`]).
    fn level(
        &self,
        n: u32,
        events: Bucket,
        pending: Bucket,
        keep_next: bool,
        form: Direction,
    ) -> Result<(), GenError<S::Error>> {
        let w = self.window;
        let new_sink = || Sink {
            level: n,
            keep_next,
            ..Sink::default()
        };
        let lose_prev = w.code(Kind::Loss, n - 1);
        let win_prev = w.code(Kind::Win, n - 1);
        let win_now = w.code(Kind::Win, n);
        // The code of a baseline win placed at this level (none: a code no slot holds).
        let pending_now = if n == 101 && self.t.metric != Metric::Dtw {
            state::PEND_W101
        } else if w.kinds == 3 && w.contains(n) {
            w.code(Kind::PendingWin, n)
        } else {
            state::INVALID
        };
        let classes = Classes::at(&w, n);
        let classes = &classes;
        // Per work item: what the un-move walks need, and with a frame cache what the loss
        // checks and forward settles need.
        let new_walker = || (new_sink(), Walk::default());
        let new_checker = || (new_sink(), FrameCache::default(), Walk::default());
        if form == Direction::Forward {
            drop((events, pending));
            let codes = Codes {
                classes,
                lose_prev,
                win_now,
                pending_now,
            };
            return self.chunks.par_iter().try_for_each_init(
                new_checker,
                |(sink, cache, walk), r| {
                    let mut last = None;
                    for local in r.clone() {
                        let code = [self.load(0, local), self.load(1, local)];
                        if !classes.undecided(code[0]) && !classes.undecided(code[1]) {
                            continue;
                        }
                        let global = self.unit.global(local);
                        let pl = self
                            .t
                            .index
                            .placement_after(&mut last, global, &mut walk.lead);
                        for (side, &code) in code.iter().enumerate() {
                            if classes.undecided(code) {
                                let at = (side, local, code);
                                self.settle(sink, cache, &mut walk.mover, at, &pl, &codes)?;
                            }
                        }
                    }
                    self.flush(sink);
                    Ok(())
                },
            );
        }
        // The events that decide wins: a loss of the level before, a baseline win placed now.
        let win_event = |sink: &mut Sink, walk: &mut Walk, side: usize, local: u64, code: u8| {
            if code == lose_prev {
                self.propagate_win(sink, walk, side, local, win_now, classes);
            } else if code == pending_now
                && code != state::INVALID
                && self.codes[side][local as usize]
                    .compare_exchange(code, win_now, Relaxed, Relaxed)
                    .is_ok()
            {
                self.decided(sink, side, local, n, true, code);
            }
        };
        if form == Direction::Mixed {
            drop((events, pending));
            // The events write only slots with a move to `L(n−1)`, whose loss checks fail
            // whenever they run and then write nothing; a check writes its slot only when it
            // is lost, and reads a slot an event or a check writes (a win of this level, a
            // loss) as no earlier win either way: the result is the same in any order.
            return self.chunks.par_iter().try_for_each_init(
                new_checker,
                |(sink, cache, walk), r| {
                    for local in r.clone() {
                        for side in 0..2 {
                            let code = self.load(side, local);
                            if code == state::PEND_NONE || code == state::PEND_LOSS {
                                let at = (side, local, code);
                                self.check_loss(sink, cache, walk, at, classes)?;
                            } else {
                                win_event(sink, walk, side, local, code);
                            }
                        }
                    }
                    self.flush(sink);
                    Ok(())
                },
            );
        }
        let event = |sink: &mut Sink, walk: &mut Walk, side: usize, local: u64, code: u8| {
            if code == win_prev {
                self.mark_candidates(sink, walk, side, local);
            } else {
                win_event(sink, walk, side, local, code);
            }
        };
        if matches!(events, Bucket::Scan) || matches!(pending, Bucket::Scan) {
            drop((events, pending));
            self.chunks
                .par_iter()
                .for_each_init(new_walker, |(sink, walk), r| {
                    for local in r.clone() {
                        for side in 0..2 {
                            event(sink, walk, side, local, self.load(side, local));
                        }
                    }
                    self.flush(sink);
                });
        } else {
            for list in [pending, events] {
                if let Bucket::Listed(list) = list {
                    list.par_chunks(LIST_CHUNK)
                        .for_each_init(new_walker, |(sink, walk), part| {
                            for &e in part {
                                let (side, local) = ((e & 1) as usize, e >> 1);
                                event(sink, walk, side, local, self.load(side, local));
                            }
                            self.flush(sink);
                        });
                }
            }
        }
        let candidates =
            std::mem::take(&mut self.frontier.lock().expect("frontier lock").candidates);
        let check =
            |sink: &mut Sink, cache: &mut FrameCache, walk: &mut Walk, side: usize, local: u64| {
                let code = self.load(side, local);
                if code == state::PEND_NONE_CAND || code == state::PEND_LOSS_CAND {
                    self.check_loss(sink, cache, walk, (side, local, code), classes)
                } else {
                    Ok(())
                }
            };
        // A candidate's check reads the codes of its moves only, which this pass never
        // changes to anything a check reads as an earlier win: the result is the same in any
        // order.
        match candidates {
            Bucket::Empty => Ok(()),
            Bucket::Listed(mut list) => {
                self.frontier.lock().expect("frontier lock").total -= list.len();
                // In slot order: a check that finds a loss reads the values of its pawn
                // pushes in finished units ([`TableSolve::zeroing_value`]), a compressed chunk
                // of the store each unless the last lookup read the same chunk, and the pushes
                // of neighbouring slots land in the same chunks.
                list.par_sort_unstable();
                list.par_chunks(LIST_CHUNK / 4).try_for_each_init(
                    new_checker,
                    |(sink, cache, walk), part| {
                        for &e in part {
                            check(sink, cache, walk, (e & 1) as usize, e >> 1)?;
                        }
                        self.flush(sink);
                        Ok(())
                    },
                )
            }
            Bucket::Scan => {
                self.chunks
                    .par_iter()
                    .try_for_each_init(new_checker, |(sink, cache, walk), r| {
                        for local in r.clone() {
                            for side in 0..2 {
                                check(sink, cache, walk, side, local)?;
                            }
                        }
                        self.flush(sink);
                        Ok(())
                    })
            }
        }
    }

    /// Call `f(slot side, local slot)` for every quiet non-pawn move of `mover`'s pieces from
    /// `(side, local)`. With `mover` = the side to move these are the forward moves; with
    /// `mover` = the other side they are the un-moves (non-pawn movement is symmetric). Such a
    /// move stays in the position's pawn configuration, so in the unit. Stops at the first
    /// move for which `f` returns `false`, and returns `false` then.
    #[inline]
    fn for_each_quiet(
        &self,
        m: &mut Mover,
        pl: &Placement,
        side: usize,
        local: u64,
        mover: Color,
        mut f: impl FnMut(usize, u64) -> bool,
    ) -> bool {
        let ix = self.t.index;
        // Such a move stays in the slot's block: local = global + (block start's local − its
        // global), one division per slot, none per move.
        let b = local / self.unit.block_len;
        let shift = (b * self.unit.block_len).wrapping_sub(self.unit.starts[b as usize]);
        let k = ix.pieces();
        let occ = pl.squares[..k]
            .iter()
            .fold(Bitboard::EMPTY, |b, &s| b.with(Square::new(u32::from(s))));
        let out_side = 1 - side;
        for j in 0..k {
            let piece = ix.digit_piece(j);
            if piece.color != mover || piece.role == Role::Pawn {
                continue;
            }
            let from = Square::new(u32::from(pl.squares[j]));
            ix.set_mover(m, pl, j);
            for to in piece_attacks(piece.role, from, occ) & !occ {
                let g = m.moved(ix, pl, to);
                if !f(out_side, g.wrapping_add(shift)) {
                    return false;
                }
            }
        }
        true
    }

    /// The placement of a local slot.
    #[inline]
    fn placement(&self, cache: &mut LeadCache, local: u64) -> Placement {
        self.t.index.placement_with(self.unit.global(local), cache)
    }

    #[inline]
    fn color_of(side: usize) -> Color {
        if side == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// `(side, local)` is `L(n−1)`: its undecided quiet predecessors win in `n` (the sink's
    /// level).
    fn propagate_win(
        &self,
        sink: &mut Sink,
        walk: &mut Walk,
        side: usize,
        local: u64,
        win_now: u8,
        classes: &Classes,
    ) {
        self.for_each_unmove(walk, side, local, |ps, pi| {
            let cell = &self.codes[ps][pi as usize];
            let mut code = cell.load(Relaxed);
            while classes.undecided(code) {
                match cell.compare_exchange_weak(code, win_now, Relaxed, Relaxed) {
                    Ok(_) => {
                        self.decided(sink, ps, pi, sink.level, true, code);
                        break;
                    }
                    Err(c) => code = c,
                }
            }
        });
    }

    /// `(side, local)` is `W(n−1)`: its undecided quiet predecessors that could be lost (no
    /// zeroing move that draws or wins) become candidates for [`UnitSolver::check_loss`].
    fn mark_candidates(&self, sink: &mut Sink, walk: &mut Walk, side: usize, local: u64) {
        self.for_each_unmove(walk, side, local, |ps, pi| {
            let cell = &self.codes[ps][pi as usize];
            let mut code = cell.load(Relaxed);
            loop {
                let cand = match code {
                    state::PEND_NONE => state::PEND_NONE_CAND,
                    state::PEND_LOSS => state::PEND_LOSS_CAND,
                    _ => return,
                };
                match cell.compare_exchange_weak(code, cand, Relaxed, Relaxed) {
                    Ok(_) => {
                        sink.candidates.push(pi * 2 + ps as u64);
                        return;
                    }
                    Err(c) => code = c,
                }
            }
        });
    }

    /// Call `f(slot side, local slot)` for every quiet non-pawn un-move into `(side, local)`:
    /// the moves of the other side's pieces, taken back ([`UnitSolver::for_each_quiet`]).
    #[inline]
    fn for_each_unmove(
        &self,
        walk: &mut Walk,
        side: usize,
        local: u64,
        mut f: impl FnMut(usize, u64),
    ) {
        let pl = self.placement(&mut walk.lead, local);
        let mover = Self::color_of(1 - side);
        self.for_each_quiet(&mut walk.mover, &pl, side, local, mover, |ps, pi| {
            f(ps, pi);
            true
        });
    }

    /// A candidate whose every quiet non-pawn move leads to a win decided before level `n` is
    /// lost: `L(n)`, or `L(b)` if its best zeroing move loses more slowly. Otherwise a marked
    /// candidate goes back to waiting; an unmarked one (`PEND_NONE`, `PEND_LOSS`: a mixed
    /// level checks every slot that could be lost) is left as it is.
    fn check_loss(
        &self,
        sink: &mut Sink,
        cache: &mut FrameCache,
        walk: &mut Walk,
        (side, local, code): (usize, u64, u8),
        classes: &Classes,
    ) -> Result<(), GenError<S::Error>> {
        // Stops at the first move that is not a win decided before this level.
        let pl = self.placement(&mut walk.lead, local);
        let mover = &mut walk.mover;
        let all_won =
            self.for_each_quiet(mover, &pl, side, local, Self::color_of(side), |cs, ci| {
                classes.won_before(self.load(cs, ci))
            });
        if !all_won {
            match code {
                state::PEND_NONE_CAND => self.set(side, local, state::PEND_NONE),
                state::PEND_LOSS_CAND => self.set(side, local, state::PEND_LOSS),
                _ => {}
            }
            return Ok(());
        }
        self.lose(sink, cache, (side, local, code), &pl)
    }

    /// A level's forward form: the undecided `(side, local)` (holding `code`, placed as `pl`)
    /// is `W(n)` if it waits for that baseline or has a quiet non-pawn move to `L(n−1)`;
    /// otherwise, if it could be lost (as [`UnitSolver::mark_candidates`] says) and every such
    /// move leads to a win decided before level `n`, it is lost as [`UnitSolver::check_loss`]
    /// finds. Only this call writes the slot during the pass; the moves it reads may become
    /// `W(n)` or `L(n)` meanwhile, which it reads as neither `L(n−1)` nor an earlier win, as
    /// before.
    fn settle(
        &self,
        sink: &mut Sink,
        cache: &mut FrameCache,
        mover: &mut Mover,
        (side, local, code): (usize, u64, u8),
        pl: &Placement,
        codes: &Codes,
    ) -> Result<(), GenError<S::Error>> {
        let classes = codes.classes;
        if code == codes.pending_now {
            self.set(side, local, codes.win_now);
            self.decided(sink, side, local, sink.level, true, code);
            return Ok(());
        }
        let mut all_won = true;
        let wins = !self.for_each_quiet(mover, pl, side, local, Self::color_of(side), |cs, ci| {
            let c = self.load(cs, ci);
            all_won &= classes.won_before(c);
            c != codes.lose_prev
        });
        if wins {
            self.set(side, local, codes.win_now);
            self.decided(sink, side, local, sink.level, true, code);
            Ok(())
        } else if all_won && matches!(code, state::PEND_NONE | state::PEND_LOSS) {
            self.lose(sink, cache, (side, local, code), pl)
        } else {
            Ok(())
        }
    }

    /// `(side, local)`, holding `code` (one that could be lost, [`could_lose`]), is lost at
    /// the level being solved: `L(n)`, or `L(b)` if its best zeroing move loses more slowly.
    fn lose(
        &self,
        sink: &mut Sink,
        cache: &mut FrameCache,
        (side, local, code): (usize, u64, u8),
        pl: &Placement,
    ) -> Result<(), GenError<S::Error>> {
        let w = self.window;
        let mut d = sink.level;
        debug_assert!(could_lose(code));
        if matches!(code, state::PEND_LOSS | state::PEND_LOSS_CAND) {
            // The baseline loss, derived again from the pawn moves.
            let pos = self.t.index.position_of(side, pl);
            if let Some(b) = self.t.zeroing_value(&pos, cache)? {
                d = d.max(u32::from(b.distance()));
            }
        }
        let lost = if w.contains(d) {
            w.code(Kind::Loss, d)
        } else {
            state::FAR_LOSS
        };
        self.set(side, local, lost);
        self.decided(sink, side, local, d, false, code);
        Ok(())
    }

    /// Move the window to start at `base`: values below it become old (their exact values
    /// spilled), far values that now fall in it are derived again.
    fn shift(&mut self, base: u32) -> Result<(), GenError<S::Error>> {
        let old = self.window;
        let new = Window { base, ..old };
        let t = self.t;
        let name = format!(
            "{}.spill{}.{}.tmp.{}",
            t.material,
            self.spills.len(),
            t.metric.extension(),
            std::process::id()
        );
        let spill = ExactStore::new(self.len, &t.opts.scratch, &name)?;
        let frames: Vec<Range<u64>> = (0..self.len.div_ceil(FRAME))
            .map(|f| f * FRAME..((f + 1) * FRAME).min(self.len))
            .collect();
        frames
            .par_iter()
            .try_for_each_init(FrameCache::default, |cache, r| {
                for side in 0..2 {
                    let mut out = Vec::with_capacity((r.end - r.start) as usize);
                    for local in r.clone() {
                        let code = self.load(side, local);
                        let mut spilled = 0u16;
                        let recoded = match old.decode(code) {
                            Some((kind, d)) if d < base => {
                                let v = old.value(code).expect("pending wins are placed");
                                spilled = v.code();
                                if kind == Kind::Win {
                                    state::OLD_WIN
                                } else {
                                    state::OLD_LOSS
                                }
                            }
                            Some((kind, d)) if new.contains(d) => new.code(kind, d),
                            Some((kind, _)) => match kind {
                                Kind::Win => state::FAR_WIN,
                                Kind::Loss => state::FAR_LOSS,
                                Kind::PendingWin => state::PEND_WIN_FAR,
                            },
                            None if matches!(
                                code,
                                state::FAR_WIN | state::FAR_LOSS | state::PEND_WIN_FAR
                            ) =>
                            {
                                let pos = t.index.decode_valid(side, self.unit.global(local));
                                let v = t
                                    .zeroing_value(&pos, cache)?
                                    .expect("a far value comes from a zeroing move");
                                let d = u32::from(v.distance());
                                if !new.contains(d) {
                                    code
                                } else if code == state::PEND_WIN_FAR {
                                    new.code(Kind::PendingWin, d)
                                } else {
                                    new.decided(v)
                                }
                            }
                            None => code,
                        };
                        if recoded != code {
                            self.set(side, local, recoded);
                        }
                        out.push(spilled);
                    }
                    spill.put(side, r.start, &out)?;
                }
                Ok::<(), GenError<S::Error>>(())
            })?;
        self.spills.push(spill);
        self.window = new;
        self.init_frontier();
        Ok(())
    }

    /// Phase 4: what is still undecided is a draw; the unit's exact values go to the store.
    fn finish(&self) -> Result<(), GenError<S::Error>> {
        let w = self.window;
        let frames: Vec<Range<u64>> = (0..self.len.div_ceil(FRAME))
            .map(|f| f * FRAME..((f + 1) * FRAME).min(self.len))
            .collect();
        frames
            .par_iter()
            .try_for_each_init(Vec::new, |buf: &mut Vec<u16>, r| {
                for side in 0..2 {
                    let mut out: Vec<u16> = Vec::with_capacity((r.end - r.start) as usize);
                    for local in r.clone() {
                        let code = self.load(side, local);
                        let v = match code {
                            state::INVALID => Value::INVALID,
                            state::DRAW => Value::DRAW,
                            c if is_pending(c) || self.pending_win(c).is_some() => Value::DRAW,
                            c => match w.value(c) {
                                Some(v) => v,
                                None => Value(0),
                            },
                        };
                        let flag = if code != state::INVALID && !self.is_quiet(side, local) {
                            NOT_STORED
                        } else {
                            0
                        };
                        out.push(v.code() | flag);
                    }
                    // Old values, from the spill of the shift that retired them.
                    if out.iter().any(|&x| x & !NOT_STORED == 0) {
                        let f = (r.start / FRAME) as usize;
                        for spill in &self.spills {
                            spill.frame(side, f, buf)?;
                            for (o, &s) in out.iter_mut().zip(buf.iter()) {
                                if *o & !NOT_STORED == 0 && s != 0 {
                                    *o |= s;
                                }
                            }
                        }
                        if out.iter().any(|&x| x & !NOT_STORED == 0) {
                            return Err(self
                                .t
                                .store
                                .fault(format!(
                                    "{}: a value of frame {f} was lost between window shifts",
                                    self.t.material
                                ))
                                .into());
                        }
                    }
                    // Local to global: one block at a time.
                    let mut at = r.start;
                    while at < r.end {
                        let end = (at - at % self.unit.block_len + self.unit.block_len).min(r.end);
                        let part = &out[(at - r.start) as usize..(end - r.start) as usize];
                        self.t.store.put(side, self.unit.global(at), part)?;
                        at = end;
                    }
                }
                Ok(())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r#gen::MemoryTables;

    /// The largest unit the estimate counts is the largest the solver makes, for tables
    /// without pawns and with one to four, at several unit sizes; and the counts drawn for
    /// large pawn layouts are near the counts one by one.
    #[test]
    fn largest_unit_is_the_largest_solved() {
        for name in [
            "KQvK", "KPvK", "PvP", "KNPvKB", "PPvP", "KPPvKP", "PPvPP", "PPPPvK",
        ] {
            let m = Material::parse(name).unwrap().canonical();
            let index = Index::new(m);
            for unit_slots in [1, 1 << 16, 1 << 24, UNIT_SLOTS] {
                let solved = units(&index, m, unit_slots).iter().map(Unit::len).max();
                assert_eq!(
                    Some(largest_unit(&index, unit_slots)),
                    solved,
                    "{m} units of at most {unit_slots} slots"
                );
            }
        }
        let index = Index::new(Material::parse("PPPvP").unwrap().canonical());
        let exact = advancement_counts(&index, u64::MAX);
        let max = |c: &[u64]| *c.iter().max().unwrap() as f64;
        let total = |c: &[u64]| c.iter().sum::<u64>() as f64;
        // Many configurations per draw, and under two (401 580 configurations).
        for counted in [1 << 12, 1 << 18] {
            let drawn = advancement_counts(&index, counted);
            assert!(index.lead_count() > counted);
            assert!(
                (max(&drawn) / max(&exact) - 1.0).abs() < 0.15,
                "{counted}: {drawn:?} against {exact:?}"
            );
            assert!(
                (total(&drawn) / total(&exact) - 1.0).abs() < 0.05,
                "{counted}: {drawn:?} against {exact:?}"
            );
        }
    }

    /// Small windows (many shifts, spills and far values derived again), one pawn
    /// configuration per unit, and levels solved all backward, all forward or all mixed give
    /// the same tables as the defaults.
    #[test]
    fn window_shifts_and_small_units_change_nothing() {
        let mut mem = MemoryTables::new();
        let targets: Vec<Material> = ["KPvK", "KvKP", "PvP", "KPvP", "BPvN", "KNvK", "RvNN"]
            .iter()
            .map(|s| Material::parse(s).unwrap().canonical())
            .collect();
        for metric in [Metric::Dtz, Metric::Dtw] {
            mem.generate_closure(&targets, metric).unwrap();
        }
        let mut shifted = 0;
        for &m in &Material::closure(&targets) {
            for metric in [Metric::Dtz, Metric::Dtw] {
                let expect = mem.get(m, metric).unwrap();
                // Without a list floor these small tables scan where lists overflow.
                for (window, unit_slots, levels, list_floor) in [
                    (Some(4), 1, Direction::Auto, 0),
                    (Some(7), 1 << 30, Direction::Auto, 0),
                    (None, 1, Direction::Auto, 0),
                    (None, 1 << 30, Direction::Auto, 0),
                    (None, 1 << 30, Direction::Forward, 0),
                    (Some(5), 1, Direction::Forward, 0),
                    (None, 1 << 30, Direction::Backward, 0),
                    (Some(6), 1, Direction::Backward, LIST_FLOOR),
                    (None, 1 << 30, Direction::Mixed, 0),
                    (Some(5), 1, Direction::Mixed, LIST_FLOOR),
                ] {
                    let opts = SolveOptions {
                        window,
                        unit_slots,
                        levels,
                        list_floor,
                        ..SolveOptions::default()
                    };
                    let got = solve(m, metric, &mem, &opts, &|_| {})
                        .unwrap()
                        .into_table()
                        .unwrap();
                    let what = format!("{m} {metric:?} {window:?} {levels:?}");
                    assert!(got.values == expect.values, "{what}");
                    assert!(got.quiet == expect.quiet, "{what}");
                }
                let longest = expect.values[0]
                    .iter()
                    .chain(&expect.values[1])
                    .filter_map(|&c| Value::from_code(c))
                    .map(|v| v.distance())
                    .max()
                    .unwrap_or(0);
                if longest > 8 {
                    shifted += 1;
                }
            }
        }
        // The small windows did shift (several times) on most of these tables.
        assert!(shifted >= 10, "{shifted}");
    }
}
