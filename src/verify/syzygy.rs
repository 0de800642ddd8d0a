//! Comparison with de Man's Syzygy antichess tables, read with shakmaty-syzygy (cargo feature
//! `syzygy`; a build with it is GPL-3.0-or-later, the licence of shakmaty-syzygy).
//!
//! Every valid slot of a table, both sides to move, is valued from our files (the stored DTZ of
//! a quiet position, the capture search of [`crate::table::resolve`] otherwise) and probed in
//! the Syzygy tables with the halfmove clock at 0. WDL must be equal. A Syzygy DTZ `p` is
//! compared with our exact DTZ `d` by [`classify_dtz`], after reference/SYZYGY_NOTES.md §5 and
//! §8: equal; rounded down by one ply (inexact sub-tables, and cursed values, which Syzygy
//! always rounds); terminal positions (Syzygy says 1 where the exact DTZ is 0); threat wins
//! (Syzygy says 2/102 where the exact DTZ is 1/101); single-valued sub-tables (Syzygy assumes
//! |DTZ| 3/2/103); anything else is a [`DtzClass::Mismatch`].

mod to_shakmaty;

use super::consistency::dtz_view;
use super::tables::{TableSet, View};
use super::{VerifyError, VerifyEvent};
use crate::rules::{Color, Position, Role};
use crate::table::{Material, Metric, Wdl, resolve};
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use shakmaty_syzygy::Tablebase as Syzygy;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};
use to_shakmaty::to_shakmaty;

/// How a Syzygy DTZ relates to the exact one (SYZYGY_NOTES.md §5, §8).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DtzClass {
    /// p = d.
    Exact,
    /// Same sign, |p| = |d| − 1 (inexact sub-table bucket, or a cursed value: always rounded).
    RoundedByOne,
    /// Terminal position (d = 0, a win): Syzygy says 1.
    Terminal,
    /// Threat win: Syzygy says 2 / 102 where the exact value is 1 / 101, and the position has a
    /// non-pawn quiet move after which the opponent must capture.
    Threat,
    /// Single-valued sub-table (quirk c): Syzygy says ±2 / ±3 (±103 for cursed values) where
    /// the exact value has the same sign but another magnitude, smaller or larger (the
    /// sub-table stores no value and the prober assumes one), also inherited by the other side to
    /// move through the 1-ply search.
    SingleValued,
    /// Anything else: a disagreement.
    Mismatch,
}

impl DtzClass {
    pub const ALL: [DtzClass; 6] = [
        DtzClass::Exact,
        DtzClass::RoundedByOne,
        DtzClass::Terminal,
        DtzClass::Threat,
        DtzClass::SingleValued,
        DtzClass::Mismatch,
    ];
}

impl fmt::Display for DtzClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DtzClass::Exact => "exact",
            DtzClass::RoundedByOne => "rounded-by-one",
            DtzClass::Terminal => "terminal",
            DtzClass::Threat => "threat",
            DtzClass::SingleValued => "single-valued",
            DtzClass::Mismatch => "mismatch",
        })
    }
}

/// Does the side to move have no capture but a non-pawn quiet move after which the opponent
/// must capture (SYZYGY_NOTES.md §2, "threat positions")?
pub fn has_threat_move(pos: &Position) -> bool {
    !pos.has_capture()
        && pos
            .legal_moves()
            .iter()
            .any(|m| m.role != Role::Pawn && pos.after(m).has_capture())
}

/// Compare the exact DTZ `exact_dtz` (SPEC.md §2; `wdl` its WDL) with the Syzygy DTZ
/// `syzygy_dtz` of the same position `pos`. WDL is assumed to match already.
///
/// `tests/common/syzygy.rs` has its own copy of these rules, on purpose: the tests judge the
/// generator against Syzygy with an oracle that shares no code with the product, so a mistake
/// here that excused a real disagreement would not also excuse it there.
pub fn classify_dtz(exact_dtz: i32, wdl: Wdl, syzygy_dtz: i32, pos: &Position) -> DtzClass {
    let (d, p) = (exact_dtz, syzygy_dtz);
    if p == d {
        return DtzClass::Exact;
    }
    if d == 0 {
        return if wdl == Wdl::Win && p == 1 {
            DtzClass::Terminal
        } else {
            DtzClass::Mismatch
        };
    }
    if p.signum() != d.signum() {
        return DtzClass::Mismatch;
    }
    if ((d == 1 && p == 2) || (d == 101 && p == 102)) && has_threat_move(pos) {
        return DtzClass::Threat;
    }
    let (ad, ap) = (d.abs(), p.abs());
    if ap == ad - 1 {
        return DtzClass::RoundedByOne;
    }
    // The prober assumes raw symbol 1 whatever the sub-table's one value is, so the exact
    // distance may be smaller (KPvP: −1 probes as −3) or larger (QRvB, Black to move: +4
    // probes as +2) than the assumed 2/3/103; positions of the other side to move inherit it
    // through the 1-ply search (BPvR, White to move: −5 probes as −3).
    let single = if ad <= 100 {
        ap == 2 || ap == 3
    } else {
        ap == 103
    };
    if single {
        return DtzClass::SingleValued;
    }
    DtzClass::Mismatch
}

/// The comparison of one table.
#[derive(Clone, Debug)]
pub struct SyzygyTableReport {
    pub material: Material,
    /// Positions compared (valid slots, both sides to move; a sample of them with
    /// [`SyzygyOptions::sample`]).
    pub positions: u64,
    pub wdl_mismatches: u64,
    /// Count of each [`DtzClass`] (indexed as [`DtzClass::ALL`]) among positions whose WDL
    /// agrees.
    pub classes: [u64; 6],
    /// A few examples of each non-exact class and of WDL mismatches, as text lines.
    pub examples: Vec<String>,
    pub error: Option<VerifyError>,
    pub time: Duration,
}

impl SyzygyTableReport {
    pub fn count(&self, class: DtzClass) -> u64 {
        self.classes[class as usize]
    }

    /// WDL equal everywhere, no DTZ mismatch, no error.
    pub fn is_ok(&self) -> bool {
        self.error.is_none() && self.wdl_mismatches == 0 && self.count(DtzClass::Mismatch) == 0
    }
}

/// The comparison of all requested tables.
#[derive(Clone, Debug, Default)]
pub struct SyzygyReport {
    pub tables: Vec<SyzygyTableReport>,
    pub time: Duration,
}

impl SyzygyReport {
    pub fn is_ok(&self) -> bool {
        self.tables.iter().all(SyzygyTableReport::is_ok)
    }

    pub fn positions(&self) -> u64 {
        self.tables.iter().map(|t| t.positions).sum()
    }

    pub fn wdl_mismatches(&self) -> u64 {
        self.tables.iter().map(|t| t.wdl_mismatches).sum()
    }

    /// Counts of each class over all tables (indexed as [`DtzClass::ALL`]).
    pub fn classes(&self) -> [u64; 6] {
        let mut c = [0; 6];
        for t in &self.tables {
            for (a, b) in c.iter_mut().zip(t.classes) {
                *a += b;
            }
        }
        c
    }
}

/// Examples kept per class and table.
const EXAMPLES: usize = 3;
/// Slots per parallel work item.
const CHUNK: u64 = 1 << 12;

/// Open the Syzygy antichess tables in `dir` (`.gtbw/.gtbz`, pawnless `.stbw/.stbz`).
fn open_syzygy(dir: &Path) -> Result<Syzygy<Antichess>, VerifyError> {
    // SAFETY: `with_mmap_filesystem` is unsafe because the tables are memory-mapped: a file
    // modified or truncated while mapped breaks the aliasing promise of `&[u8]` or raises
    // SIGBUS. The reference tables are read-only inputs that nothing rewrites during a
    // comparison (the same caveat as our own reader, `crate::format::TableFile::open`). The
    // default reader issues a `pread` and a copy per probe; on ≤3-piece tables it spent half of
    // the comparison time copying (perf), which the map avoids. Exercised by tests/verify.rs
    // `tables_up_to_3_pieces_agree_with_syzygy` (`--features syzygy`).
    let mut tb = unsafe { Syzygy::<Antichess>::with_mmap_filesystem() };
    let n = tb
        .add_directory(dir)
        .map_err(|e| VerifyError::Syzygy(format!("cannot read {}: {e}", dir.display())))?;
    if n == 0 {
        return Err(VerifyError::Syzygy(format!(
            "no Syzygy antichess table in {}",
            dir.display()
        )));
    }
    Ok(tb)
}

/// Syzygy's WDL (after zeroing) and DTZ (rounding ignored) of a position.
fn probe(tb: &Syzygy<Antichess>, pos: &Position) -> Result<(Wdl, i32), String> {
    let p = to_shakmaty(pos).map_err(|e| format!("{pos}: shakmaty rejects it: {e}"))?;
    let wdl = tb
        .probe_wdl_after_zeroing(&p)
        .map_err(|e| format!("{pos}: wdl: {e}"))?;
    let dtz = tb.probe_dtz(&p).map_err(|e| format!("{pos}: dtz: {e}"))?;
    let wdl = Wdl::from_i8(wdl as i8).ok_or_else(|| format!("{pos}: wdl out of range"))?;
    Ok((wdl, dtz.ignore_rounding().0))
}

/// How to compare.
#[derive(Clone, Debug)]
pub struct SyzygyOptions {
    /// Compare one slot in `sample` (those whose number, counted over both sections, is a
    /// multiple of it); 1 compares every position. Probing Syzygy costs about 10 µs per
    /// position and core, so the ≤4-piece set (≈ 5·10⁹ positions) needs a sample.
    pub sample: u64,
    /// Decoded tables of ours kept between tables, in bytes.
    pub cache_bytes: usize,
}

impl Default for SyzygyOptions {
    fn default() -> SyzygyOptions {
        SyzygyOptions {
            sample: 1,
            cache_bytes: super::VerifyOptions::default().cache_bytes,
        }
    }
}

/// Compare every position (or a sample, [`SyzygyOptions::sample`]) of `materials` in our
/// tables (`dirs`) with the Syzygy tables in `syzygy_dir`. Per-table problems are in the
/// report; an unreadable directory is an `Err`.
pub fn compare_syzygy(
    dirs: &[PathBuf],
    syzygy_dir: &Path,
    materials: &[Material],
    opts: &SyzygyOptions,
    events: &(dyn Fn(&VerifyEvent) + Sync),
) -> Result<SyzygyReport, VerifyError> {
    let start = Instant::now();
    let sample = opts.sample.max(1);
    let set = TableSet::new(dirs, opts.cache_bytes)?;
    let tb = open_syzygy(syzygy_dir)?;
    let mut plan: Vec<Material> = Vec::new();
    for m in materials {
        if !plan.contains(&m.canonical()) {
            plan.push(m.canonical());
        }
    }
    events(&VerifyEvent::Plan {
        tables: plan.clone(),
    });
    let mut report = SyzygyReport::default();
    for (i, &m) in plan.iter().enumerate() {
        events(&VerifyEvent::Start { i, material: m });
        let t0 = Instant::now();
        let mut r = SyzygyTableReport {
            material: m,
            positions: 0,
            wdl_mismatches: 0,
            classes: [0; 6],
            examples: Vec::new(),
            error: None,
            time: Duration::ZERO,
        };
        match dtz_view(&set, m) {
            Ok(view) => compare_table(&view, &tb, sample, i, events, &mut r),
            Err(e) => r.error = Some(e),
        }
        set.trim();
        r.time = t0.elapsed();
        events(&VerifyEvent::Compared {
            i,
            material: m,
            positions: r.positions,
            ok: r.is_ok(),
        });
        report.tables.push(r);
    }
    report.time = start.elapsed();
    Ok(report)
}

/// What one work item found.
#[derive(Default)]
struct Part {
    positions: u64,
    wdl_mismatches: u64,
    classes: [u64; 6],
    /// Examples: `None` for a WDL mismatch, else the DTZ class.
    examples: Vec<(Option<DtzClass>, String)>,
    /// Single-valued positions by (side to move, our DTZ, Syzygy's DTZ).
    single: BTreeMap<(Color, i32, i32), u64>,
}

fn compare_table(
    view: &View,
    tb: &Syzygy<Antichess>,
    sample: u64,
    i: usize,
    events: &(dyn Fn(&VerifyEvent) + Sync),
    r: &mut SyzygyTableReport,
) {
    let own = &view.tables[0];
    let size = own.index.size();
    let items: Vec<(usize, u64)> = (0..2)
        .flat_map(|side| (0..size).step_by(CHUNK as usize).map(move |s| (side, s)))
        .collect();
    let done = AtomicU64::new(0);
    let kept = |examples: &[(Option<DtzClass>, String)], kind: Option<DtzClass>| {
        examples.iter().filter(|e| e.0 == kind).count()
    };
    let parts: Vec<Result<Part, VerifyError>> = items
        .par_iter()
        .map(|&(side, start)| {
            let end = (start + CHUNK).min(size);
            let mut part = Part::default();
            for idx in start..end {
                if !(side as u64 * size + idx).is_multiple_of(sample) {
                    continue;
                }
                let Some(pos) = own.index.decode(side, idx) else {
                    continue;
                };
                let ours = if pos.has_capture() {
                    resolve(&pos, Metric::Dtz, &mut |p: &Position| {
                        view.lookup(p, Metric::Wdl)
                    })?
                } else {
                    view.stored(side, idx, Metric::Dtz)?
                };
                let (wdl, dtz) = probe(tb, &pos).map_err(VerifyError::Syzygy)?;
                part.positions += 1;
                if wdl != ours.wdl() {
                    part.wdl_mismatches += 1;
                    if kept(&part.examples, None) < EXAMPLES {
                        part.examples.push((
                            None,
                            format!(
                                "wdl mismatch: {pos}: ours {:+} ({ours:?}), syzygy {:+}",
                                ours.wdl().to_i8(),
                                wdl.to_i8()
                            ),
                        ));
                    }
                    continue;
                }
                let class = classify_dtz(ours.signed(), ours.wdl(), dtz, &pos);
                part.classes[class as usize] += 1;
                if class == DtzClass::SingleValued {
                    *part
                        .single
                        .entry((pos.turn(), ours.signed(), dtz))
                        .or_default() += 1;
                }
                if class != DtzClass::Exact && kept(&part.examples, Some(class)) < EXAMPLES {
                    part.examples.push((
                        Some(class),
                        format!(
                            "{class}: {pos}: ours {:+} ({ours:?}), syzygy {dtz:+}",
                            ours.signed()
                        ),
                    ));
                }
            }
            let d = done.fetch_add(end - start, Relaxed) + (end - start);
            events(&VerifyEvent::Progress {
                i,
                material: own.material,
                done: d,
                total: 2 * size,
            });
            Ok(part)
        })
        .collect();
    let mut examples: Vec<(Option<DtzClass>, String)> = Vec::new();
    let mut single: BTreeMap<(Color, i32, i32), u64> = BTreeMap::new();
    for part in parts {
        match part {
            Ok(p) => {
                r.positions += p.positions;
                r.wdl_mismatches += p.wdl_mismatches;
                for (a, b) in r.classes.iter_mut().zip(p.classes) {
                    *a += b;
                }
                for (k, n) in p.single {
                    *single.entry(k).or_default() += n;
                }
                for e in p.examples {
                    if kept(&examples, e.0) < EXAMPLES {
                        examples.push(e);
                    }
                }
            }
            Err(e) => {
                if r.error.is_none() {
                    r.error = Some(e);
                }
            }
        }
    }
    r.examples = examples.into_iter().map(|e| e.1).collect();
    // A single-valued sub-table has one value per side and class: its positions should fall in
    // few groups (more with pawns, one sub-table per leading-pawn file).
    for ((turn, d, p), n) in single {
        let side = if turn == Color::White {
            "White"
        } else {
            "Black"
        };
        r.examples.push(format!(
            "single-valued group: {side} to move, ours {d:+}, syzygy {p:+}: {n} positions"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let pos: Position = "8/8/8/8/8/8/8/K6k w - - 0 1".parse().unwrap();
        assert_eq!(classify_dtz(5, Wdl::Win, 5, &pos), DtzClass::Exact);
        assert_eq!(classify_dtz(6, Wdl::Win, 5, &pos), DtzClass::RoundedByOne);
        assert_eq!(
            classify_dtz(-106, Wdl::BlessedLoss, -105, &pos),
            DtzClass::RoundedByOne
        );
        assert_eq!(classify_dtz(0, Wdl::Win, 1, &pos), DtzClass::Terminal);
        assert_eq!(
            classify_dtz(-1, Wdl::Loss, -3, &pos),
            DtzClass::SingleValued
        );
        assert_eq!(classify_dtz(5, Wdl::Win, -5, &pos), DtzClass::Mismatch);
        assert_eq!(classify_dtz(8, Wdl::Win, 5, &pos), DtzClass::Mismatch);
        assert_eq!(classify_dtz(4, Wdl::Win, 2, &pos), DtzClass::SingleValued);
        assert_eq!(
            classify_dtz(-5, Wdl::Loss, -3, &pos),
            DtzClass::SingleValued
        );
        assert_eq!(
            classify_dtz(-150, Wdl::BlessedLoss, -103, &pos),
            DtzClass::SingleValued
        );
        assert_eq!(
            classify_dtz(-150, Wdl::BlessedLoss, -3, &pos),
            DtzClass::Mismatch
        );
        // A king move that forces the other king to capture is a threat.
        let threat: Position = "8/8/8/8/8/8/8/K1k5 w - - 0 1".parse().unwrap();
        assert!(has_threat_move(&threat) && !has_threat_move(&pos));
        assert_eq!(classify_dtz(1, Wdl::Win, 2, &threat), DtzClass::Threat);
        assert_eq!(classify_dtz(1, Wdl::Win, 2, &pos), DtzClass::Mismatch);
    }
}
