//! Probing stored tables: WDL, exact DTZ and DTW of any position whose tables exist, every legal
//! move ranked by the value it leads to, and optimal lines.
//!
//! A probe is a capture search plus a lookup (SPEC.md §4): if the side to move has a capture
//! (en passant included) the value is the best over the captures, recursively; otherwise the
//! position is looked up in its table. A WDL probe opens only the small `.wdl` file. A DTZ or
//! DTW lookup reads the WDL (sign and class) and the stored distance ([`crate::store`]); for
//! the side to move a `.dtz` file does not store, it makes one ply of search over the stored
//! side, which gives the same exact value (SPEC.md §2).
//!
//! A [`Tablebase`] is `Sync`: open it once and probe it from every thread (files are opened on
//! first use and memory-mapped). [`stats`] reads whole tables for `antitb stats`.

pub mod stats;

use crate::format::ReadOptions;
use crate::rules::{Move, Position};
use crate::store::{StoreError, StoredTable, file_name, value_of_distance};
use crate::table::{
    Dtw, Dtz, Material, MaterialHasher, Metric, Value, Wdl, dtw_of_left_out, resolve, short_dtz,
};
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, RwLock};

/// Why a probe failed.
#[derive(Debug)]
pub enum ProbeError {
    /// No file for this material and metric in any table directory.
    MissingTable { material: Material, metric: Metric },
    /// The position has more pieces than any table in the directories.
    TooManyPieces { pieces: u32, max: u32 },
    /// A table directory does not exist or cannot be read.
    BadDirectory(PathBuf, std::io::Error),
    /// A table file is unreadable, damaged, or not the table it is named after
    /// ([`StoreError::path`] and [`StoreError::block`] say where).
    Store(StoreError),
}

impl fmt::Display for ProbeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeError::MissingTable { material, metric } => {
                write!(
                    f,
                    "missing table {} (file {})",
                    material.canonical(),
                    file_name(*material, *metric)
                )
            }
            ProbeError::TooManyPieces { pieces, max } => {
                write!(
                    f,
                    "position has {pieces} pieces; the tables hold at most {max}"
                )
            }
            ProbeError::BadDirectory(p, e) => {
                write!(f, "cannot read table directory {}: {e}", p.display())
            }
            ProbeError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProbeError::BadDirectory(_, e) => Some(e),
            ProbeError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for ProbeError {
    fn from(e: StoreError) -> ProbeError {
        ProbeError::Store(e)
    }
}

/// The value of a position in all metrics a probe can give.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Probe {
    /// Win, draw or loss under the 50-move rule (SPEC.md §2).
    pub wdl: Wdl,
    /// Exact DTZ.
    pub dtz: Dtz,
    /// DTW, if DTW files exist.
    pub dtw: Option<Dtw>,
}

/// One legal move with the value it leads to, from the mover's view.
#[derive(Clone, Debug)]
pub struct RankedMove {
    pub mv: Move,
    /// Score of the move for the mover in DTZ terms (SPEC.md §2: zeroing moves score by WDL).
    pub dtz: Dtz,
    /// Score in DTW terms, if DTW files exist.
    pub dtw: Option<Dtw>,
}

/// How to order moves (SPEC.md §5).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum RankBy {
    /// By WDL class, then zeroing moves that keep the win, then DTZ.
    Dtz,
    /// By DTW, then as [`RankBy::Dtz`].
    Dtw,
}

impl fmt::Display for RankBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RankBy::Dtz => "dtz",
            RankBy::Dtw => "dtw",
        })
    }
}

impl FromStr for RankBy {
    type Err = crate::table::UnknownMetric;

    /// `dtz` or `dtw`.
    fn from_str(s: &str) -> Result<RankBy, Self::Err> {
        match s {
            "dtz" => Ok(RankBy::Dtz),
            "dtw" => Ok(RankBy::Dtw),
            _ => Err(crate::table::UnknownMetric(s.to_string())),
        }
    }
}

type Key = (Material, Metric);

/// A set of table directories, opened lazily per file.
pub struct Tablebase {
    dirs: Vec<PathBuf>,
    tables: RwLock<HashMap<Key, Option<Arc<StoredTable>>, BuildHasherDefault<MaterialHasher>>>,
    opts: ReadOptions,
    max_pieces: u32,
}

impl Tablebase {
    /// Open table directories (nothing is read until a probe needs it).
    pub fn open<P: AsRef<Path>>(dirs: &[P]) -> Result<Tablebase, ProbeError> {
        Tablebase::open_with(dirs, ReadOptions::default())
    }

    /// Open with reader options (e.g. a larger block cache for bulk work).
    pub fn open_with<P: AsRef<Path>>(
        dirs: &[P],
        opts: ReadOptions,
    ) -> Result<Tablebase, ProbeError> {
        let mut max_pieces = 0;
        let mut out = Vec::new();
        for d in dirs {
            let d = d.as_ref();
            let entries =
                std::fs::read_dir(d).map_err(|e| ProbeError::BadDirectory(d.to_path_buf(), e))?;
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if let Some(stem) = name
                    .strip_suffix(".wdl")
                    .or_else(|| name.strip_suffix(".dtz"))
                    && let Ok(m) = Material::parse(stem)
                {
                    max_pieces = max_pieces.max(m.count() as u32);
                }
            }
            out.push(d.to_path_buf());
        }
        Ok(Tablebase {
            dirs: out,
            tables: RwLock::new(HashMap::default()),
            opts,
            max_pieces,
        })
    }

    /// The most pieces of any table found when the directories were opened.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// The table file of `material` and `metric`, opened on first use.
    pub fn table(
        &self,
        material: Material,
        metric: Metric,
    ) -> Result<Arc<StoredTable>, ProbeError> {
        let key = (material.canonical(), metric);
        if let Some(t) = self.tables.read().expect("table cache lock").get(&key) {
            return t.clone().ok_or(ProbeError::MissingTable {
                material: key.0,
                metric,
            });
        }
        let name = file_name(key.0, metric);
        let found = match self
            .dirs
            .iter()
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
        {
            Some(path) => {
                let t = StoredTable::open(&path, key.0, metric, &self.opts)?;
                // Values are read with the classes of the `.wdl` file, which must order
                // its slots alike (a missing one is reported where it is needed).
                if metric != Metric::Wdl
                    && let Ok(wdl) = self.table(key.0, Metric::Wdl)
                {
                    t.check_index_of(&wdl.index)?;
                }
                Some(Arc::new(t))
            }
            None => None,
        };
        self.tables
            .write()
            .expect("table cache lock")
            .insert(key, found.clone());
        found.ok_or(ProbeError::MissingTable {
            material: key.0,
            metric,
        })
    }

    /// Forget which files were missing (after new tables were written); open files stay open.
    pub fn refresh(&self) {
        self.tables
            .write()
            .expect("table cache lock")
            .retain(|_, t| t.is_some());
    }

    fn check_size(&self, pos: &Position) -> Result<(), ProbeError> {
        let n = pos.piece_count();
        // One piece more than the tables is fine while captures resolve it.
        if n > self.max_pieces + 1 || (n > self.max_pieces && !pos.has_capture()) {
            return Err(ProbeError::TooManyPieces {
                pieces: n,
                max: self.max_pieces,
            });
        }
        Ok(())
    }

    /// The stored WDL of a quiet position.
    fn lookup_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        let t = self.table(Material::of_position(pos), Metric::Wdl)?;
        let (side, idx) = t.index.encode(pos).expect("material matches its table");
        Ok(t.wdl(side, idx)?)
    }

    /// The value of a quiet position read from the files of `metric`: a representative of its
    /// WDL class for [`Metric::Wdl`] ([`Wdl::as_value`]), the exact value for the others.
    pub(crate) fn lookup(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        let m = Material::of_position(pos);
        if metric == Metric::Wdl {
            return Ok(self.lookup_wdl(pos)?.as_value());
        }
        // The file of `metric` first, so that a missing one is reported even for a draw.
        let t = self.table(m, metric)?;
        let wdl = self.table(m, Metric::Wdl)?;
        let (side, idx) = t.index.encode(pos).expect("material matches its table");
        let w = wdl.wdl(side, idx)?;
        if w == Wdl::Draw {
            return Ok(Value::DRAW);
        }
        if t.stores_side(side) {
            return self.stored_decisive(&t, pos, side, idx, w);
        }
        // `.dtz` and `.dtw` files store one side; the other is one ply of search away. For DTW
        // (SPEC.md §3) every move leads to the stored side or out of the table.
        if metric == Metric::Dtw {
            return dtw_of_left_out(
                pos,
                w,
                &mut |p: &Position| Ok(self.resolve_with(p, Metric::Wdl)?.is_loss()),
                &mut |p: &Position| self.lookup(p, Metric::Dtw),
            );
        }
        // For DTZ (SPEC.md §2) every move here is quiet, and leads to the stored side or is a
        // pawn move.
        let mut best: Option<Value> = None;
        for mv in pos.legal_moves().iter() {
            let child = pos.after(mv);
            let score = if mv.is_zeroing() {
                Metric::Dtz.zeroing(self.resolve_with(&child, Metric::Wdl)?)
            } else if child.has_capture() {
                self.resolve_with(&child, Metric::Wdl)?.after_move()
            } else {
                // Same table, the stored side to move.
                let (cs, ci) = t.index.encode(&child).expect("same material");
                // From a loss inside the 50-move rule every quiet move leads to a win inside it
                // (a draw or a cursed win there would make this position better than a loss),
                // so the child's WDL need not be read.
                let cw = if w == Wdl::Loss {
                    Wdl::Win
                } else {
                    wdl.wdl(cs, ci)?
                };
                debug_assert!(w != Wdl::Loss || wdl.wdl(cs, ci).ok() == Some(Wdl::Win));
                if cw == Wdl::Draw {
                    Value::DRAW
                } else if w.is_win() && cw.is_win() {
                    // A move into a win for the opponent, from a won position: never the
                    // best move, so its distance need not be read.
                    Value::loss(1)
                } else {
                    self.stored_decisive(&t, &child, cs, ci, cw)?.after_move()
                }
            };
            best = Some(best.map_or(score, |b| b.max(score)));
        }
        // No legal move: stalemated, which wins.
        Ok(best.unwrap_or(Value::win(0)))
    }

    /// The value of a quiet decisive position (`w` its WDL, `(side, idx)` its slot) from the
    /// `.dtz`/`.dtw` file `t`: the stored distance, or a short value the `.dtz` file leaves
    /// out, found by at most two plies of search ([`short_dtz`]).
    fn stored_decisive(
        &self,
        t: &StoredTable,
        pos: &Position,
        side: usize,
        idx: u64,
        w: Wdl,
    ) -> Result<Value, ProbeError> {
        let d = t.distance(side, idx)?;
        if t.short_by_search()
            && let Some(v) = short_dtz(pos, w, d, &mut |p: &Position| self.probe_wdl(p))?
        {
            return Ok(v);
        }
        Ok(value_of_distance(t.metric, w, d))
    }

    /// [`resolve`] in `metric`, with lookups in the files of `metric`.
    fn resolve_with(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        resolve(pos, metric, &mut |p: &Position| self.lookup(p, metric))
    }

    /// WDL under the 50-move rule, from the side to move's view (only `.wdl` files are read).
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        self.check_size(pos)?;
        Ok(self.resolve_with(pos, Metric::Wdl)?.wdl())
    }

    /// Exact DTZ (`W(n)`, `D`, `L(n)`; its [`Dtz::wdl`] is the WDL).
    pub fn probe_dtz(&self, pos: &Position) -> Result<Dtz, ProbeError> {
        self.check_size(pos)?;
        // Captures are zeroing: their scores need only the WDL of what they lead to.
        let metric = if pos.has_capture() {
            Metric::Wdl
        } else {
            Metric::Dtz
        };
        Ok(Dtz(self.resolve_with(pos, metric)?))
    }

    /// DTW (the 50-move rule ignored).
    pub fn probe_dtw(&self, pos: &Position) -> Result<Dtw, ProbeError> {
        self.check_size(pos)?;
        Ok(Dtw(self.resolve_with(pos, Metric::Dtw)?))
    }

    /// WDL, DTZ and (if its files exist) DTW.
    pub fn probe(&self, pos: &Position) -> Result<Probe, ProbeError> {
        let dtz = self.probe_dtz(pos)?;
        let dtw = match self.probe_dtw(pos) {
            Ok(v) => Some(v),
            Err(ProbeError::MissingTable {
                metric: Metric::Dtw,
                ..
            }) => None,
            Err(e) => return Err(e),
        };
        Ok(Probe {
            wdl: dtz.wdl(),
            dtz,
            dtw,
        })
    }

    /// Every legal move with its score for the mover, best first (SPEC.md §5).
    pub fn rank_moves(&self, pos: &Position, by: RankBy) -> Result<Vec<RankedMove>, ProbeError> {
        let mut out = Vec::new();
        let with_dtw = by == RankBy::Dtw || self.has_dtw(pos);
        for m in pos.legal_moves().iter() {
            let child = pos.after(m);
            let c = self.probe_dtz(&child)?;
            let dtz = Dtz(if m.is_zeroing() {
                Metric::Dtz.zeroing(c.value())
            } else {
                c.value().after_move()
            });
            let dtw = if with_dtw {
                Some(Dtw(self.probe_dtw(&child)?.value().after_move()))
            } else {
                None
            };
            out.push(RankedMove { mv: *m, dtz, dtw });
        }
        match by {
            RankBy::Dtz => out.sort_by_key(|r| std::cmp::Reverse(dtz_key(r))),
            RankBy::Dtw => out.sort_by_key(|r| {
                std::cmp::Reverse((r.dtw.map_or(i32::MIN, |v| v.value().rank()), dtz_key(r)))
            }),
        }
        Ok(out)
    }

    fn has_dtw(&self, pos: &Position) -> bool {
        self.table(Material::of_position(pos), Metric::Dtw).is_ok()
    }

    /// An optimal line from `pos` to the end of the game (or `max_plies`), best moves only.
    pub fn best_line(
        &self,
        pos: &Position,
        by: RankBy,
        max_plies: usize,
    ) -> Result<Vec<Move>, ProbeError> {
        let mut line = Vec::new();
        let mut cur = *pos;
        while line.len() < max_plies {
            if cur.us().is_empty() {
                break;
            }
            let moves = self.rank_moves(&cur, by)?;
            let Some(best) = moves.first() else { break };
            if best.dtz.value().is_draw() && by == RankBy::Dtz {
                break;
            }
            line.push(best.mv);
            cur.play(&best.mv);
        }
        Ok(line)
    }
}

/// Sort key of SPEC.md §5 for DTZ ranking: class, then zeroing moves that keep the win, then
/// the shorter win / the longer loss.
fn dtz_key(r: &RankedMove) -> (Wdl, bool, i32) {
    let v = r.dtz.value();
    (v.wdl(), v.is_win() && r.mv.is_zeroing(), v.rank())
}
