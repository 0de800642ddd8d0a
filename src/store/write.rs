//! Writing a table's files: values mapped to symbols, don't-care slots filled, each file
//! compressed and written atomically by [`crate::format`].

use super::{SHORT_BY_SEARCH, StoreError, StoreOptions, file_name, stored_distance, wdl_symbol};
use crate::format::{self, Compression, FormatError, TableMeta, WriteOptions, WriteStats};
use crate::table::{
    FRAME, Index, LeadCache, Material, Metric, NOT_STORED, TableValues, Value, Wdl,
};
use rayon::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How don't-care slots are filled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fill {
    /// Repeat the previous stored symbol (best for zstd, measured).
    Previous,
    /// A gap between stored symbols `a` and `b` becomes `a…a b…b`, switching to `b` where the
    /// slot one row up (8 slots back: the last piece one rank lower) stops being `a`. Rows
    /// then repeat more often, which the pairs codec turns into shared symbols: 7.5 % smaller
    /// `.wdl` and 4.7 % smaller `.dtz` data than `Previous` on KRvKN KPvKP BBvNN KQvRB RNPvK.
    Rows,
}

impl Fill {
    /// The fill that suits the codec `opts` writes with.
    fn suiting(opts: &WriteOptions) -> Fill {
        match opts.compression {
            Compression::Pairs { .. } => Fill::Rows,
            Compression::Zstd => Fill::Previous,
        }
    }
}

/// Slots back to the same square of the last piece one rank lower (the index's last digit is
/// a square, 8 per rank).
const ROW: usize = 8;

/// Values per file section: each side to move is cut into sections of this many slots (the
/// last one shorter), compressed independently, so the writer holds one section per thread,
/// never the whole table.
pub const SECTION_VALUES: u64 = 1 << 24;

const _: () = assert!(SECTION_VALUES.is_multiple_of(FRAME));

/// Sections per side of a table of `size` slots per side.
pub(super) fn sections_per_side(size: u64) -> u64 {
    size.div_ceil(SECTION_VALUES).max(1)
}

/// The value of a frame's slot code, if the position is one files store (valid and quiet).
#[inline]
fn stored_value(code: u16) -> Option<Value> {
    (code & NOT_STORED == 0 && code != Value::INVALID.code()).then_some(Value(code))
}

/// The codes of slots `range` of `side` (frames read one at a time) into `out`.
fn read_range<T: TableValues + ?Sized>(
    t: &T,
    side: usize,
    range: Range<u64>,
    out: &mut Vec<u16>,
) -> Result<(), T::Error> {
    out.clear();
    let mut buf = Vec::new();
    let mut f = (range.start / FRAME) as usize;
    while (f as u64) * FRAME < range.end {
        t.frame(side, f, &mut buf)?;
        let s = f as u64 * FRAME;
        let a = range.start.max(s) - s;
        let b = range.end.min(s + buf.len() as u64) - s;
        out.extend_from_slice(&buf[a as usize..b as usize]);
        f += 1;
    }
    Ok(())
}

/// A table's values read in the order of a file's index: the table's own, or the same
/// material with its rest groups in another order ([`Index::rest_orders`]).
struct InOrder<'a, T: ?Sized> {
    table: &'a T,
    file: &'a Index,
    /// [`Index::digit_map`] from the file's index to the table's.
    map: [u8; 16],
    /// [`Index::shared_run`]: the table's values are read one such run at a time.
    run: u64,
    same: bool,
}

impl<'a, T: TableValues + ?Sized> InOrder<'a, T> {
    fn new(table: &'a T, file: &'a Index) -> InOrder<'a, T> {
        let own = table.index();
        InOrder {
            table,
            file,
            map: file.digit_map(own),
            run: file.shared_run(own),
            same: file.params() == own.params(),
        }
    }

    /// The codes of slots `range` (in the file's order) of `side` into `out` (cleared first).
    fn read(&self, side: usize, range: Range<u64>, out: &mut Vec<u16>) -> Result<(), T::Error> {
        if self.same {
            return read_range(self.table, side, range, out);
        }
        let mut runs = FromTable {
            table: self.table,
            side,
            codes: Vec::new(),
        };
        self.read_from(&mut runs, range, out)
    }

    /// [`InOrder::read`] of the table's slots as `runs` gives them.
    fn read_from<R: Runs>(
        &self,
        runs: &mut R,
        range: Range<u64>,
        out: &mut Vec<u16>,
    ) -> Result<(), R::Error> {
        out.clear();
        if self.same {
            out.extend_from_slice(runs.run(range)?);
            return Ok(());
        }
        let own = self.table.index();
        let mut lead = LeadCache::default();
        // The file's slots are taken a row at a time ([`Index::row_in`]) where no symmetry
        // fixes the lead, else one at a time (most a step from the last).
        let mut last = None;
        let mut r = range.start / self.run;
        while r * self.run < range.end {
            let span = r * self.run..((r + 1) * self.run).min(own.size());
            let run = runs.run(span.clone())?;
            let (mut idx, end) = (range.start.max(span.start), range.end.min(span.end));
            while idx < end {
                let pl = self.file.placement_after(&mut last, idx, &mut lead);
                if let Some(row) = self.file.row_in(&pl, own, &self.map) {
                    for at in row.take((end - idx) as usize) {
                        debug_assert!(span.contains(&at), "a slot outside its shared run");
                        out.push(run[(at - span.start) as usize]);
                        idx += 1;
                    }
                    continue;
                }
                out.push(if self.file.is_canonical(&pl, idx) {
                    let at = self.file.slot_in(&pl, own, &self.map);
                    debug_assert!(span.contains(&at), "a slot outside its shared run");
                    run[(at - span.start) as usize]
                } else {
                    Value::INVALID.code()
                });
                idx += 1;
            }
            r += 1;
        }
        Ok(())
    }
}

/// Where [`InOrder`] reads a table's own slots, one shared run (or one range of the table's
/// own order) at a time.
trait Runs {
    type Error;

    /// The codes of the table's slots `span` of the side read.
    fn run(&mut self, span: Range<u64>) -> Result<&[u16], Self::Error>;
}

/// Runs read from the table's frames.
struct FromTable<'a, T: ?Sized> {
    table: &'a T,
    side: usize,
    codes: Vec<u16>,
}

impl<T: TableValues + ?Sized> Runs for FromTable<'_, T> {
    type Error = T::Error;

    fn run(&mut self, span: Range<u64>) -> Result<&[u16], T::Error> {
        read_range(self.table, self.side, span, &mut self.codes)?;
        Ok(&self.codes)
    }
}

/// Runs within slots read before: `codes` holds the table's slots from `start` on.
struct Read<'a> {
    start: u64,
    codes: &'a [u16],
}

impl Runs for Read<'_> {
    type Error = std::convert::Infallible;

    fn run(&mut self, span: Range<u64>) -> Result<&[u16], Self::Error> {
        let at = |i: u64| (i - self.start) as usize;
        Ok(&self.codes[at(span.start)..at(span.end)])
    }
}

/// [`read_range`] with its frames read in parallel.
fn read_range_par<T: TableValues + ?Sized>(
    t: &T,
    side: usize,
    range: Range<u64>,
    out: &mut Vec<u16>,
) -> Result<(), T::Error> {
    let len = (range.end - range.start) as usize;
    out.clear();
    out.resize(len, 0);
    // Up to the first frame boundary, then a frame at a time.
    let head = ((FRAME - range.start % FRAME) % FRAME).min(len as u64);
    let (first, rest) = out.split_at_mut(head as usize);
    let mut codes = Vec::new();
    if head > 0 {
        read_range(t, side, range.start..range.start + head, &mut codes)?;
        first.copy_from_slice(&codes);
    }
    let from = range.start + head;
    rest.par_chunks_mut(FRAME as usize)
        .enumerate()
        .try_for_each_init(Vec::new, |codes, (k, dst)| {
            let start = from + k as u64 * FRAME;
            read_range(t, side, start..start + dst.len() as u64, codes)?;
            dst.copy_from_slice(codes);
            Ok(())
        })
}

/// A table as the writer reads it for its `.wdl` and `.dtz` files: the table itself, or, where
/// the files order the rest groups unlike the table and both sides fit [`COPY_BYTES`], its codes
/// copied once in the files' order. Through [`InOrder`] each read of a slot places it in one
/// index (mostly a step from the slot before) and encodes it in the other, and those files
/// read every slot once and one side's again (a fifth of KNvBP's WDL + DTZ build).
struct ForFiles<'a, T: ?Sized> {
    table: &'a T,
    copy: Option<(Index, [Vec<u16>; 2])>,
}

/// Bytes of codes (both sides) up to which the writer copies a table whose files order the
/// rest groups unlike it, in the files' order, before writing its `.wdl` and `.dtz` files: 16 M
/// slots a side, a section (every table up to four pieces; larger ones are read a shared run at
/// a time, [`crate::table::Index::shared_run`]).
pub const COPY_BYTES: u64 = 4 * SECTION_VALUES;

impl<'a, T: TableValues + ?Sized> ForFiles<'a, T> {
    /// `table` as the files of index `file` read it; `path` names the file in errors.
    fn new(table: &'a T, file: &Index, path: &Path) -> Result<ForFiles<'a, T>, FormatError> {
        let size = file.size();
        let reader = InOrder::new(table, file);
        // The `.wdl` file reads both sides whole, and the `.dtz` file one side at least once
        // more: a copy pays. A `.dtw` file reads one side whole (its landing side, or the one
        // its sizing keeps), as many reads as a copy takes.
        if reader.same || 4 * size > COPY_BYTES || table.metric() == Metric::Dtw {
            return Ok(ForFiles { table, copy: None });
        }
        // Whole shared runs at a time, about 2^18 slots.
        let chunk = (reader.run * (1u64 << 18).div_ceil(reader.run)) as usize;
        let side = |side: usize| -> Result<Vec<u16>, FormatError> {
            let mut codes = vec![0u16; size as usize];
            codes.par_chunks_mut(chunk).enumerate().try_for_each_init(
                Vec::new,
                |buf, (k, dst)| {
                    let start = (k * chunk) as u64;
                    reader
                        .read(side, start..start + dst.len() as u64, buf)
                        .map_err(|e| values_err(path, e))?;
                    dst.copy_from_slice(buf);
                    Ok::<(), FormatError>(())
                },
            )?;
            Ok(codes)
        };
        let copy = [side(0)?, side(1)?];
        Ok(ForFiles {
            table,
            copy: Some((file.clone(), copy)),
        })
    }
}

impl<T: TableValues + ?Sized> TableValues for ForFiles<'_, T> {
    type Error = T::Error;

    fn index(&self) -> &Index {
        match &self.copy {
            Some((index, _)) => index,
            None => self.table.index(),
        }
    }

    fn metric(&self) -> Metric {
        self.table.metric()
    }

    fn frame(&self, side: usize, f: usize, out: &mut Vec<u16>) -> Result<(), T::Error> {
        let Some((_, codes)) = &self.copy else {
            return self.table.frame(side, f, out);
        };
        let codes = &codes[side];
        let start = (f as u64 * FRAME) as usize;
        out.clear();
        out.extend_from_slice(&codes[start..(start + FRAME as usize).min(codes.len())]);
        Ok(())
    }
}

/// Rest orders are tried on at most this many slots per side ([`choose_order`]), in
/// [`TRIAL_PIECES`] evenly spaced runs of slots.
const TRIAL_SLOTS: u64 = 1 << 19;
const TRIAL_PIECES: u64 = 16;

/// The slots of one side a rest order is tried on: all of them, or [`TRIAL_PIECES`] evenly
/// spaced runs.
fn trial_ranges(size: u64) -> Vec<Range<u64>> {
    if size <= TRIAL_SLOTS {
        return std::iter::once(0..size).collect();
    }
    let len = TRIAL_SLOTS / TRIAL_PIECES;
    (0..TRIAL_PIECES)
        .map(|k| {
            let start = (size - len) * k / (TRIAL_PIECES - 1);
            start..start + len
        })
        .collect()
}

/// The section lengths of a file holding the slots `ranges` of each of `sides` sides.
fn range_lens(sides: usize, ranges: &[Range<u64>]) -> Vec<u64> {
    let lens = ranges.iter().map(|r| r.end - r.start);
    std::iter::repeat_n(lens, sides).flatten().collect()
}

/// A side's trial ([`trial_ranges`]) must be smaller than the other's by more than one part in
/// this many (a ratio above 7/6) for [`trial_side`] to choose it without encoding both sides
/// whole. Measured on the ≤4-piece set (1 082 `.dtz` and `.dtw` files of tables larger than a
/// trial): the trial and the whole file disagreed on the smaller side at trial ratios up to
/// 1.13 (RBBvK's `.dtz`: 1.13 on the trial, 0.995 whole), never above; a margin of 1/16 chose
/// the larger side for 3 files (480 bytes more in all).
const SIDE_MARGIN: u64 = 7;

/// Slots per side up to which a `.dtw` file stores both sides to move (every table up to three
/// pieces: at most 93 744 slots a side). A left-out side costs a build one ply of search for
/// each of its slots the build looks up, and a small table is looked up by many builds, each
/// searching it again: QRNvP's DTW build searched 615 k slots of 18 three-piece tables (most of
/// each table's left-out side) beside 1.48 M of its five four-piece promotion targets. Storing
/// both sides of the 147 tables up to three pieces took their `.dtw` files from 639 k to
/// 1 431 k bytes, all `.dtw` files up to four pieces from 99.23 to 100.02 MB (1.008x). A
/// run's larger tables keep their left-out sides in side files instead ([`super::side`]).
pub const DTW_BOTH_SIDES_SLOTS: u64 = 1 << 17;

/// The zstd level at which a zstd file's two sides are sized against each other (the trial of
/// [`trial_side`], and both sides whole when it cannot tell); only the side kept is then encoded
/// at the file's level. Sized at their own level (15), the `.dtw` files of the README's command
/// took 301 CPU-s to write, against 232 sized at level 3 (0.77x; the other phases 1.03x in the
/// same comparison, machine drift); 5 of the 714 then store the other side, 306 bytes more in
/// all.
const SIZING_LEVEL: i32 = 3;

/// The side to move a one-side file stores, when trials settle it: the side whose slots of
/// [`trial_ranges`] compress (`len`) smaller by more than 1/[`SIDE_MARGIN`]; `None` when the
/// trial is the whole table or too close to call (the caller then encodes both sides whole and
/// keeps the smaller). On the ≤4-piece set the trial settles 664 of those 1 082 files (65 % of
/// their slots), each on the side the whole encodings would have kept, so the files are the
/// same bytes; encoding the side a file leaves out had taken about a sixth of a 4-piece build
/// with one pawn.
fn trial_side(
    size: u64,
    mut len: impl FnMut(usize, &[Range<u64>]) -> Result<u64, StoreError>,
) -> Result<Option<usize>, StoreError> {
    let trial = trial_ranges(size);
    if trial.len() == 1 {
        return Ok(None);
    }
    let (white, black) = (len(0, &trial)?, len(1, &trial)?);
    Ok(if white * SIDE_MARGIN < black * (SIDE_MARGIN - 1) {
        Some(0)
    } else if black * SIDE_MARGIN < white * (SIDE_MARGIN - 1) {
        Some(1)
    } else {
        None
    })
}

/// The index the files of `table` are written in: of the table's [`Index::rest_orders`] that
/// move one run of at most a section at a time ([`Index::shared_run`]), the one whose
/// win/draw/loss classes compress smallest with the `.wdl` codec on the slots of
/// [`trial_ranges`] (the table's own order on a tie, then the first). The order of the rest
/// groups decides which values stand side by side: up to 2x either way on one table.
///
/// Classes, not the metric's values, and without the 50-move rule: a table's `.wdl`, `.dtz`
/// and `.dtw` files come from two solves (DTZ and DTW) and must share one index, and the two
/// solves agree on which positions are won, drawn and lost.
fn choose_order<T: TableValues + ?Sized>(
    table: &T,
    path: &Path,
    opts: &StoreOptions,
) -> Result<Index, FormatError> {
    let own = table.index();
    let candidates: Vec<Index> = own
        .rest_orders()
        .into_iter()
        .filter(|ix| ix.shared_run(own) <= SECTION_VALUES)
        .collect();
    if candidates.len() == 1 {
        return Ok(own.clone());
    }
    let ranges = trial_ranges(own.size());
    let lens = range_lens(2, &ranges);
    let fill = Fill::suiting(&opts.wdl);
    // Every candidate's classes on every trial range, `DONT_CARE` for slots the files do not
    // store. The slots a range takes in another order lie in the shared runs that cover it,
    // the same for every candidate within the longest run: each range reads those once for
    // all of them (read a candidate at a time, a trial range of a five-piece table with one
    // pawn decompressed a whole lead configuration for each of 23 candidates: 12 % of
    // KNPvKB's WDL + DTZ build).
    const DONT_CARE: u8 = u8::MAX;
    let class = |code: u16| match stored_value(code) {
        None => DONT_CARE,
        Some(v) if v.is_win() => wdl_symbol(Wdl::Win),
        Some(v) if v.is_loss() => wdl_symbol(Wdl::Loss),
        Some(_) => wdl_symbol(Wdl::Draw),
    };
    let readers: Vec<InOrder<T>> = candidates
        .iter()
        .map(|ix| InOrder::new(table, ix))
        .collect();
    // Each candidate's runs are suffix products of the rest groups' sizes (or a whole lead
    // configuration), so the longest is a multiple of every other.
    let run = readers.iter().map(|r| r.run).max().expect("candidates");
    debug_assert!(
        readers.iter().all(|r| run % r.run == 0),
        "nested shared runs"
    );
    let mut trials: Vec<Vec<Vec<u8>>> = vec![Vec::new(); candidates.len()];
    // The runs read last (side and slots): trial ranges closer than a run share them.
    let (mut runs, mut held) = (Vec::new(), None);
    for side in 0..2 {
        for range in &ranges {
            let start = range.start / run * run;
            let end = (range.end.div_ceil(run) * run).min(own.size());
            if held != Some((side, start..end)) {
                read_range_par(table, side, start..end, &mut runs)
                    .map_err(|e| values_err(path, e))?;
                held = Some((side, start..end));
            }
            let classes: Vec<Vec<u8>> = readers
                .par_iter()
                .map_init(Vec::new, |raw, reader| {
                    let mut read = Read {
                        start,
                        codes: &runs,
                    };
                    let Ok(()) = reader.read_from(&mut read, range.clone(), raw);
                    raw.iter().map(|&c| class(c)).collect()
                })
                .collect();
            for (trial, c) in trials.iter_mut().zip(classes) {
                trial.push(c);
            }
        }
    }
    let mut best: Option<(u64, Index)> = None;
    for (ix, trial) in candidates.into_iter().zip(&trials) {
        let section = |s: usize, out: &mut Vec<u16>| -> Result<(), FormatError> {
            let classes = &trial[s];
            let symbol = |i: usize| (classes[i] != DONT_CARE).then(|| u16::from(classes[i]));
            symbols(classes.len(), fill, symbol, out);
            Ok(())
        };
        let meta = meta(own.material(), Metric::Wdl, &ix, Vec::new());
        let len = format::encode_sections(path, &meta, &lens, 1, &opts.wdl, &section)?.file_len();
        if best.as_ref().is_none_or(|(b, _)| len < *b) {
            best = Some((len, ix));
        }
    }
    Ok(best.expect("at least the table's own order").1)
}

/// The error of a table whose values could not be read while writing `path`.
fn values_err(path: &Path, e: impl std::error::Error + Send + Sync + 'static) -> FormatError {
    FormatError::Values {
        path: path.to_path_buf(),
        source: Box::new(e),
    }
}

/// Map slots `0..len` through `f` (`None` = don't care), filling don't-care slots as `fill`
/// says, into `out` (cleared first).
fn symbols(len: usize, fill: Fill, f: impl Fn(usize) -> Option<u16>, out: &mut Vec<u16>) {
    out.clear();
    out.reserve(len);
    let mut last = None;
    let mut i = 0;
    while i < len {
        if let Some(v) = f(i) {
            last = Some(v);
            out.push(v);
            i += 1;
            continue;
        }
        // A gap `i..end`, then `next` (if any).
        let end = (i..len).find(|&j| f(j).is_some()).unwrap_or(len);
        let next = (end < len).then(|| f(end)).flatten();
        let a = match fill {
            Fill::Previous => last.unwrap_or_default(),
            Fill::Rows => last.or(next).unwrap_or_default(),
        };
        let b = next.unwrap_or(a);
        let mut switched = fill == Fill::Previous || a == b;
        for j in i..end {
            if !switched && j >= ROW && out[j - ROW] != a {
                switched = true;
            }
            out.push(if switched && fill == Fill::Rows { b } else { a });
        }
        i = end;
    }
}

fn meta(material: Material, metric: Metric, index: &Index, encoding: Vec<u8>) -> TableMeta {
    TableMeta {
        material: material.to_string(),
        metric,
        index_params: index.params(),
        encoding,
    }
}

/// Write the files of a table into `dir`: `.wdl` and `.dtz` for a DTZ table (the WDL is the
/// class of its values), `.dtw` for a DTW table (and `.wdl` alone for a table solved as WDL).
///
/// Each file is built section by section ([`SECTION_VALUES`] slots) from the table's frames,
/// several sections at once on rayon's threads; the `.dtz`/`.dtw` symbol map comes from a
/// first pass over the frames. Nothing holds the whole table but `table` itself.
pub fn write_table<T: TableValues + ?Sized>(
    dir: &Path,
    table: &T,
    opts: &StoreOptions,
) -> Result<Vec<(PathBuf, WriteStats)>, StoreError> {
    let index = table.index();
    let material = index.material();
    let size = index.size();
    let per_side = sections_per_side(size);
    let section_range = |k: u64| k * SECTION_VALUES..((k + 1) * SECTION_VALUES).min(size);
    let sections: Vec<Range<u64>> = (0..per_side).map(section_range).collect();
    let mut written = Vec::new();
    let metric = table.metric();
    // A `.dtw` file takes the order of the table's `.wdl` file where there is one (written
    // before by this writer, the same order; by an older one, maybe not).
    let wdl_order = || {
        let f = format::TableFile::open(&dir.join(file_name(material, Metric::Wdl))).ok()?;
        Index::from_params(material, &f.meta().index_params)
    };
    let file_index = match (metric == Metric::Dtw).then(wdl_order).flatten() {
        Some(ix) => ix,
        None => choose_order(table, &dir.join(file_name(material, metric)), opts)?,
    };
    let copy = ForFiles::new(table, &file_index, &dir.join(file_name(material, metric)))?;
    let table = &copy;
    let reader = InOrder::new(table, &file_index);
    let index = &file_index;
    if metric != Metric::Dtw {
        let path = dir.join(file_name(material, Metric::Wdl));
        let fill = Fill::suiting(&opts.wdl);
        let section = |s: usize, out: &mut Vec<u16>| -> Result<(), FormatError> {
            let (side, k) = (s / per_side as usize, s as u64 % per_side);
            let mut raw = Vec::new();
            reader
                .read(side, section_range(k), &mut raw)
                .map_err(|e| values_err(&path, e))?;
            symbols(
                raw.len(),
                fill,
                |i| stored_value(raw[i]).map(|v| u16::from(wdl_symbol(v.wdl()))),
                out,
            );
            Ok(())
        };
        let encoded = format::encode_sections(
            &path,
            &meta(material, Metric::Wdl, index, Vec::new()),
            &range_lens(2, &sections),
            1,
            &opts.wdl,
            &section,
        )?;
        written.push((path.clone(), format::write_encoded(&path, &encoded)?));
    }
    if metric == Metric::Wdl {
        return Ok(written);
    }
    let stored = |code: u16| stored_value(code).and_then(|v| stored_distance(metric, v));
    let path = dir.join(file_name(material, metric));
    // Symbol map: distances by decreasing frequency (ties by distance), so the commonest is 0.
    let frames = size.div_ceil(FRAME) as usize;
    // Counts by distance in a flat array (a distance is a `u16`): a hash map here cost a
    // lookup per slot.
    let freq: Vec<u64> = (0..2 * frames)
        .into_par_iter()
        .try_fold(
            || (vec![0u64; 1 << 16], Vec::new()),
            |(mut counts, mut buf): (Vec<u64>, Vec<u16>), i| {
                table
                    .frame(i / frames, i % frames, &mut buf)
                    .map_err(|e| values_err(&path, e))?;
                for &c in &buf {
                    if let Some(d) = stored(c) {
                        counts[usize::from(d)] += 1;
                    }
                }
                Ok::<_, FormatError>((counts, buf))
            },
        )
        .map(|r| r.map(|(counts, _)| counts))
        .try_reduce(
            || vec![0u64; 1 << 16],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                Ok(a)
            },
        )?;
    let mut dists: Vec<(u16, u64)> = (0..=u16::MAX).zip(freq).filter(|&(_, n)| n > 0).collect();
    dists.sort_by_key(|&(d, n)| (std::cmp::Reverse(n), d));
    if dists.is_empty() {
        dists.push((0, 0));
    }
    // The symbol of each distance, by distance (only stored distances are ever looked up).
    let mut sym_of = vec![0u16; 1 << 16];
    for (i, &(d, _)) in dists.iter().enumerate() {
        sym_of[usize::from(d)] = i as u16;
    }
    let map: Vec<u8> = dists.iter().flat_map(|&(d, _)| d.to_le_bytes()).collect();
    let width = if dists.len() > 256 { 2 } else { 1 };
    let o = opts.of(metric);
    let fill = Fill::suiting(o);
    // The file holding the slots `ranges` of each side of `which`, compressed.
    let encode = |o: &WriteOptions,
                  which: &[usize],
                  ranges: &[Range<u64>]|
     -> Result<format::Encoded, StoreError> {
        let sides = which.iter().fold(0u8, |m, &s| m | 1 << s);
        let mask = if metric == Metric::Dtz {
            sides | SHORT_BY_SEARCH
        } else {
            sides
        };
        let encoding: Vec<u8> = std::iter::once(mask).chain(map.iter().copied()).collect();
        let lens = range_lens(which.len(), ranges);
        let section = |s: usize, out: &mut Vec<u16>| -> Result<(), FormatError> {
            let (side, range) = (which[s / ranges.len()], ranges[s % ranges.len()].clone());
            let mut raw = Vec::new();
            reader
                .read(side, range, &mut raw)
                .map_err(|e| values_err(&path, e))?;
            symbols(
                raw.len(),
                fill,
                |i| stored(raw[i]).map(|d| sym_of[usize::from(d)]),
                out,
            );
            Ok(())
        };
        Ok(format::encode_sections(
            &path,
            &meta(material, metric, index, encoding),
            &lens,
            width,
            o,
            &section,
        )?)
    };
    // One side. The other is one ply of search away for DTZ and DTW alike (the module doc).
    // A `.dtw` file stores the side every promotion into its table lands on, where there is
    // one (the lone side's pawns against pieces): a build with pawns reads the DTW of the
    // positions its promotions reach, and a left-out slot costs a search each (KRPvP searched
    // 1.4 M slots of the KRXvP tables' Black side). Otherwise, and always for `.dtz` files
    // (whose builds score promotions by WDL), whichever side compresses smaller (White on a
    // tie; a zstd file's sides sized at [`SIZING_LEVEL`]).
    let landing = if metric == Metric::Dtw {
        material.promotions_land_on()
    } else {
        None
    };
    // The options a zstd file's sides are sized with; a pairs file is sized by its own
    // encodings.
    let fast = match o.compression {
        Compression::Zstd => Some(WriteOptions {
            level: SIZING_LEVEL,
            ..o.clone()
        }),
        Compression::Pairs { .. } => None,
    };
    let sizing = fast.as_ref().unwrap_or(o);
    if metric == Metric::Dtw && size <= DTW_BOTH_SIDES_SLOTS {
        let encoded = encode(o, &[0, 1], &sections)?;
        let stats = format::write_encoded(&path, &encoded)?;
        written.push((path, stats));
        return Ok(written);
    }
    let chosen = match landing {
        Some(color) => Some(color.index()),
        None => trial_side(size, |side, ranges| {
            Ok(encode(sizing, &[side], ranges)?.file_len())
        })?,
    };
    let encoded = match (chosen, &fast) {
        (Some(side), _) => encode(o, &[side], &sections)?,
        // Both sides whole in the file's own encoding: keep the smaller.
        (None, None) => {
            let (white, black) = (encode(o, &[0], &sections)?, encode(o, &[1], &sections)?);
            if black.file_len() < white.file_len() {
                black
            } else {
                white
            }
        }
        (None, Some(fast)) => {
            let len =
                |side: usize| Ok::<_, StoreError>(encode(fast, &[side], &sections)?.file_len());
            let (white, black) = (len(0)?, len(1)?);
            encode(o, &[usize::from(black < white)], &sections)?
        }
    };
    let stats = format::write_encoded(&path, &encoded)?;
    written.push((path, stats));
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredTable;
    use crate::table::Table;

    /// `trial_side` with trial lengths `white` and `black` for a table of `size` slots a side,
    /// and the ranges it tried.
    fn side_of(size: u64, white: u64, black: u64) -> (Option<usize>, Vec<Range<u64>>) {
        let mut seen = Vec::new();
        let side = trial_side(size, |side, ranges| {
            seen = ranges.to_vec();
            Ok([white, black][side])
        })
        .unwrap();
        (side, seen)
    }

    /// A `.dtw` file of `material` whose White side holds `white` and Black side `black`,
    /// written in a directory named after `case`.
    fn dtw_file_of(
        material: &str,
        case: &str,
        white: &dyn Fn(u64) -> u16,
        black: &dyn Fn(u64) -> u16,
    ) -> StoredTable {
        let m = Material::parse(material).unwrap();
        let index = Index::new(m);
        let size = index.size();
        let words = size.div_ceil(64) as usize;
        let table = Table {
            index,
            metric: Metric::Dtw,
            values: [
                (0..size).map(white).collect(),
                (0..size).map(black).collect(),
            ],
            quiet: [vec![u64::MAX; words], vec![u64::MAX; words]],
        };
        let dir = std::env::temp_dir().join(format!("antitb-side-{}-{case}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write_table(&dir, &table, &StoreOptions::default()).unwrap();
        let t = StoredTable::open(
            &dir.join(file_name(m, Metric::Dtw)),
            m,
            Metric::Dtw,
            &crate::format::ReadOptions::default(),
        )
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        t
    }

    #[test]
    fn whole_sides_decode_to_the_values_written() {
        // Every class, cursed wins and blessed losses included, at scrambled distances (none a
        // short DTZ, which `.dtz` files leave to search), in every slot of KQvK.
        let m = Material::parse("KQvK").unwrap();
        let index = Index::new(m);
        let size = index.size();
        let value = |side: u64, i: u64| {
            let h = (i ^ side << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50;
            let d = 3 + (h % 190) as u16;
            match h % 3 {
                0 => Value::win(d),
                1 => Value::loss(d),
                _ => Value::DRAW,
            }
        };
        let words = size.div_ceil(64) as usize;
        let table = |metric| Table {
            index: index.clone(),
            metric,
            values: [0, 1].map(|s| (0..size).map(|i| value(s, i).code()).collect()),
            quiet: [vec![u64::MAX; words], vec![u64::MAX; words]],
        };
        let dir = std::env::temp_dir().join(format!("antitb-decode-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for metric in [Metric::Dtz, Metric::Dtw] {
            write_table(&dir, &table(metric), &StoreOptions::default()).unwrap();
        }
        let open = |metric| {
            let path = dir.join(file_name(m, metric));
            StoredTable::open(&path, m, metric, &format::ReadOptions::default()).unwrap()
        };
        let (wdl, dtz, dtw) = (open(Metric::Wdl), open(Metric::Dtz), open(Metric::Dtw));
        std::fs::remove_dir_all(&dir).unwrap();
        let mut sides = 0;
        for side in 0..2 {
            let symbols = wdl.decode_wdl_symbols(side).unwrap();
            let classes: Vec<u8> = (0..size)
                .map(|i| (value(side as u64, i).wdl().to_i8() + 2) as u8)
                .collect();
            assert!(symbols == classes, "WDL of side {side}");
            let codes: Vec<u16> = (0..size).map(|i| value(side as u64, i).code()).collect();
            for t in [&dtz, &dtw].into_iter().filter(|t| t.stores_side(side)) {
                let got = t.decode_value_codes(side, &symbols).unwrap();
                assert!(got == codes, "{:?} of side {side}", t.metric);
                sides += 1;
            }
        }
        // The `.dtz` file stores one side, the `.dtw` file of a three-piece table both.
        assert_eq!(sides, 3);
    }

    #[test]
    fn trial_ranges_read_from_runs_read_before_match_the_frames() {
        // What `choose_order` reads for each rest order (every trial range from the shared runs
        // around it, read once) against reading each range's runs from the frames, on a table
        // with one pawn (runs shorter than the table, several per frame for some orders) large
        // enough for a trial of pieces.
        let m = Material::parse("KNvBP").unwrap().canonical();
        let index = Index::new(m);
        let size = index.size();
        assert!(size > TRIAL_SLOTS, "{m}: {size} slots");
        let words = size.div_ceil(64) as usize;
        let table = Table {
            index: index.clone(),
            metric: Metric::Dtz,
            values: [0u64, 1].map(|s| {
                (0..size)
                    .map(|i| (i ^ s << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) as u16 >> 3)
                    .collect()
            }),
            quiet: [vec![u64::MAX; words], vec![u64::MAX; words]],
        };
        let orders = index.rest_orders();
        assert!(orders.len() > 2, "{m}: {} orders", orders.len());
        let readers: Vec<InOrder<Table>> =
            orders.iter().map(|ix| InOrder::new(&table, ix)).collect();
        let run = readers.iter().map(|r| r.run).max().unwrap();
        assert!(
            readers.iter().any(|r| r.run < FRAME),
            "a run shorter than a frame"
        );
        let (mut runs, mut want, mut got) = (Vec::new(), Vec::new(), Vec::new());
        // Frames read in parallel from a start within a frame.
        let odd = 12_345..12_345 + 3 * FRAME + 77;
        let Ok(()) = read_range_par(&table, 1, odd.clone(), &mut runs);
        let Ok(()) = read_range(&table, 1, odd, &mut want);
        assert!(runs == want);
        for side in 0..2 {
            for range in trial_ranges(size) {
                let start = range.start / run * run;
                let end = (range.end.div_ceil(run) * run).min(size);
                let Ok(()) = read_range_par(&table, side, start..end, &mut runs);
                let Ok(()) = read_range(&table, side, start..end, &mut want);
                assert!(runs == want, "side {side}, slots {start}..{end}");
                for reader in &readers {
                    let Ok(()) = reader.read(side, range.clone(), &mut want);
                    let mut read = Read {
                        start,
                        codes: &runs,
                    };
                    let Ok(()) = reader.read_from(&mut read, range.clone(), &mut got);
                    assert!(got == want, "side {side}, {range:?}, run {}", reader.run);
                }
            }
        }
    }

    /// DTW codes in a long-period scramble of distances.
    fn scramble(i: u64) -> u16 {
        Value::win((i.wrapping_mul(0x9E37_79B9) >> 7) as u16 % 300 + 1).code()
    }

    /// One DTW code throughout.
    fn constant(_: u64) -> u16 {
        Value::win(7).code()
    }

    #[test]
    fn a_dtw_file_keeps_the_side_that_compresses_smaller() {
        // Distances in a long-period scramble against one distance throughout: whichever side
        // holds the scramble is left out.
        let t = dtw_file_of("KQRvK", "white", &constant, &scramble);
        assert!(t.stores_side(0) && !t.stores_side(1));
        let t = dtw_file_of("KQRvK", "black", &scramble, &constant);
        assert!(t.stores_side(1) && !t.stores_side(0));
    }

    #[test]
    fn a_dtw_file_of_three_pieces_keeps_both_sides() {
        let t = dtw_file_of("KQvK", "both", &constant, &scramble);
        assert!(t.index.size() <= DTW_BOTH_SIDES_SLOTS);
        assert!(t.stores_side(0) && t.stores_side(1));
        for idx in [0, 1, 4_321, t.index.size() - 1] {
            assert_eq!(t.distance(0, idx).unwrap(), 7);
            assert_eq!(
                Value::win(t.distance(1, idx).unwrap()).code(),
                scramble(idx),
                "slot {idx}"
            );
        }
    }

    #[test]
    fn a_side_is_chosen_by_trial_only_when_clearly_smaller() {
        let big = 4 * TRIAL_SLOTS;
        assert_eq!(side_of(big, 1000, 1200).0, Some(0));
        assert_eq!(side_of(big, 1200, 1000).0, Some(1));
        // Within one part in 7 either way (a ratio of at most 7/6): both sides are encoded whole.
        assert_eq!(side_of(big, 1000, 1160).0, None);
        assert_eq!(side_of(big, 1160, 1000).0, None);
        assert_eq!(side_of(big, 6000, 7000).0, None);
        assert_eq!(side_of(big, 1000, 1000).0, None);
        // The trial is TRIAL_PIECES runs of the side, TRIAL_SLOTS in all, the last at its end.
        let (_, ranges) = side_of(big, 1, 2);
        assert_eq!(ranges.len() as u64, TRIAL_PIECES);
        assert_eq!(
            ranges.iter().map(|r| r.end - r.start).sum::<u64>(),
            TRIAL_SLOTS
        );
        assert_eq!(ranges.last().unwrap().end, big);
        // A table no larger than a trial: nothing is tried.
        let (side, ranges) = side_of(TRIAL_SLOTS, 1, 1000);
        assert_eq!(side, None);
        assert!(ranges.is_empty());
    }
}
