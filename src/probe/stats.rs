//! Statistics of a stored table: per side to move, how many positions are won, cursed wins,
//! drawn, blessed losses and lost, the DTZ and DTW histograms, and the longest win and loss with
//! an example position. Everything is read from the table's files; nothing is generated.
//!
//! The counts are over *stored* positions: valid slots of the index (positions up to the
//! table's symmetry) whose side to move has no capture. Positions where the side to move must
//! capture are not stored (a probe resolves them by a capture search, SPEC.md §4); their number
//! is given, and with [`StatsOptions::resolve_captures`] their WDL too, by that same search into
//! the smaller tables. The `.dtz` file stores one side to move; the DTZ of the other comes from
//! the same one-ply search a probe makes, which reads the tables this one depends on (from the
//! directory and [`StatsOptions::extra_dirs`]).

use super::{ProbeError, Tablebase};
use crate::format::ReadOptions;
use crate::rules::Position;
use crate::store::{StoreError, StoredTable, file_name};
use crate::table::{Index, Material, Metric, Value, Wdl, short_dtz};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why statistics could not be computed.
#[derive(Debug)]
pub enum StatsError {
    /// A file the statistics need is not in the directory.
    Missing(PathBuf),
    Store(StoreError),
    /// The `.wdl` and `.dtz` files disagree on a stored position.
    Inconsistent {
        material: Material,
        fen: String,
        wdl: Wdl,
        dtz: Value,
    },
    /// Resolving a capture position needed a smaller table that failed.
    Probe(ProbeError),
}

impl fmt::Display for StatsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatsError::Missing(p) => write!(
                f,
                "missing table file {} (stats reads stored tables; run generate first)",
                p.display()
            ),
            StatsError::Store(e) => write!(f, "{e}"),
            StatsError::Inconsistent {
                material,
                fen,
                wdl,
                dtz,
            } => {
                write!(
                    f,
                    "{material}: the .wdl file says {} but the .dtz file says {dtz:?} for {fen}",
                    wdl.to_i8()
                )
            }
            StatsError::Probe(e) => write!(f, "resolving captures: {e}"),
        }
    }
}

impl std::error::Error for StatsError {}

impl From<StoreError> for StatsError {
    fn from(e: StoreError) -> StatsError {
        StatsError::Store(e)
    }
}

/// What to compute.
#[derive(Clone, Debug, Default)]
pub struct StatsOptions {
    /// Also value every capture position by a capture search into the smaller tables (which
    /// must then be in `dir` or `extra_dirs`), giving WDL counts over all valid positions.
    pub resolve_captures: bool,
    /// More directories with the smaller tables (for `resolve_captures`).
    pub extra_dirs: Vec<PathBuf>,
}

/// The longest win or loss of one side to move: its distance and the first position (lowest
/// index) that has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Longest {
    pub plies: u16,
    pub fen: String,
    idx: u64,
}

/// Counts over the values of one metric.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    /// `W(n)` counts by `n`.
    pub wins: BTreeMap<u16, u64>,
    /// `L(n)` counts by `n`.
    pub losses: BTreeMap<u16, u64>,
    pub draws: u64,
    pub longest_win: Option<Longest>,
    pub longest_loss: Option<Longest>,
}

impl Histogram {
    /// Number of positions counted.
    pub fn total(&self) -> u64 {
        self.wins.values().sum::<u64>() + self.losses.values().sum::<u64>() + self.draws
    }

    fn add(&mut self, v: Value, idx: u64) {
        let n = v.distance();
        let better = |l: &Option<Longest>| {
            l.as_ref()
                .is_none_or(|l| n > l.plies || (n == l.plies && idx < l.idx))
        };
        if v.is_win() {
            *self.wins.entry(n).or_default() += 1;
            if better(&self.longest_win) {
                self.longest_win = Some(Longest {
                    plies: n,
                    fen: String::new(),
                    idx,
                });
            }
        } else if v.is_loss() {
            *self.losses.entry(n).or_default() += 1;
            if better(&self.longest_loss) {
                self.longest_loss = Some(Longest {
                    plies: n,
                    fen: String::new(),
                    idx,
                });
            }
        } else {
            self.draws += 1;
        }
    }

    fn merge(mut self, o: Histogram) -> Histogram {
        for (n, c) in o.wins {
            *self.wins.entry(n).or_default() += c;
        }
        for (n, c) in o.losses {
            *self.losses.entry(n).or_default() += c;
        }
        self.draws += o.draws;
        let pick = |a: Option<Longest>, b: Option<Longest>| match (a, b) {
            (Some(a), Some(b)) => Some(
                if (b.plies, std::cmp::Reverse(b.idx)) > (a.plies, std::cmp::Reverse(a.idx)) {
                    b
                } else {
                    a
                },
            ),
            (a, b) => a.or(b),
        };
        self.longest_win = pick(self.longest_win, o.longest_win);
        self.longest_loss = pick(self.longest_loss, o.longest_loss);
        self
    }

    fn fill_fens(&mut self, index: &Index, side: usize) {
        for l in [&mut self.longest_win, &mut self.longest_loss]
            .into_iter()
            .flatten()
        {
            l.fen = index
                .decode(side, l.idx)
                .map(|p| p.to_string())
                .unwrap_or_default();
        }
    }
}

/// WDL classes in the order loss, blessed loss, draw, cursed win, win ([`Wdl::index`]).
pub const WDL_NAMES: [&str; 5] = ["loss", "blessed_loss", "draw", "cursed_win", "win"];

/// Statistics of one side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideStats {
    /// Stored (valid, quiet) positions.
    pub stored: u64,
    /// Valid positions whose side to move has a capture (not stored).
    pub captures: u64,
    /// Stored positions by [`Wdl::index`] (see [`WDL_NAMES`]).
    pub wdl: [u64; 5],
    /// Capture positions by [`Wdl::index`], if resolved.
    pub capture_wdl: Option<[u64; 5]>,
    pub dtz: Histogram,
    pub dtw: Option<Histogram>,
}

/// Statistics of a table.
#[derive(Clone, Debug)]
pub struct TableStats {
    pub material: Material,
    /// Slots per side to move (valid or not).
    pub slots: u64,
    /// Files read.
    pub files: Vec<PathBuf>,
    /// `sides[0]`: White to move (canonical orientation), `sides[1]`: Black.
    pub sides: [SideStats; 2],
}

fn open(dir: &Path, m: Material, metric: Metric) -> Result<StoredTable, StatsError> {
    let path = dir.join(file_name(m, metric));
    if !path.is_file() {
        return Err(StatsError::Missing(path));
    }
    Ok(StoredTable::open(
        &path,
        m,
        metric,
        &ReadOptions { cache_blocks: 0 },
    )?)
}

/// Compute the statistics of `material` from the files in `dir` (`.wdl` and `.dtz` needed,
/// `.dtw` used when present).
pub fn table_stats(
    dir: &Path,
    material: Material,
    opts: &StatsOptions,
) -> Result<TableStats, StatsError> {
    let m = material.canonical();
    let wdl = open(dir, m, Metric::Wdl)?;
    let dtz = open(dir, m, Metric::Dtz)?;
    let dtw = if dir.join(file_name(m, Metric::Dtw)).is_file() {
        Some(open(dir, m, Metric::Dtw)?)
    } else {
        None
    };
    let mut files = vec![wdl.path().to_path_buf(), dtz.path().to_path_buf()];
    files.extend(dtw.as_ref().map(|t| t.path().to_path_buf()));
    // The prober: for capture positions (with `resolve_captures`) and for the side to move the
    // `.dtz` or `.dtw` file does not store, whose value is one ply of search away.
    let dirs: Vec<PathBuf> = std::iter::once(dir.to_path_buf())
        .chain(opts.extra_dirs.iter().cloned())
        .collect();
    let tb = Tablebase::open_with(&dirs, ReadOptions { cache_blocks: 1024 })
        .map_err(StatsError::Probe)?;
    dtz.check_index_of(&wdl.index)?;
    if let Some(t) = &dtw {
        t.check_index_of(&wdl.index)?;
    }
    let index = &wdl.index;
    let n = index.size();
    let mut sides: [SideStats; 2] = Default::default();
    for (side, out) in sides.iter_mut().enumerate() {
        let w = wdl.decode_wdl(side)?;
        let wdl_at = |i: usize| w[i];
        let z = if dtz.stores_side(side) {
            Some(dtz.decode_values(side, wdl_at)?)
        } else {
            None
        };
        // `Some(None)`: a side the `.dtw` file does not store, probed by one ply of search.
        let d = match &dtw {
            Some(t) if t.stores_side(side) => Some(Some(t.decode_values(side, wdl_at)?)),
            Some(_) => Some(None),
            None => None,
        };
        const CHUNK: u64 = 1 << 14;
        let chunks: Vec<u64> = (0..n.div_ceil(CHUNK)).collect();
        let part = |c: &u64| -> Result<SideStats, StatsError> {
            let mut s = SideStats {
                dtw: d.as_ref().map(|_| Histogram::default()),
                ..SideStats::default()
            };
            if opts.resolve_captures {
                s.capture_wdl = Some([0; 5]);
            }
            for idx in c * CHUNK..((c + 1) * CHUNK).min(n) {
                let Some(pos) = index.decode(side, idx) else {
                    continue;
                };
                if pos.has_capture() {
                    s.captures += 1;
                    if let Some(cw) = &mut s.capture_wdl {
                        let v = tb.probe_wdl(&pos).map_err(StatsError::Probe)?;
                        cw[v.index()] += 1;
                    }
                    continue;
                }
                s.stored += 1;
                let i = idx as usize;
                let wdl_v = w[i];
                let dtz_v = match &z {
                    // A short value the file leaves out reads as any distance: search tells.
                    Some(z) if dtz.short_by_search() => {
                        short_dtz(&pos, wdl_v, z[i].distance(), &mut |p: &Position| {
                            tb.probe_wdl(p)
                        })
                        .map_err(StatsError::Probe)?
                        .unwrap_or(z[i])
                    }
                    Some(z) => z[i],
                    None if wdl_v == Wdl::Draw => Value::DRAW,
                    None => tb.probe_dtz(&pos).map_err(StatsError::Probe)?.value(),
                };
                if dtz_v.wdl() != wdl_v {
                    return Err(StatsError::Inconsistent {
                        material: m,
                        fen: pos.to_string(),
                        wdl: wdl_v,
                        dtz: dtz_v,
                    });
                }
                s.wdl[wdl_v.index()] += 1;
                s.dtz.add(dtz_v, idx);
                if let (Some(d), Some(h)) = (&d, &mut s.dtw) {
                    let v = match d {
                        Some(d) => d[i],
                        None if wdl_v == Wdl::Draw => Value::DRAW,
                        None => tb.probe_dtw(&pos).map_err(StatsError::Probe)?.value(),
                    };
                    h.add(v, idx);
                }
            }
            Ok(s)
        };
        let merged = chunks
            .par_iter()
            .map(part)
            .try_reduce(SideStats::default, |a, b| Ok(merge(a, b)))?;
        *out = merged;
        out.dtz.fill_fens(index, side);
        if let Some(h) = &mut out.dtw {
            h.fill_fens(index, side);
        }
    }
    Ok(TableStats {
        material: m,
        slots: n,
        files,
        sides,
    })
}

fn merge(a: SideStats, b: SideStats) -> SideStats {
    let add5 = |x: [u64; 5], y: [u64; 5]| std::array::from_fn(|i| x[i] + y[i]);
    SideStats {
        stored: a.stored + b.stored,
        captures: a.captures + b.captures,
        wdl: add5(a.wdl, b.wdl),
        capture_wdl: match (a.capture_wdl, b.capture_wdl) {
            (Some(x), Some(y)) => Some(add5(x, y)),
            (x, y) => x.or(y),
        },
        dtz: a.dtz.merge(b.dtz),
        dtw: match (a.dtw, b.dtw) {
            (Some(x), Some(y)) => Some(x.merge(y)),
            (x, y) => x.or(y),
        },
    }
}
