//! Finding table files in the table directories, decoding them, and looking positions up in the
//! decoded sections.
//!
//! A [`TableSet`] locates files (the first directory holding a file wins, as for
//! [`crate::probe::Tablebase`]) and keeps decoded sections in a byte-bounded LRU cache. A
//! [`View`] is the read-only set of decoded tables one table's check needs: the table itself
//! and every table its positions can reach by captures and promotions. Everything is decoded
//! before the parallel scan starts, so lookups never block and never decode. A table too large
//! to hold with 2-byte values (six distinct pieces: 6.9·10⁹ slots a side) is held one byte a
//! slot instead ([`CompactSide`]), its `.wdl` file read section by section as the check goes.

use super::VerifyError;
use crate::format::ReadOptions;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::{Board, Color, Piece, Position, Role};
use crate::store::{StoredTable, file_name};
use crate::table::{Index, Material, Metric, SearchedSide, Value, Wdl, dtw_by_search};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Every table (canonical) with a `.wdl`, `.dtz` or `.dtw` file in one of `dirs`, ordered by
/// piece count, pawn count and name (so a table comes after the tables it depends on).
pub fn tables_in(dirs: &[PathBuf]) -> Result<Vec<Material>, VerifyError> {
    let mut found = BTreeSet::new();
    for d in dirs {
        let entries =
            std::fs::read_dir(d).map_err(|e| VerifyError::BadDirectory(d.clone(), Arc::new(e)))?;
        for e in entries.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let stem = Metric::ALL
                .iter()
                .find_map(|k| name.strip_suffix(&format!(".{}", k.extension())));
            if let Some(m) = stem.and_then(|s| Material::parse(s).ok())
                && m.is_table()
                && m.canonical().to_string() == stem.unwrap_or_default()
            {
                found.insert(m.canonical());
            }
        }
    }
    let mut v: Vec<Material> = found.into_iter().collect();
    v.sort_by_key(|m| (m.count(), m.pawns(), m.to_string()));
    Ok(v)
}

/// The decoded sections of one file: WDL or values.
pub(super) enum Decoded {
    /// The classes, and the file's index (which its table's other files must share).
    Wdl(Box<Index>, [Vec<Wdl>; 2]),
    /// Values per side to move.
    Values([Side; 2]),
}

/// The values of one side to move of a `.dtz` or `.dtw` file.
pub(super) enum Side {
    /// Values the file stores. A side a `.dtz` file leaves out reads as draws until filled in
    /// ([`ViewTable::fill_side`]), as the checked table's sides are before the check.
    Values(Vec<Value>),
    /// A side a `.dtw` file leaves out: each slot found by one ply of search the first time a
    /// lookup reaches it, and kept ([`View::lookup`]); shared by every view that reads the
    /// table, on every thread.
    Searched(SearchedSide),
    /// The checked table's values one byte a slot, filled as its files are read section by
    /// section and its left-out side is derived.
    Compact(CompactSide),
}

impl Side {
    fn len(&self) -> usize {
        match self {
            Side::Values(v) => v.len(),
            Side::Searched(s) => s.len(),
            Side::Compact(c) => c.codes.len(),
        }
    }
}

/// The byte of a [`CompactSide`] slot whose value does not fit one: a win or a loss of more
/// than 125 plies, kept in the side's list of far values.
const FAR_WIN: u8 = 254;
const FAR_LOSS: u8 = 255;

/// The values of one side to move of the checked table, one byte a slot: the value's own code
/// ([`Value::code`]) where it fits (draws, wins and losses up to 125 plies), else [`FAR_WIN`]
/// or [`FAR_LOSS`] and the value in a sorted list (a DTZ value beyond 125 plies is a cursed win
/// or blessed loss, so the class of every slot is in its byte). Slots are written from several
/// threads while others read classes, one byte each.
pub(super) struct CompactSide {
    codes: Vec<AtomicU8>,
    /// `(slot, value)` of the far slots, sorted; set once the side is complete.
    far: OnceLock<Vec<(u64, Value)>>,
}

impl CompactSide {
    /// A side of `len` slots, none written yet.
    pub fn new(len: u64) -> CompactSide {
        CompactSide {
            codes: (0..len).map(|_| AtomicU8::new(0)).collect(),
            far: OnceLock::new(),
        }
    }

    /// Write slot `idx`; a value that does not fit a byte is returned, for [`Self::finish`].
    #[inline]
    pub fn set(&self, idx: u64, v: Value) -> Option<(u64, Value)> {
        let code = v.code();
        debug_assert!(v.is_draw() || v.is_win() || v.is_loss(), "{v:?}");
        let (byte, far) = if code < u16::from(FAR_WIN) {
            (code as u8, None)
        } else if v.is_win() {
            (FAR_WIN, Some((idx, v)))
        } else {
            (FAR_LOSS, Some((idx, v)))
        };
        self.codes[idx as usize].store(byte, Relaxed);
        far
    }

    /// The side is complete: its far values, in any order.
    pub fn finish(&self, mut far: Vec<(u64, Value)>) {
        far.sort_unstable_by_key(|&(idx, _)| idx);
        self.far
            .set(far)
            .unwrap_or_else(|_| unreachable!("a side is finished once"));
    }

    /// A finished side from its bytes and its sorted far values (as [`Self::codes`] and
    /// [`Self::far`] gave them).
    pub fn from_parts(codes: Vec<AtomicU8>, far: Vec<(u64, Value)>) -> CompactSide {
        CompactSide {
            codes,
            far: OnceLock::from(far),
        }
    }

    /// The slots' bytes.
    pub fn codes(&self) -> &[AtomicU8] {
        &self.codes
    }

    /// The far values of a finished side, sorted by slot.
    pub fn far(&self) -> &[(u64, Value)] {
        self.far
            .get()
            .expect("far values are read once the side is complete")
    }

    /// The value of slot `idx` of a finished side.
    #[inline]
    pub fn get(&self, idx: usize) -> Value {
        match self.codes[idx].load(Relaxed) {
            FAR_WIN | FAR_LOSS => {
                let far = self
                    .far
                    .get()
                    .expect("values read once the side is complete");
                match far.binary_search_by_key(&(idx as u64), |&(i, _)| i) {
                    Ok(k) => far[k].1,
                    Err(_) => unreachable!("every far slot is listed"),
                }
            }
            code => Value(u16::from(code)),
        }
    }

    /// The WDL class of slot `idx` (of DTZ values), read from its byte alone: also while the
    /// side is being written, each slot holding its class from the `.wdl` file until its value
    /// replaces it.
    #[inline]
    pub fn class(&self, idx: usize) -> Wdl {
        match self.codes[idx].load(Relaxed) {
            FAR_WIN => Wdl::CursedWin,
            FAR_LOSS => Wdl::BlessedLoss,
            0 => Wdl::Draw,
            code => Value(u16::from(code)).wdl(),
        }
    }
}

impl Decoded {
    fn bytes(&self) -> usize {
        match self {
            Decoded::Wdl(_, s) => s[0].len() + s[1].len(),
            Decoded::Values(s) => 2 * (s[0].len() + s[1].len()),
        }
    }
}

/// Decode an open file. `.dtz`/`.dtw` files need the same table's decoded `.wdl` file (their
/// values take sign and class from it). A side to move that the file does not store is left as
/// draws for a `.dtz` file ([`ViewTable::fill_side`] fills the checked table's) and as a
/// [`SearchedSide`] for a `.dtw` file (searched as [`View::lookup`] reaches its slots, until
/// [`ViewTable::fill_side`] fills the checked table's).
pub(super) fn decode(table: &StoredTable, wdl: Option<&Decoded>) -> Result<Decoded, VerifyError> {
    Ok(match (table.metric, wdl) {
        (Metric::Wdl, _) => Decoded::Wdl(
            Box::new(table.index.clone()),
            [table.decode_wdl(0)?, table.decode_wdl(1)?],
        ),
        (_, Some(Decoded::Wdl(index, w))) => {
            table.check_index_of(index)?;
            let side = |s: usize| -> Result<Side, VerifyError> {
                Ok(if table.stores_side(s) {
                    Side::Values(table.decode_values(s, |i| w[s][i])?)
                } else if table.metric == Metric::Dtw {
                    Side::Searched(SearchedSide::new(w[s].iter().copied()))
                } else {
                    Side::Values(vec![Value::DRAW; table.index.size() as usize])
                })
            };
            Decoded::Values([side(0)?, side(1)?])
        }
        _ => unreachable!("values are decoded with the table's WDL"),
    })
}

struct Entry {
    data: Arc<Decoded>,
    bytes: usize,
    used: u64,
}

#[derive(Default)]
struct Cache {
    map: HashMap<(Material, Metric), Entry>,
    clock: u64,
}

/// The table directories, with a cache of decoded files.
pub(super) struct TableSet {
    dirs: Vec<PathBuf>,
    cache: Mutex<Cache>,
    cache_bytes: usize,
    /// A reader of the same directories for the tables no view decodes ([`View::lookup`]).
    far: OnceLock<Option<Arc<Tablebase>>>,
}

/// Options for opening files: no block cache (sections are decoded whole).
pub(super) const READ: ReadOptions = ReadOptions { cache_blocks: 0 };

impl TableSet {
    /// Check that every directory can be read.
    pub fn new(dirs: &[PathBuf], cache_bytes: usize) -> Result<TableSet, VerifyError> {
        for d in dirs {
            std::fs::read_dir(d).map_err(|e| VerifyError::BadDirectory(d.clone(), Arc::new(e)))?;
        }
        Ok(TableSet {
            dirs: dirs.to_vec(),
            cache: Mutex::new(Cache::default()),
            cache_bytes,
            far: OnceLock::new(),
        })
    }

    /// A prober of the same directories, opened once, that reads blocks as they are needed: for
    /// the tables a check reaches only through the one-ply search of a `.dtw` file's left-out
    /// side ([`View::lookup`]), too many to decode whole. `None` if it cannot be opened.
    pub fn far(&self) -> Option<Arc<Tablebase>> {
        self.far
            .get_or_init(|| Tablebase::open(&self.dirs).ok().map(Arc::new))
            .clone()
    }

    /// The file of `material` and `metric` in the first directory that has it.
    pub fn path(&self, material: Material, metric: Metric) -> Option<PathBuf> {
        let name = file_name(material.canonical(), metric);
        self.dirs
            .iter()
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
    }

    /// Open a file (header checked against the table it should be).
    pub fn open(&self, material: Material, metric: Metric) -> Result<StoredTable, VerifyError> {
        let material = material.canonical();
        let path = self
            .path(material, metric)
            .ok_or(VerifyError::MissingTable { material, metric })?;
        open_path(&path, material, metric)
    }

    /// The decoded sections of a file, from the cache or decoded now.
    pub fn decoded(&self, material: Material, metric: Metric) -> Result<Arc<Decoded>, VerifyError> {
        let key = (material.canonical(), metric);
        {
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            cache.clock += 1;
            let now = cache.clock;
            if let Some(e) = cache.map.get_mut(&key) {
                e.used = now;
                return Ok(e.data.clone());
            }
        }
        let table = self.open(key.0, metric)?;
        let wdl = match metric {
            Metric::Wdl => None,
            _ => Some(self.decoded(key.0, Metric::Wdl)?),
        };
        let data = Arc::new(decode(&table, wdl.as_deref())?);
        self.insert(key.0, metric, data.clone());
        Ok(data)
    }

    /// Put decoded sections into the cache.
    pub fn insert(&self, material: Material, metric: Metric, data: Arc<Decoded>) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.clock += 1;
        let used = cache.clock;
        let bytes = data.bytes();
        cache
            .map
            .insert((material.canonical(), metric), Entry { data, bytes, used });
    }

    /// Drop the least recently used entries until the cache holds at most its byte budget.
    pub fn trim(&self) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total: usize = cache.map.values().map(|e| e.bytes).sum();
        if total <= self.cache_bytes {
            return;
        }
        let mut by_age: Vec<((Material, Metric), u64, usize)> = cache
            .map
            .iter()
            .map(|(k, e)| (*k, e.used, e.bytes))
            .collect();
        by_age.sort_by_key(|&(_, used, _)| used);
        for (key, _, bytes) in by_age {
            if total <= self.cache_bytes {
                break;
            }
            cache.map.remove(&key);
            total -= bytes;
        }
    }
}

/// Open `path` as the `metric` file of `material`.
pub(super) fn open_path(
    path: &Path,
    material: Material,
    metric: Metric,
) -> Result<StoredTable, VerifyError> {
    Ok(StoredTable::open(path, material, metric, &READ)?)
}

/// Every table (canonical, `material` excluded) a position of `material` can reach by any
/// sequence of captures (one piece of either colour removed) and promotions (a pawn of either
/// colour becomes a Q, R, B, N or K). A superset of what the rules allow, computed here from
/// the piece counts alone rather than taken from [`Material::dependencies`].
pub(super) fn reachable(material: Material) -> Vec<Material> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![material.canonical()];
    while let Some(m) = stack.pop() {
        for n in one_step(m) {
            if seen.insert(n) {
                stack.push(n);
            }
        }
    }
    seen.remove(&material.canonical());
    seen.into_iter().collect()
}

/// The tables a check of `material` reads: those one capture or promotion away, and (through
/// capture chains) every smaller one it reaches. Tables as large as `material` that only
/// promotions of promotions reach are never read (PPvPP reaches over a hundred 4-piece tables;
/// decoding them all would cost gigabytes for nothing).
pub(super) fn read_by(material: Material) -> Vec<Material> {
    let near = one_step(material.canonical());
    reachable(material)
        .into_iter()
        .filter(|d| d.count() < material.count() || near.contains(d))
        .collect()
}

/// Tables (canonical) one capture (one piece of either colour removed) or one promotion (a
/// pawn of either colour becomes a Q, R, B, N or K) away from `m`, from the piece counts.
fn one_step(m: Material) -> Vec<Material> {
    let counts = |m: &Material| -> [[u8; 6]; 2] {
        Color::ALL.map(|color| Role::ALL.map(|role| m.count_of(Piece { color, role })))
    };
    let mut out = Vec::new();
    {
        let c = counts(&m);
        let mut next = Vec::new();
        for side in 0..2 {
            for role in 0..6 {
                if c[side][role] == 0 {
                    continue;
                }
                let mut r = c;
                r[side][role] -= 1;
                next.push(r);
            }
            let pawn = Role::Pawn.index();
            if c[side][pawn] > 0 {
                for promo in Role::PROMOTIONS {
                    let mut p = c;
                    p[side][pawn] -= 1;
                    p[side][promo.index()] += 1;
                    next.push(p);
                }
            }
        }
        for n in next {
            let n = Material::from_counts(n);
            if n.is_table() {
                out.push(n.canonical());
            }
        }
    }
    out
}

/// One table of a [`View`].
pub(super) struct ViewTable {
    pub material: Material,
    pub index: Index,
    wdl: Result<Arc<Decoded>, VerifyError>,
    dtz: Option<Arc<Decoded>>,
    dtw: Option<Result<Arc<Decoded>, VerifyError>>,
}

impl ViewTable {
    pub fn new(
        material: Material,
        wdl: Result<Arc<Decoded>, VerifyError>,
        dtz: Option<Arc<Decoded>>,
        dtw: Option<Result<Arc<Decoded>, VerifyError>>,
    ) -> ViewTable {
        let material = material.canonical();
        // The index of the table's files (its `.dtz` and `.dtw` files share it).
        let index = match wdl.as_deref() {
            Ok(Decoded::Wdl(index, _)) => (**index).clone(),
            _ => Index::new(material),
        };
        ViewTable {
            material,
            index,
            wdl,
            dtz,
            dtw,
        }
    }

    /// The checked table held one byte a slot: `dtz` (and `dtw`) hold [`Side::Compact`] sides,
    /// and its WDL classes are read from `dtz` ([`CompactSide::class`]).
    pub fn compact(
        material: Material,
        index: Index,
        dtz: Arc<Decoded>,
        dtw: Option<Arc<Decoded>>,
    ) -> ViewTable {
        ViewTable {
            material: material.canonical(),
            index,
            wdl: Ok(dtz.clone()),
            dtz: Some(dtz),
            dtw: dtw.map(Ok),
        }
    }

    /// The compact side of `metric` (DTZ or DTW) of a table made by [`ViewTable::compact`].
    pub fn compact_side(&self, metric: Metric, side: usize) -> &CompactSide {
        let data = match metric {
            Metric::Dtz => self.dtz.as_ref(),
            _ => self.dtw(),
        };
        match data.map(|d| &**d) {
            Some(Decoded::Values(s)) => match &s[side] {
                Side::Compact(c) => c,
                _ => unreachable!("a compact table's sides are compact"),
            },
            _ => unreachable!("a compact table has values of this metric"),
        }
    }

    /// Every compact side of a table made by [`ViewTable::compact`]: its `.dtz` sides 0 and 1,
    /// then its `.dtw` sides if it has that file (the order [`ViewTable::compact`]'s callers
    /// give them in).
    pub fn compact_sides(&self) -> Vec<&CompactSide> {
        let metrics = [Metric::Dtz, Metric::Dtw];
        let count = if self.has_dtw() { 2 } else { 1 };
        metrics[..count]
            .iter()
            .flat_map(|&metric| [0, 1].map(|side| self.compact_side(metric, side)))
            .collect()
    }

    /// Replace the `.dtz` (`metric` DTZ) or `.dtw` values of one side to move (one the file
    /// does not store, or a stored side with values told by search).
    pub fn fill_side(&mut self, metric: Metric, side: usize, values: Vec<Value>) {
        let data = match metric {
            Metric::Dtz => self.dtz.as_mut(),
            Metric::Dtw => self.dtw.as_mut().and_then(|d| d.as_mut().ok()),
            Metric::Wdl => None,
        };
        let data = data.expect("the checked table has values of this metric");
        match Arc::get_mut(data).expect("the checked table's values are not shared") {
            Decoded::Values(s) => s[side] = Side::Values(values),
            Decoded::Wdl(..) => unreachable!("DTZ and DTW values are values"),
        }
    }

    /// The checked table's decoded `.dtw` file, if it has a readable one.
    pub fn dtw(&self) -> Option<&Arc<Decoded>> {
        self.dtw.as_ref().and_then(|d| d.as_ref().ok())
    }

    /// Does this table have a `.dtw` file (readable or not)?
    pub fn has_dtw(&self) -> bool {
        self.dtw.is_some()
    }
}

/// Piece counts of a board packed 4 bits per (colour, role): a material key for lookups.
#[inline]
fn board_key(board: &Board) -> u64 {
    let mut k = 0u64;
    for color in Color::ALL {
        for role in Role::ALL {
            k = k << 4 | u64::from(board.by_piece(Piece { color, role }).count());
        }
    }
    k
}

/// [`board_key`] of a material.
fn material_key(m: &Material) -> u64 {
    let mut k = 0u64;
    for color in Color::ALL {
        for role in Role::ALL {
            k = k << 4 | u64::from(m.count_of(Piece { color, role }));
        }
    }
    k
}

/// The decoded tables one table's check reads: the table itself first, then every table it can
/// reach, with an open-addressing map from material keys (both orientations) to tables.
pub(super) struct View {
    pub tables: Vec<ViewTable>,
    /// `(key, table number, colours swapped)`; key 0 marks an empty slot.
    map: Vec<(u64, u32, bool)>,
    shift: u32,
    /// Where the DTW of a table outside the view is read ([`View::lookup`]).
    far: Option<Arc<Tablebase>>,
}

impl View {
    pub fn new(tables: Vec<ViewTable>) -> View {
        let bits = (4 * tables.len())
            .next_power_of_two()
            .max(16)
            .trailing_zeros();
        let mut view = View {
            map: vec![(0, 0, false); 1 << bits],
            shift: 64 - bits,
            tables,
            far: None,
        };
        for (i, t) in view.tables.iter().enumerate() {
            // The canonical orientation first: a symmetric material then reads its board as is.
            for (key, swapped) in [
                (material_key(&t.material), false),
                (material_key(&t.material.swapped()), true),
            ] {
                let mut slot = view.slot(key);
                while view.map[slot].0 != 0 && view.map[slot].0 != key {
                    slot = (slot + 1) & (view.map.len() - 1);
                }
                if view.map[slot].0 == 0 {
                    view.map[slot] = (key, i as u32, swapped);
                }
            }
        }
        view
    }

    /// Read the DTW of tables outside the view from `far` ([`View::lookup`]).
    pub fn with_far(mut self, far: Option<Arc<Tablebase>>) -> View {
        self.far = far;
        self
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The table of a board, and whether its colours are swapped relative to it.
    #[inline]
    fn find(&self, board: &Board) -> Option<(&ViewTable, bool)> {
        let key = board_key(board);
        let mut slot = self.slot(key);
        loop {
            let (k, t, swapped) = self.map[slot];
            if k == key {
                return Some((&self.tables[t as usize], swapped));
            }
            if k == 0 {
                return None;
            }
            slot = (slot + 1) & (self.map.len() - 1);
        }
    }

    /// The stored value of a quiet position (no capture for the side to move, no en passant) of
    /// any table of the view, read from the file of `metric`: for [`Metric::Wdl`] a
    /// representative of the class ([`Wdl::as_value`]); for [`Metric::Dtz`] the `.dtz` values
    /// of the table being checked, and for the other tables (reached through captures, where
    /// only the class matters) their `.wdl` file.
    #[inline]
    pub fn lookup(&self, pos: &Position, metric: Metric) -> Result<Value, VerifyError> {
        let own = self.tables[0].material;
        let Some((t, swapped)) = self.find(pos.board()) else {
            let m = Material::of_position(pos).canonical();
            let dependency = |error| VerifyError::Dependency {
                material: own,
                needed: m,
                error: Box::new(error),
            };
            // The one-ply search of a `.dtw` file's left-out side can go on through promotions
            // of promotions, into tables of the checked table's size that `read_by` leaves out
            // (PPvPP reaches over a hundred): their DTW is read block by block.
            if let (Metric::Dtw, Some(far)) = (metric, &self.far) {
                return far.lookup(pos, Metric::Dtw).map_err(|e| {
                    dependency(match e {
                        ProbeError::Store(e) => VerifyError::Store(Arc::new(e)),
                        ProbeError::BadDirectory(d, e) => VerifyError::BadDirectory(d, Arc::new(e)),
                        _ => VerifyError::MissingTable {
                            material: m,
                            metric,
                        },
                    })
                });
            }
            return Err(dependency(VerifyError::MissingTable {
                material: m,
                metric: Metric::Wdl,
            }));
        };
        let (side, idx) = if swapped {
            (
                (!pos.turn()).index(),
                t.index.encode_board(&pos.board().swap_colors()),
            )
        } else {
            (pos.turn().index(), t.index.encode_board(pos.board()))
        };
        match self.read(t, side, idx as usize, metric)? {
            Read::Value(v) => Ok(v),
            // A side to move the `.dtw` file leaves out, a slot not searched yet: one ply of
            // search, as a prober does, kept for the next lookup.
            Read::NotYet(found) => {
                let v = dtw_by_search(pos, &mut |p: &Position| self.lookup(p, Metric::Dtw))?;
                found.set(idx as usize, v);
                Ok(v)
            }
        }
    }

    /// The stored value of slot `idx` of section `side` of the table being checked.
    #[inline]
    pub fn stored(&self, side: usize, idx: u64, metric: Metric) -> Result<Value, VerifyError> {
        let own = &self.tables[0];
        match self.read(own, side, idx as usize, metric)? {
            Read::Value(v) => Ok(v),
            Read::NotYet(_) => match own.index.decode(side, idx) {
                Some(pos) => self.lookup(&pos, metric),
                None => Ok(Value::DRAW),
            },
        }
    }

    #[inline]
    fn read<'t>(
        &self,
        t: &'t ViewTable,
        side: usize,
        idx: usize,
        metric: Metric,
    ) -> Result<Read<'t>, VerifyError> {
        let own = self.tables[0].material;
        let dep_err = |e: &VerifyError| {
            if t.material == own {
                e.clone()
            } else {
                VerifyError::Dependency {
                    material: own,
                    needed: t.material,
                    error: Box::new(e.clone()),
                }
            }
        };
        let data = match metric {
            Metric::Wdl => t.wdl.as_ref().map_err(dep_err)?,
            // Other tables are reached through captures only, where only the class matters.
            Metric::Dtz => match &t.dtz {
                Some(d) => d,
                None => t.wdl.as_ref().map_err(dep_err)?,
            },
            Metric::Dtw => match &t.dtw {
                Some(d) => d.as_ref().map_err(dep_err)?,
                None => {
                    return Err(dep_err(&VerifyError::MissingTable {
                        material: t.material,
                        metric: Metric::Dtw,
                    }));
                }
            },
        };
        Ok(match &**data {
            Decoded::Wdl(_, s) => Read::Value(s[side][idx].as_value()),
            Decoded::Values(s) => match &s[side] {
                Side::Compact(c) if metric == Metric::Wdl => Read::Value(c.class(idx).as_value()),
                Side::Compact(c) => Read::Value(c.get(idx)),
                Side::Values(v) => Read::Value(v[idx]),
                Side::Searched(found) => match found.get(idx) {
                    Some(v) => Read::Value(v),
                    None => Read::NotYet(found),
                },
            },
        })
    }
}

/// A slot read from a decoded file: its value, or the [`SearchedSide`] of a left-out `.dtw`
/// side that has not searched it yet.
enum Read<'t> {
    Value(Value),
    NotYet(&'t SearchedSide),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::MAX_DISTANCE;

    #[test]
    fn a_compact_side_keeps_every_value_and_class() {
        let values = [
            Value::DRAW,
            Value::win(0),
            Value::win(125),
            Value::win(126),
            Value::win(101),
            Value::loss(1),
            Value::loss(125),
            Value::loss(126),
            Value::loss(300),
            Value::win(MAX_DISTANCE),
        ];
        let side = CompactSide::new(values.len() as u64);
        let far: Vec<(u64, Value)> = values
            .iter()
            .enumerate()
            .rev()
            .filter_map(|(i, &v)| side.set(i as u64, v))
            .collect();
        assert_eq!(
            far.len(),
            4,
            "W(126), L(126), L(300), W(max) do not fit a byte"
        );
        for (i, v) in values.iter().enumerate() {
            // Classes are read from the byte alone, before the far values are known.
            assert_eq!(side.class(i), v.wdl(), "{v:?}");
        }
        side.finish(far);
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(side.get(i), v);
        }
    }

    #[test]
    fn reachable_covers_the_dependency_graph() {
        for n in 2..=4 {
            for m in Material::all_with_pieces(n) {
                let r = reachable(m);
                for d in Material::closure(&[m]) {
                    assert!(d == m || r.contains(&d), "{m} reaches {d}");
                }
            }
        }
        let kpvk: Vec<String> = reachable(Material::parse("KPvK").unwrap())
            .iter()
            .map(|m| m.to_string())
            .collect();
        for d in [
            "KvK", "KvP", "KKvK", "KQvK", "KRvK", "KBvK", "KNvK", "KvQ", "KvN",
        ] {
            assert!(kpvk.contains(&d.to_string()), "{d} in {kpvk:?}");
        }
    }
}
