//! The self-consistency check of the module doc: every stored position against the values its
//! successors derive.

use super::checkpoint::Checkpoint;
use super::tables::{CompactSide, Decoded, Side, TableSet, View, ViewTable, decode, read_by};
use super::{
    Check, Disagreement, Reading, Report, TableReport, VerifyError, VerifyEvent, VerifyOptions,
};
use crate::rules::{Move, MoveList, Position};
use crate::store::{StoredTable, value_of_distance};
use crate::table::{Index, Material, Metric, SlotScan, Value, Wdl, resolve, short_dtz};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Slots per parallel work item.
const CHUNK: u64 = 1 << 14;

/// Verify `materials` (any orientation) in the table directories `dirs`: headers and checksums
/// of every file, then (unless [`VerifyOptions::fast`]) every stored position. Problems with
/// single tables are in the report; only an unreadable directory is an `Err`.
pub fn verify_tables(
    dirs: &[PathBuf],
    materials: &[Material],
    opts: &VerifyOptions,
    events: &(dyn Fn(&VerifyEvent) + Sync),
) -> Result<Report, VerifyError> {
    let start = Instant::now();
    let set = TableSet::new(dirs, opts.cache_bytes)?;
    let mut plan: Vec<Material> = Vec::new();
    for m in materials {
        let m = m.canonical();
        if !plan.contains(&m) {
            plan.push(m);
        }
    }
    events(&VerifyEvent::Plan {
        tables: plan.clone(),
    });
    let mut report = Report::default();
    for (i, &m) in plan.iter().enumerate() {
        events(&VerifyEvent::Start { i, material: m });
        let r = check_table(&set, i, m, opts, events);
        set.trim();
        events(&VerifyEvent::Done {
            i,
            report: r.clone(),
        });
        report.tables.push(r);
    }
    report.time = start.elapsed();
    Ok(report)
}

/// Open the files of one table and check their headers and checksums.
fn open_files(
    set: &TableSet,
    m: Material,
    report: &mut TableReport,
) -> Option<[Option<StoredTable>; 3]> {
    let mut files: [Option<StoredTable>; 3] = [None, None, None];
    for (k, metric) in Metric::ALL.into_iter().enumerate() {
        let Some(path) = set.path(m, metric) else {
            if metric != Metric::Dtw {
                report.errors.push(VerifyError::MissingTable {
                    material: m,
                    metric,
                });
            }
            continue;
        };
        report.files.push(path.clone());
        match super::tables::open_path(&path, m, metric).and_then(|t| {
            t.file().verify_checksums()?;
            Ok(t)
        }) {
            Ok(t) => files[k] = Some(t),
            Err(e) => report.errors.push(e),
        }
    }
    report.errors.is_empty().then_some(files)
}

fn check_table(
    set: &TableSet,
    i: usize,
    m: Material,
    opts: &VerifyOptions,
    events: &(dyn Fn(&VerifyEvent) + Sync),
) -> TableReport {
    let t0 = Instant::now();
    let mut report = TableReport {
        material: m,
        files: Vec::new(),
        positions: 0,
        resumed: 0,
        disagreements: 0,
        shown: Vec::new(),
        errors: Vec::new(),
        time: Default::default(),
    };
    let files = open_files(set, m, &mut report);
    if let (Some([Some(wdl), Some(dtz), dtw]), false) = (files, opts.fast) {
        check_files(
            set,
            i,
            m,
            [&wdl, &dtz],
            dtw.as_ref(),
            opts,
            events,
            &mut report,
        );
    }
    report.time = t0.elapsed();
    report
}

/// Check every stored position of a table whose files are open and sound.
#[allow(clippy::too_many_arguments)]
fn check_files(
    set: &TableSet,
    i: usize,
    m: Material,
    [wdl, dtz]: [&StoredTable; 2],
    dtw: Option<&StoredTable>,
    opts: &VerifyOptions,
    events: &(dyn Fn(&VerifyEvent) + Sync),
    report: &mut TableReport,
) {
    // Two-byte values and a decoded `.wdl` file: 5 bytes a slot a side with a `.dtw` file.
    let metrics = if dtw.is_some() { 5 } else { 3 };
    let compact = 2 * metrics * wdl.index.size() > opts.compact_above;
    let derived = Derived {
        dtz: [0, 1].map(|side| !dtz.stores_side(side)),
        dtw: [0, 1].map(|side| dtw.is_some_and(|t| !t.stores_side(side))),
    };
    if !compact {
        match build_view(set, m, wdl, dtz, dtw) {
            Ok(view) => scan(&view, None, derived, None, i, opts, events, report),
            Err(e) => report.errors.push(e),
        }
        return;
    }
    let checkpoint = match &opts.checkpoint {
        Some(dir) => {
            let own: Vec<&StoredTable> =
                [Some(wdl), Some(dtz), dtw].into_iter().flatten().collect();
            match Checkpoint::new(dir, m, wdl.index.size(), &own) {
                Ok(c) => Some(c),
                Err(e) => return report.errors.push(e),
            }
        }
        None => None,
    };
    let sides = if dtw.is_some() { 4 } else { 2 };
    let saved = checkpoint.as_ref().and_then(|c| c.load(sides));
    let loaded = saved.is_some();
    let view = match saved {
        Some(saved) => Ok(compact_view(set, m, &wdl.index, saved)),
        None => build_compact_view(set, m, wdl, dtz, dtw),
    };
    let view = match view {
        Ok(view) => view,
        Err(e) => return report.errors.push(e),
    };
    if let (Some(c), false) = (&checkpoint, loaded) {
        // The check goes on without a saved state; the run reports why there is none.
        if let Err(e) = c.save(&view.tables[0].compact_sides()) {
            report.errors.push(e);
        }
    }
    let resume = checkpoint.as_ref().map(|c| (c, loaded));
    scan(&view, Some(wdl), derived, resume, i, opts, events, report);
    if let Some(c) = &checkpoint
        && report.errors.is_empty()
    {
        c.remove();
    }
}

/// Decode the table and everything it can reach.
fn build_view(
    set: &TableSet,
    m: Material,
    wdl: &StoredTable,
    dtz: &StoredTable,
    dtw: Option<&StoredTable>,
) -> Result<View, VerifyError> {
    let own_wdl = Arc::new(decode(wdl, None)?);
    let own_dtz = Arc::new(decode(dtz, Some(&own_wdl))?);
    let own_dtw = match dtw {
        Some(t) => Some(Ok(Arc::new(decode(t, Some(&own_wdl))?))),
        None => None,
    };
    // What this table's check decoded is what later tables need from it (its `.dtw` values
    // once both sides are filled, below).
    set.insert(m, Metric::Wdl, own_wdl.clone());
    let mut tables = vec![ViewTable::new(m, Ok(own_wdl), Some(own_dtz), own_dtw)];
    tables.extend(reached(set, m, dtw.is_some()));
    let mut view = View::new(tables).with_far(set.far());
    // The stored side's left-out short values first: the other side is derived from it.
    for side in 0..2 {
        if dtz.stores_side(side) && dtz.short_by_search() {
            let values = short_side(&view, side)?;
            view.tables[0].fill_side(Metric::Dtz, side, values);
        }
    }
    // The side the `.dtz` file does not store: one ply of search from the stored side, as a
    // prober does. Its DTZ check below then holds by construction; its WDL check does not.
    for side in 0..2 {
        if !dtz.stores_side(side) {
            let values = derive_side(&view, side, Metric::Dtz)?;
            view.tables[0].fill_side(Metric::Dtz, side, values);
        }
    }
    // Likewise the side the `.dtw` file does not store (files of older versions store both).
    if let Some(dtw) = dtw {
        for side in 0..2 {
            if !dtw.stores_side(side) {
                let values = derive_side(&view, side, Metric::Dtw)?;
                view.tables[0].fill_side(Metric::Dtw, side, values);
            }
        }
        if let Some(d) = view.tables[0].dtw() {
            set.insert(m, Metric::Dtw, d.clone());
        }
    }
    Ok(view)
}

/// The tables positions of `m` reach, decoded (with their `.dtw` files if `dtw`). A table that
/// cannot be read is an error only if a position really reaches it.
fn reached(set: &TableSet, m: Material, dtw: bool) -> Vec<ViewTable> {
    read_by(m)
        .into_iter()
        .map(|r| {
            let wdl = set.decoded(r, Metric::Wdl);
            let dtw = dtw.then(|| set.decoded(r, Metric::Dtw));
            ViewTable::new(r, wdl, None, dtw)
        })
        .collect()
}

/// The stored side of a `.dtz` file that leaves out short values, with those told by search
/// as a prober does ([`short_dtz`]); other slots keep their stored value.
fn short_side(view: &View, side: usize) -> Result<Vec<Value>, VerifyError> {
    every_slot(view, |scan, idx| {
        let stored = view.stored(side, idx, Metric::Dtz)?;
        // The class from the `.wdl` file: a filler distance may be of any class.
        let w = view.stored(side, idx, Metric::Wdl)?.wdl();
        slot_value(view, scan, side, idx, w, Fill::Short(stored))
    })
}

/// `value(scan, slot)` of every slot of a side of the checked table, in parallel: chunks of
/// slots in order, each with a [`SlotScan`] of the table's index.
fn every_slot(
    view: &View,
    value: impl Fn(&mut SlotScan, u64) -> Result<Value, VerifyError> + Sync,
) -> Result<Vec<Value>, VerifyError> {
    let index = &view.tables[0].index;
    let size = index.size();
    let chunks: Vec<u64> = (0..size.div_ceil(CHUNK)).collect();
    let parts: Vec<Vec<Value>> = chunks
        .par_iter()
        .map(|&c| {
            let mut scan = index.scan();
            (c * CHUNK..((c + 1) * CHUNK).min(size))
                .map(|idx| value(&mut scan, idx))
                .collect::<Result<Vec<Value>, VerifyError>>()
        })
        .collect::<Result<_, VerifyError>>()?;
    Ok(parts.concat())
}

/// The values of `metric` (DTZ or DTW) of every quiet decisive position of one side of the
/// checked table, derived from its moves by one ply of search over the side its file stores
/// (draws elsewhere).
fn derive_side(view: &View, side: usize, metric: Metric) -> Result<Vec<Value>, VerifyError> {
    every_slot(view, |scan, idx| {
        let w = view.stored(side, idx, Metric::Wdl)?.wdl();
        slot_value(view, scan, side, idx, w, Fill::Derived(metric))
    })
}

/// How a slot of the checked table gets its value.
#[derive(Copy, Clone)]
enum Fill {
    /// A slot of a stored `.dtz` side that leaves out short values, holding this: the short
    /// value if the position has one, told by search ([`short_dtz`]), else this.
    Short(Value),
    /// A slot of the side a file of this metric leaves out: derived by one ply of search.
    Derived(Metric),
}

/// The value of slot `idx` of the checked table, of class `w` in the `.wdl` file, by `fill`;
/// `scan` is a scan of the table's index, at a slot before `idx` or fresh. Draws, invalid slots
/// and positions with a capture (which no file stores) are not searched.
fn slot_value(
    view: &View,
    scan: &mut SlotScan,
    side: usize,
    idx: u64,
    w: Wdl,
    fill: Fill,
) -> Result<Value, VerifyError> {
    let pos = match (w != Wdl::Draw).then(|| scan.decode(side, idx)).flatten() {
        Some(pos) if !pos.has_capture() => pos,
        _ => {
            return Ok(match fill {
                Fill::Short(stored) => stored,
                Fill::Derived(_) => Value::DRAW,
            });
        }
    };
    Ok(match fill {
        Fill::Short(stored) => {
            let mut wdl = |p: &Position| -> Result<Wdl, VerifyError> {
                Ok(resolve(p, Metric::Wdl, &mut |q: &Position| {
                    view.lookup(q, Metric::Wdl)
                })?
                .wdl())
            };
            short_dtz(&pos, w, stored.distance(), &mut wdl)?.unwrap_or(stored)
        }
        Fill::Derived(metric) => {
            let mut moves = MoveList::new();
            pos.quiet_moves(&mut moves);
            if metric == Metric::Dtw {
                derive_dtw(view, &pos, &moves)?
            } else {
                derive_dtz(view, &pos, &moves)?
            }
        }
    })
}

/// [`build_view`] for a table held one byte a slot a metric ([`CompactSide`]): its `.wdl` file
/// is read section by section, never whole, first as the classes the searches below read, then
/// to give the stored values their class; the side each file leaves out is derived in place.
/// About 1 byte a slot a side per metric (2 with a `.dtw` file) where [`build_view`] needs 3
/// (5).
fn build_compact_view(
    set: &TableSet,
    m: Material,
    wdl: &StoredTable,
    dtz: &StoredTable,
    dtw: Option<&StoredTable>,
) -> Result<View, VerifyError> {
    let index = &wdl.index;
    dtz.check_index_of(index)?;
    if let Some(t) = dtw {
        t.check_index_of(index)?;
    }
    let sides = if dtw.is_some() { 4 } else { 2 };
    let fresh = (0..sides).map(|_| CompactSide::new(index.size())).collect();
    let view = compact_view(set, m, index, fresh);
    // Each slot's class first: the searches that tell short values read only classes.
    for side in 0..2 {
        let own = view.tables[0].compact_side(Metric::Dtz, side);
        by_sections(wdl, side, |_, idx, w| Ok(own.set(idx, w.as_value())))?;
    }
    let files = [(Metric::Dtz, Some(dtz)), (Metric::Dtw, dtw)];
    for (metric, file) in files.into_iter().filter_map(|(m, f)| Some((m, f?))) {
        // The stored side first: the other is derived from it.
        for side in [0, 1].into_iter().filter(|&s| file.stores_side(s)) {
            let own = view.tables[0].compact_side(metric, side);
            let short = metric == Metric::Dtz && file.short_by_search();
            let far = by_sections_with(wdl, Some(file), side, |scan, idx, w, d| {
                let stored = match w {
                    Wdl::Draw => Value::DRAW,
                    w => value_of_distance(metric, w, d),
                };
                let v = if short {
                    slot_value(&view, scan, side, idx, w, Fill::Short(stored))?
                } else {
                    stored
                };
                Ok(own.set(idx, v))
            })?;
            own.finish(far);
        }
        for side in [0, 1].into_iter().filter(|&s| !file.stores_side(s)) {
            let own = view.tables[0].compact_side(metric, side);
            let far = by_sections(wdl, side, |scan, idx, w| {
                let v = slot_value(&view, scan, side, idx, w, Fill::Derived(metric))?;
                Ok(own.set(idx, v))
            })?;
            own.finish(far);
        }
    }
    Ok(view)
}

/// The view of a table held compact, its values in `sides` (`.dtz` sides 0 and 1, then the
/// `.dtw` sides if it has that file), and of every table it reaches.
fn compact_view(set: &TableSet, m: Material, index: &Index, sides: Vec<CompactSide>) -> View {
    let mut sides = sides.into_iter().map(Side::Compact);
    let mut values = || {
        let mut pair = || sides.next();
        Some(Arc::new(Decoded::Values([pair()?, pair()?])))
    };
    let own_dtz = values().expect("a compact table has its .dtz sides");
    let own_dtw = values();
    let dtw = own_dtw.is_some();
    let mut tables = vec![ViewTable::compact(m, index.clone(), own_dtz, own_dtw)];
    tables.extend(reached(set, m, dtw));
    View::new(tables).with_far(set.far())
}

/// Call `f(scan, slot, class)` for every slot of one side of a `.wdl` file, its sections decoded
/// one at a time in parallel, each with a [`SlotScan`] of the file's index; collect what `f`
/// returns.
fn by_sections<T: Send>(
    wdl: &StoredTable,
    side: usize,
    f: impl Fn(&mut SlotScan, u64, Wdl) -> Result<Option<T>, VerifyError> + Sync,
) -> Result<Vec<T>, VerifyError> {
    by_sections_with(wdl, None, side, |scan, idx, w, _| f(scan, idx, w))
}

/// [`by_sections`] with the same section of a `.dtz`/`.dtw` file beside: `f(scan, slot, class,
/// distance)` (distance 0 without a file).
fn by_sections_with<T: Send>(
    wdl: &StoredTable,
    file: Option<&StoredTable>,
    side: usize,
    f: impl Fn(&mut SlotScan, u64, Wdl, u16) -> Result<Option<T>, VerifyError> + Sync,
) -> Result<Vec<T>, VerifyError> {
    let sections: Vec<usize> = (0..wdl.sections_per_side()).collect();
    let parts: Vec<Vec<T>> = sections
        .par_iter()
        .map(|&k| {
            let classes = wdl.decode_wdl_section(side, k)?;
            let distances = file.map(|t| t.decode_section(side, k)).transpose()?;
            let mut out = Vec::new();
            let mut scan = wdl.index.scan();
            for (j, idx) in wdl.section_slots(k).enumerate() {
                let d = distances.as_ref().map_or(0, |d| d[j]);
                out.extend(f(&mut scan, idx, classes[j], d)?);
            }
            Ok(out)
        })
        .collect::<Result<_, VerifyError>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// The view for DTZ values only: the table's `.wdl` and `.dtz` files (headers checked; blocks
/// are checked as they are decoded) and the `.wdl` files of every table it reaches.
#[cfg(feature = "syzygy")]
pub(super) fn dtz_view(set: &TableSet, m: Material) -> Result<View, VerifyError> {
    let wdl = set.open(m, Metric::Wdl)?;
    let dtz = set.open(m, Metric::Dtz)?;
    build_view(set, m, &wdl, &dtz, None)
}

/// The sides to move whose `.dtz` (`.dtw`) values the view derived by one ply of search
/// ([`derive_side`], or in place by [`build_compact_view`]) for every quiet slot the `.wdl` file
/// calls decisive. The scan would derive those values again from the same successors, so it
/// takes them as derived and compares their class with the `.wdl` file's; a slot the `.wdl`
/// file calls a draw (which that search left a draw) is derived as on a stored side.
#[derive(Copy, Clone)]
struct Derived {
    dtz: [bool; 2],
    dtw: [bool; 2],
}

/// What one work item found.
#[derive(Default)]
struct Found {
    positions: u64,
    disagreements: u64,
    shown: Vec<Disagreement>,
    error: Option<VerifyError>,
}

/// Check every slot of both sides to move, in parallel. With `wdl` (a table held compact),
/// the stored classes are read from that `.wdl` file section by section; otherwise from the
/// view.
///
/// With `resume` (a compact table's checkpoint, and whether its values were loaded from it),
/// the sections a previous run finished are skipped and each section finished cleanly is
/// recorded.
#[allow(clippy::too_many_arguments)]
fn scan(
    view: &View,
    wdl: Option<&StoredTable>,
    derived: Derived,
    resume: Option<(&Checkpoint, bool)>,
    i: usize,
    opts: &VerifyOptions,
    events: &(dyn Fn(&VerifyEvent) + Sync),
    report: &mut TableReport,
) {
    let own = &view.tables[0];
    let size = own.index.size();
    let total = 2 * size;
    // (side, section or chunk, slots)
    let items: Vec<(usize, usize, std::ops::Range<u64>)> = (0..2)
        .flat_map(|side| match wdl {
            Some(t) => (0..t.sections_per_side())
                .map(|k| (side, k, t.section_slots(k)))
                .collect::<Vec<_>>(),
            None => (0..size)
                .step_by(CHUNK as usize)
                .map(|s| (side, 0, s..(s + CHUNK).min(size)))
                .collect(),
        })
        .collect();
    let finished = resume.map(|(c, _)| c.finished()).unwrap_or_default();
    let (items, skipped): (Vec<_>, Vec<_>) = items
        .into_iter()
        .partition(|(side, k, _)| !finished.contains_key(&(*side, *k)));
    let skipped_slots: u64 = skipped.iter().map(|(_, _, r)| r.end - r.start).sum();
    report.resumed = skipped
        .iter()
        .map(|(side, k, _)| finished[&(*side, *k)])
        .sum::<u64>();
    report.positions += report.resumed;
    if let Some((_, values)) = resume
        && (values || skipped_slots > 0)
    {
        events(&VerifyEvent::Resumed {
            i,
            material: own.material,
            values,
            slots: skipped_slots,
            positions: report.positions,
        });
    }
    let done_list = match resume.map(|(c, _)| c.done_list()).transpose() {
        Ok(list) => list,
        Err(e) => {
            report.errors.push(e);
            None
        }
    };
    let done = AtomicU64::new(skipped_slots);
    let limit = if opts.max_reports == 0 {
        usize::MAX
    } else {
        opts.max_reports
    };
    let found: Vec<Found> = items
        .par_iter()
        .map(|(side, k, slots)| {
            let (side, len) = (*side, slots.end - slots.start);
            let mut f = Found::default();
            let classes = match wdl.map(|t| t.decode_wdl_section(side, *k)).transpose() {
                Ok(c) => c,
                Err(e) => {
                    f.error = Some(e.into());
                    return f;
                }
            };
            let mut scan = view.tables[0].index.scan();
            for (j, idx) in slots.clone().enumerate() {
                let stored_wdl = classes.as_ref().map(|c| c[j]);
                let at = (side, idx, stored_wdl);
                if let Err(e) = check_slot(view, &mut scan, at, derived, limit, &mut f) {
                    f.error = Some(e);
                    break;
                }
            }
            if let Some(list) = &done_list
                && f.disagreements == 0
                && f.error.is_none()
                && let Err(e) = list.record(side, *k, f.positions)
            {
                f.error = Some(e);
            }
            let d = done.fetch_add(len, Relaxed) + len;
            events(&VerifyEvent::Progress {
                i,
                material: own.material,
                done: d,
                total,
            });
            f
        })
        .collect();
    for f in found {
        report.positions += f.positions;
        report.disagreements += f.disagreements;
        let room = limit.saturating_sub(report.shown.len());
        report.shown.extend(f.shown.into_iter().take(room));
        if let Some(e) = f.error
            && report.errors.is_empty()
        {
            report.errors.push(e);
        }
    }
}

/// Check one slot, `(side, idx, the class a compact table's scan read)`, its position decoded
/// by `scan` (of the checked table's index): nothing to do for invalid slots and capture
/// positions (not stored).
fn check_slot(
    view: &View,
    scan: &mut SlotScan,
    (side, idx, stored_wdl): (usize, u64, Option<Wdl>),
    derived: Derived,
    limit: usize,
    f: &mut Found,
) -> Result<(), VerifyError> {
    let own = &view.tables[0];
    let Some(pos) = scan.decode(side, idx) else {
        return Ok(());
    };
    if pos.has_capture() {
        return Ok(());
    }
    f.positions += 1;
    // No capture: the legal moves are the quiet moves (generated if a value is derived).
    let mut moves: Option<MoveList> = None;
    // The class a compact table's scan read from its `.wdl` section, else the view's.
    let stored_wdl = match stored_wdl {
        Some(w) => w,
        None => view.stored(side, idx, Metric::Wdl)?.wdl(),
    };
    let by_search = |sides: [bool; 2]| sides[side] && stored_wdl != Wdl::Draw;
    let stored_dtz = view.stored(side, idx, Metric::Dtz)?;
    let dtz = if by_search(derived.dtz) {
        stored_dtz
    } else {
        derive_dtz(view, &pos, quiet_moves(&pos, &mut moves))?
    };
    let mut report = |check, stored, derived| {
        f.disagreements += 1;
        if f.shown.len() < limit {
            f.shown.push(Disagreement {
                material: own.material,
                side,
                index: idx,
                position: pos,
                check,
                stored,
                derived,
            });
        }
    };
    if stored_dtz != dtz {
        report(Check::Dtz, Reading::Value(stored_dtz), Reading::Value(dtz));
    }
    if stored_wdl != dtz.wdl() {
        report(
            Check::Wdl,
            Reading::Wdl(stored_wdl),
            Reading::Wdl(dtz.wdl()),
        );
    }
    if own.has_dtw() {
        let stored_dtw = view.stored(side, idx, Metric::Dtw)?;
        let dtw = if by_search(derived.dtw) {
            stored_dtw
        } else {
            derive_dtw(view, &pos, quiet_moves(&pos, &mut moves))?
        };
        if stored_dtw != dtw {
            report(Check::Dtw, Reading::Value(stored_dtw), Reading::Value(dtw));
        }
        let class_ok = if stored_dtw.is_win() {
            stored_wdl.is_win()
        } else if stored_dtw.is_loss() {
            stored_wdl.is_loss()
        } else {
            stored_wdl == Wdl::Draw
        };
        if !class_ok {
            report(
                Check::DtwClass,
                Reading::Value(stored_dtw),
                Reading::Wdl(stored_wdl),
            );
        }
    }
    Ok(())
}

/// The moves of a quiet position, generated into `list` the first time.
fn quiet_moves<'l>(pos: &Position, list: &'l mut Option<MoveList>) -> &'l MoveList {
    list.get_or_insert_with(|| {
        let mut moves = MoveList::new();
        pos.quiet_moves(&mut moves);
        moves
    })
}

/// The DTZ value of a quiet position from its moves (SPEC.md §2).
fn derive_dtz(view: &View, pos: &Position, moves: &[Move]) -> Result<Value, VerifyError> {
    if moves.is_empty() {
        return Ok(Value::win(0));
    }
    let mut best: Option<Value> = None;
    let mut wdl = |p: &Position| view.lookup(p, Metric::Wdl);
    for m in moves {
        let child = pos.after(m);
        let score = if m.is_zeroing() {
            // Pawn moves (there is no capture here): scored by the child's WDL.
            Metric::Dtz.zeroing(resolve(&child, Metric::Dtz, &mut wdl)?)
        } else {
            // The child's stored DTZ; if the opponent must capture there, the best of its
            // captures (zeroing moves, scored by WDL).
            resolve(&child, Metric::Dtz, &mut |p: &Position| {
                view.lookup(p, Metric::Dtz)
            })?
            .after_move()
        };
        best = Some(best.map_or(score, |b| b.max(score)));
    }
    Ok(best.expect("at least one move"))
}

/// The DTW value of a quiet position from its moves (SPEC.md §3).
fn derive_dtw(view: &View, pos: &Position, moves: &[Move]) -> Result<Value, VerifyError> {
    if moves.is_empty() {
        return Ok(Value::win(0));
    }
    let mut best: Option<Value> = None;
    let mut dtw = |p: &Position| view.lookup(p, Metric::Dtw);
    for m in moves {
        let score = resolve(&pos.after(m), Metric::Dtw, &mut dtw)?.after_move();
        best = Some(best.map_or(score, |b| b.max(score)));
    }
    Ok(best.expect("at least one move"))
}
