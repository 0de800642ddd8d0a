//! The generator's source of smaller tables during a build: stored files, read through a
//! [`Tablebase`], and whole tables decoded into memory.
//!
//! The generator looks up millions of positions in the tables it depends on, with no locality
//! a block cache could exploit well. Tables whose values take at most
//! [`DecodedTables::MAX_BYTES`] are therefore decoded once, whole, before the build
//! ([`DecodedTables::preload`]: the tables its captures and promotions reach); larger ones, and
//! the few a build reaches otherwise, are read through their files' block caches (for pairs
//! files, where each of a thread's last blocks' symbols start).
//!
//! For WDL and DTZ tables only the WDL class of a smaller table's position matters (a zeroing
//! move scores by it, [`Metric::zeroing`]), so the `.wdl` files are read and kept at half a
//! byte per slot and side, where a capture position's class is kept once resolved; a WDL/DTZ build
//! also decodes larger tables than [`DecodedTables::MAX_BYTES`] whole, those with fewer pieces
//! than the table built, up to [`DecodedTables::WDL_BYTES`] (from six pieces, the five-piece
//! tables its captures reach: read through their files, each lookup decoded part of a block,
//! and each capture position was searched again each time a capture reached it; KKKKvKQ built
//! in 0.73x the CPU time). A DTW table reads `.dtw` files ([`Metric::zeroing_file`]), kept as
//! 2-byte value codes. The side to move a `.dtw` file leaves out is found by one ply of search,
//! slot by slot as lookups reach it, and kept: in the decoded table, or, for a table read
//! through its files, in a sparse map ([`DecodedTables::SEARCHED_SLOTS`] slots in all). That
//! search's own lookups go through the same source, so that a promotion into another table's
//! left-out side finds what was decoded or searched before, instead of searching again through
//! the files.
//! The search reads a class for every move first: for a table read through its files, a DTW
//! build decodes its `.wdl` file's classes whole, 2 bits a slot, on first use
//! ([`DecodedTables::OUTCOME_BYTES`] in all).
//! A WDL/DTZ build likewise decodes each side of a table read through its files that a lookup
//! reaches, half a byte a slot, while [`DecodedTables::side_budget`] allows: the side a
//! table's promotions land on in the tables as large as it (a five-piece table with one pawn
//! reads its five promotion targets on one side each).

use crate::r#gen::TableSource;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::Position;
use crate::store::{StoredTable, side, value_of_distance};
use crate::table::{
    Index, Material, MaterialHasher, Metric, SearchedSide, Value, Wdl, dtw_of_left_out,
    keep_capture, kept_capture, resolve, resolve_with, searches_captures,
};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// One decoded table.
struct Decoded {
    index: Index,
    sides: Sides,
}

/// A decoded table's values per side.
enum Sides {
    /// A `.wdl` file's classes, a [`WdlCell`] (half a byte) a slot.
    Wdl([WdlCells; 2]),
    /// DTW per side, from a `.dtw` file and its `.wdl` file.
    Dtw([DtwSide; 2]),
}

/// A slot of a decoded `.wdl` side, 4 bits: the class of a quiet position, as [`Wdl::to_i8`] + 2
/// (3 bits); or, for a position whose side to move can capture (which the file does not store),
/// its class with captures resolved ([`TableSource::capture_value`]) and [`WdlCell::RESOLVED`]
/// once found, nothing meaningful before.
struct WdlCell;

impl WdlCell {
    const RESOLVED: u8 = 0x8;
    /// The class of each byte (less the mark) as the value that stands for it.
    const VALUES: [Value; 5] = [
        Wdl::Loss.as_value(),
        Wdl::BlessedLoss.as_value(),
        Wdl::Draw.as_value(),
        Wdl::CursedWin.as_value(),
        Wdl::Win.as_value(),
    ];

    #[inline]
    fn of(w: Wdl) -> u8 {
        (w.to_i8() + 2) as u8
    }

    #[inline]
    fn value(b: u8) -> Value {
        Self::VALUES[usize::from(b & !Self::RESOLVED)]
    }
}

/// The DTW of one side to move of a decoded table. A slot whose position can capture, which
/// the files do not store, keeps the value of the position once a capture search found it
/// ([`DecodedTables::capture_value`]), as a [`WdlCell`] keeps its class.
enum DtwSide {
    /// Value codes of a side the `.dtw` file stores.
    Stored(Vec<AtomicU16>),
    /// A side the `.dtw` file leaves out: draws from the `.wdl` file, the rest once found by
    /// one ply of search ([`DecodedTables::search_dtw`]). A build looks up few of these slots
    /// (the positions its captures and promotions reach), so searching them on demand costs far
    /// less than searching the whole side up front.
    Searched(SearchedSide),
}

/// The [`WdlCell`]s of one side of a decoded `.wdl` table, two slots a byte (the low half
/// first): half a byte a slot lets a build decode twice the tables in the same memory as one
/// byte did ([`DecodedTables::WDL_BYTES`]).
struct WdlCells(Vec<AtomicU8>);

impl WdlCells {
    /// The cells of one side of `wdl`, from its symbols (the class + 2, each a cell
    /// unresolved), decoded section by section.
    fn decode(wdl: &StoredTable, side: usize) -> Result<WdlCells, ProbeError> {
        let n = wdl.index.size() as usize;
        let mut packed = Vec::with_capacity(n.div_ceil(2));
        for k in 0..wdl.sections_per_side() {
            // Sections hold an even number of slots, but for the last.
            let part = wdl.decode_wdl_section_symbols(side, k)?;
            packed.extend(
                part.chunks(2)
                    .map(|c| AtomicU8::new(c[0] | c.get(1).map_or(0, |&h| h << 4))),
            );
        }
        debug_assert_eq!(packed.len(), n.div_ceil(2));
        Ok(WdlCells(packed))
    }

    /// Bytes held for `slots` slots.
    fn bytes(slots: u64) -> u64 {
        slots.div_ceil(2)
    }

    /// The cell of slot `idx`.
    #[inline]
    fn get(&self, idx: usize) -> u8 {
        (self.0[idx / 2].load(Ordering::Relaxed) >> (4 * (idx % 2))) & 0xf
    }

    /// Set the cell of slot `idx` to `cell`, leaving its neighbour's as it is (whichever thread
    /// sets it last, a slot's cell is a function of its position).
    #[inline]
    fn set(&self, idx: usize, cell: u8) {
        let shift = 4 * (idx % 2);
        let _ = self.0[idx / 2].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
            Some((b & !(0xf << shift)) | cell << shift)
        });
    }
}

impl Decoded {
    /// The value of slot `idx` of `side`, or `None` for a slot of a left-out DTW side that has
    /// not been searched yet.
    #[inline]
    fn value(&self, side: usize, idx: usize) -> Option<Value> {
        match &self.sides {
            Sides::Wdl(s) => Some(WdlCell::value(s[side].get(idx))),
            Sides::Dtw(s) => match &s[side] {
                DtwSide::Stored(codes) => Some(stored_at(codes, idx)),
                DtwSide::Searched(found) => found.get(idx),
            },
        }
    }
}

/// Hint that slot `idx` of `codes` will be read soon.
#[inline]
fn prefetch(codes: &[AtomicU16], idx: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p: *const AtomicU16 = &codes[idx];
        // SAFETY: a prefetch never faults and reads nothing the program sees; the pointer is in
        // bounds anyway. Measured on QRNvP (all metrics, 1 thread, one run): 12.4 and 13.2 s
        // without, 11.2 and 11.6 s with: the children of a searched slot are spread over the
        // table.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (codes, idx);
}

/// The value stored in slot `idx` of a stored `.dtw` side's codes (a quiet position's).
#[inline]
fn stored_at(codes: &[AtomicU16], idx: usize) -> Value {
    Value(codes[idx].load(Ordering::Relaxed))
}

impl DtwSide {
    /// The value kept in slot `idx` by [`DtwSide::keep_capture`], if any.
    #[inline]
    fn capture(&self, idx: usize) -> Option<Value> {
        match self {
            DtwSide::Stored(codes) => kept_capture(codes[idx].load(Ordering::Relaxed)),
            DtwSide::Searched(found) => found.capture(idx),
        }
    }

    /// Keep `value`, the value of the position of slot `idx`, whose side to move can capture
    /// and which has no en-passant square ([`keep_capture`]).
    #[inline]
    fn keep_capture(&self, idx: usize, value: Value) {
        match self {
            DtwSide::Stored(codes) => keep_capture(&codes[idx], value),
            DtwSide::Searched(found) => found.keep_capture(idx, value),
        }
    }
}

/// How a build reads one table.
#[derive(Clone)]
enum Source {
    /// Decoded whole.
    Decoded(Arc<Decoded>),
    /// Through its files' block caches, with the slots of a left-out `.dtw` side found so far.
    Files(Arc<Files>),
}

/// A table read through its files: the files, opened once (so that a lookup takes neither the
/// [`Tablebase`]'s lock nor a reference count, two cache lines every thread writes), and the
/// slots of a left-out `.dtw` side found so far.
struct Files {
    wdl: Arc<StoredTable>,
    /// The `.dtw` file of a table read for DTW (`None` if it cannot be opened: the
    /// [`Tablebase`] reports that where a lookup needs it).
    dtw: Option<Arc<StoredTable>>,
    searched: SearchedSlots,
    /// For a table read for DTW, its `.wdl` file's classes as outcomes, decoded whole by the
    /// first lookup that finds them missing ([`DecodedTables::outcomes`]); `None` inside when
    /// [`DecodedTables::OUTCOME_BYTES`] did not allow it or the file could not be decoded.
    outcomes: OnceLock<Option<Outcomes>>,
    /// Whether a lookup has taken on decoding [`Files::outcomes`]: the others read the file
    /// meanwhile instead of waiting (the decoder's parallel loop may run lookups of this table
    /// on the decoding thread itself).
    decoding: AtomicBool,
    /// For a table read for WDL or DTZ, each side's `.wdl` classes as [`WdlCells`], decoded
    /// whole by the first lookup of the side ([`DecodedTables::wdl_side`]); `None` inside when
    /// [`DecodedTables::side_budget`] did not allow it or the file could not be decoded.
    sides: [OnceLock<Option<WdlCells>>; 2],
    /// Whether a lookup has taken on decoding each of [`Files::sides`] (as `decoding`).
    decoding_side: [AtomicBool; 2],
}

/// Whether each slot of a table's two sides is won, drawn or lost, 2 bits a slot: what the
/// one-ply search of a left-out `.dtw` side reads most (whether a move reaches a loss, then a
/// loss's sign for its distance), which through a `.wdl` file means decoding part of a
/// compressed block each time.
struct Outcomes([Vec<u8>; 2]);

impl Outcomes {
    const LOSS: u8 = 0;
    const DRAW: u8 = 1;
    const WIN: u8 = 2;

    /// The classes of `wdl`'s two sides, decoded section by section.
    fn decode(wdl: &StoredTable) -> Result<Outcomes, ProbeError> {
        let n = wdl.index.size() as usize;
        let mut sides = [vec![0u8; n.div_ceil(4)], vec![0u8; n.div_ceil(4)]];
        for (side, packed) in sides.iter_mut().enumerate() {
            for k in 0..wdl.sections_per_side() {
                let first = wdl.section_slots(k).start as usize;
                for (i, w) in wdl.decode_wdl_section(side, k)?.into_iter().enumerate() {
                    let code = if w.is_win() {
                        Self::WIN
                    } else if w.is_loss() {
                        Self::LOSS
                    } else {
                        Self::DRAW
                    };
                    let at = first + i;
                    packed[at / 4] |= code << (2 * (at % 4));
                }
            }
        }
        Ok(Outcomes(sides))
    }

    /// Bytes held for a table of `slots` slots a side.
    fn bytes(slots: u64) -> u64 {
        2 * slots.div_ceil(4)
    }

    /// The class of slot `idx` of `side`: `Win`, `Draw` or `Loss` (a cursed win is a win, a
    /// blessed loss a loss, as DTW counts them).
    #[inline]
    fn wdl(&self, side: usize, idx: u64) -> Wdl {
        let idx = idx as usize;
        match (self.0[side][idx / 4] >> (2 * (idx % 4))) & 3 {
            Self::WIN => Wdl::Win,
            Self::LOSS => Wdl::Loss,
            _ => Wdl::Draw,
        }
    }
}

type Cache = HashMap<(Material, Metric), Source, BuildHasherDefault<MaterialHasher>>;

/// The slots of the side to move a `.dtw` file leaves out that one ply of search has found, for
/// a table read through its files: a sparse map (a build looks up a few per cent of such a
/// table's slots), in shards so that threads seldom wait for one another.
#[derive(Default)]
struct SearchedSlots {
    shards: [Mutex<HashMap<u64, Value, BuildHasherDefault<MaterialHasher>>>; Self::SHARDS],
}

impl SearchedSlots {
    const SHARDS: usize = 16;

    fn shard(&self, idx: u64) -> &Mutex<HashMap<u64, Value, BuildHasherDefault<MaterialHasher>>> {
        // Neighbouring slots fall in different shards.
        &self.shards[(idx as usize) % Self::SHARDS]
    }

    fn get(&self, idx: u64) -> Option<Value> {
        self.shard(idx)
            .lock()
            .expect("searched slots lock")
            .get(&idx)
            .copied()
    }

    fn insert(&self, idx: u64, v: Value) {
        self.shard(idx)
            .lock()
            .expect("searched slots lock")
            .insert(idx, v);
    }
}

/// A [`TableSource`] over a [`Tablebase`] that keeps small tables decoded in memory.
pub struct DecodedTables<'a> {
    tb: &'a Tablebase,
    /// Tables decoded up front ([`DecodedTables::preload`]): read without a lock, each under
    /// both colour orientations of its material (the other caches: canonical only).
    fixed: Cache,
    /// Tables not preloaded, decoded on first use while their bytes fit
    /// [`DecodedTables::FAR_BYTES`] (read through the files otherwise), and those bytes.
    far: RwLock<(Cache, u64)>,
    /// Slots of left-out `.dtw` sides searched in tables read through their files: each is kept
    /// in its table's [`SearchedSlots`] while this is below [`DecodedTables::SEARCHED_SLOTS`].
    searched: AtomicU64,
    /// Bytes of the [`Outcomes`] decoded so far, and the most they may take.
    outcome_bytes: AtomicU64,
    max_outcome_bytes: u64,
    /// Bytes of the sides of tables read through their files decoded so far for WDL/DTZ
    /// ([`Files::sides`]), and the most they may take ([`DecodedTables::side_budget`] for the
    /// table built; 0 until [`DecodedTables::preload_for`] sets it).
    sides_used: AtomicU64,
    max_side_bytes: u64,
    /// [`DecodedTables::MAX_BYTES`] and [`DecodedTables::FAR_BYTES`], or 0 for a source that
    /// reads every table through its files ([`DecodedTables::files_only`]).
    max_bytes: u64,
    far_bytes: u64,
    /// Where this run keeps the sides its `.dtw` files leave out ([`crate::store::side`]), if
    /// it does, and how many such sides were read from there instead of searched.
    dtw_sides: Option<PathBuf>,
    sides_read: AtomicU64,
}

impl<'a> DecodedTables<'a> {
    /// Tables whose decoded values (both sides) would take more bytes than this are not
    /// decoded whole. 24 MiB holds every table up to four pieces in both forms (the largest,
    /// with one pawn such as `KNPvB`, has 5.7 M slots per side: 5.7 MB of WDL classes, 23 MB
    /// of DTW codes); five-piece tables (about 10^8 slots) are read from their memory-mapped
    /// files, as a six-piece table reaches up to 30 of them.
    pub const MAX_BYTES: u64 = 24 << 20;

    /// Bytes of the tables a build decodes beyond those preloaded. A build reaches a table it
    /// did not preload only through a preloaded table's left-out DTW side, by a promotion of a
    /// promotion into a table as large as the one built (so only tables with two pawns or
    /// more). A few such tables are read often (NPvNP: decoding them took 0.78x the CPU time
    /// of reading them through their files); others are many (PPvPP reaches over a hundred:
    /// decoding them all took 2.2 GB). Those that do not fit are read through their files.
    pub const FAR_BYTES: u64 = 128 << 20;

    /// Slots of left-out `.dtw` sides of tables read through their files that a build keeps
    /// once searched (about 32 bytes each in their maps: 64 MiB). A left-out slot costs one ply
    /// of search, whose moves into other tables may reach their own left-out sides: RPPvP
    /// looks up 2.1 M slots in 54 such tables, 1.5 M of them distinct.
    pub const SEARCHED_SLOTS: u64 = 2 << 20;

    /// Bytes of the tables above [`DecodedTables::MAX_BYTES`] that a WDL/DTZ build decodes
    /// whole all the same ([`DecodedTables::wdl_decoded_whole`]): from six pieces, the
    /// five-piece tables its captures reach. Read through its file, a lookup decodes part of a
    /// compressed block, and a position whose side to move can capture is resolved by a capture
    /// search each time a capture reaches it; decoded, it is half a byte, and a resolved
    /// capture position's class is kept in its slot.
    pub const WDL_BYTES: u64 = 4 << 30;

    /// Bytes the kept searched slots take at most ([`DecodedTables::SEARCHED_SLOTS`]).
    pub const SEARCHED_BYTES: u64 = 32 * Self::SEARCHED_SLOTS;

    /// Bytes of the outcomes (won, drawn or lost, 2 bits a slot and side) a DTW build decodes
    /// from the `.wdl` files of the tables it reads through their files, first come first
    /// served. The one-ply searches of their left-out `.dtw` sides read a class for every
    /// move, then a loss's sign beside its distance: through the file each read decodes part
    /// of a compressed block (in KKKQvP's build, 30 % of the time went there). 256 MiB holds
    /// the 5 promotion targets of a five-piece table with one pawn up to 117 M slots a side
    /// (KNPvKB's: 4 of 5).
    pub const OUTCOME_BYTES: u64 = 256 << 20;

    /// The bytes of the outcomes kept for a table read through its files, of `slots` slots a
    /// side (see [`DecodedTables::OUTCOME_BYTES`]).
    pub fn outcome_bytes(slots: u64) -> u64 {
        Outcomes::bytes(slots)
    }

    /// The most bytes of sides of tables read through their files that a WDL/DTZ build of a
    /// table of `slots` slots a side decodes (half a byte a slot, a side at a time, first come
    /// first served): one byte per slot of the table built, at most
    /// [`DecodedTables::MAX_SIDE_BYTES`]. Read through its `.wdl` file, each lookup of a
    /// promotion target decodes part of a compressed block: 13.8 % of KNPvKB's WDL + DTZ build,
    /// whose five targets' landing sides take 294 MB decoded (its own 343 M slots a side);
    /// decoded, the build took 0.885x the CPU time.
    pub fn side_budget(slots: u64) -> u64 {
        slots.min(Self::MAX_SIDE_BYTES)
    }

    /// See [`DecodedTables::side_budget`]: enough for the landing sides of a five-piece table's
    /// promotion targets, a small part of a six-piece build's memory (its estimate counts it).
    pub const MAX_SIDE_BYTES: u64 = 512 << 20;

    /// The bytes of one side of a table of `slots` slots a side decoded for WDL/DTZ.
    pub fn side_bytes(slots: u64) -> u64 {
        WdlCells::bytes(slots)
    }

    /// Bytes of `slots` slots per side decoded for a generation in `metric`, or `None` when
    /// that is above [`DecodedTables::MAX_BYTES`] and the table is read from its file.
    pub fn decoded_bytes(slots: u64, metric: Metric) -> Option<u64> {
        let bytes = Self::whole_bytes(slots, metric);
        (bytes <= Self::MAX_BYTES).then_some(bytes)
    }

    /// Bytes of `slots` slots per side decoded whole for a generation in `metric`: half a
    /// byte per slot and side for WDL and DTZ (a `.wdl` file's classes, 4 bits a slot), 2 for DTW.
    pub fn whole_bytes(slots: u64, metric: Metric) -> u64 {
        if metric.zeroing_file() == Metric::Wdl {
            2 * WdlCells::bytes(slots)
        } else {
            4 * slots
        }
    }

    /// Which of the tables a WDL/DTZ solve of `built` reads (`reads`: each with its slots a
    /// side, in the order [`DecodedTables::preload_for`] is given them) it decodes whole: those
    /// within [`DecodedTables::MAX_BYTES`], and of the larger ones with fewer pieces than
    /// `built` (those its captures reach; not the tables as large as it that promotions reach,
    /// read far less often), smallest first (the earlier on a tie), as many as
    /// [`DecodedTables::WDL_BYTES`] holds. The others are read through their `.wdl` files.
    /// What the estimate counts and what a build holds.
    pub fn wdl_decoded_whole(built: Material, reads: &[(Material, u64)]) -> Vec<bool> {
        let mut whole: Vec<bool> = reads
            .iter()
            .map(|&(_, s)| Self::decoded_bytes(s, Metric::Wdl).is_some())
            .collect();
        let mut large: Vec<usize> = (0..reads.len())
            .filter(|&i| !whole[i] && reads[i].0.count() < built.count())
            .collect();
        large.sort_by_key(|&i| (reads[i].1, i));
        let mut used = 0u64;
        for i in large {
            let bytes = Self::whole_bytes(reads[i].1, Metric::Wdl);
            if used + bytes > Self::WDL_BYTES {
                break;
            }
            used += bytes;
            whole[i] = true;
        }
        whole
    }

    pub fn new(tb: &'a Tablebase) -> DecodedTables<'a> {
        DecodedTables {
            tb,
            fixed: Cache::default(),
            far: RwLock::default(),
            searched: AtomicU64::new(0),
            outcome_bytes: AtomicU64::new(0),
            max_outcome_bytes: Self::OUTCOME_BYTES,
            sides_used: AtomicU64::new(0),
            max_side_bytes: 0,
            max_bytes: Self::MAX_BYTES,
            far_bytes: Self::FAR_BYTES,
            dtw_sides: None,
            sides_read: AtomicU64::new(0),
        }
    }

    /// This source reading the left-out sides of the `.dtw` files it decodes from their side
    /// files in `dir` where it finds them ([`crate::store::side`]: written by the run that wrote
    /// those files), instead of searching their slots one by one.
    pub fn with_dtw_sides(self, dir: PathBuf) -> DecodedTables<'a> {
        DecodedTables {
            dtw_sides: Some(dir),
            ..self
        }
    }

    /// How many left-out `.dtw` sides this source has read from side files so far.
    pub fn sides_read(&self) -> u64 {
        self.sides_read.load(Ordering::Relaxed)
    }

    /// A source that decodes no table: every lookup goes through the files (and the slots of
    /// left-out `.dtw` sides searched so far), as for tables too large to decode.
    pub fn files_only(tb: &'a Tablebase) -> DecodedTables<'a> {
        DecodedTables {
            max_bytes: 0,
            far_bytes: 0,
            ..DecodedTables::new(tb)
        }
    }

    /// This source with at most `bytes` of outcomes decoded from `.wdl` files (see
    /// [`DecodedTables::OUTCOME_BYTES`]; 0: every class is read through its file).
    pub fn with_outcome_bytes(self, bytes: u64) -> DecodedTables<'a> {
        DecodedTables {
            max_outcome_bytes: bytes,
            ..self
        }
    }

    /// This source with at most `bytes` of sides of tables read through their files decoded
    /// for WDL/DTZ (see [`DecodedTables::side_budget`]; 0, as a new source: none).
    pub fn with_side_bytes(self, bytes: u64) -> DecodedTables<'a> {
        DecodedTables {
            max_side_bytes: bytes,
            ..self
        }
    }

    /// Decode `materials` now (the tables a generation in `metric` will look up), so that
    /// lookups in them take no lock: with a shared lock, two threads making millions of lookups
    /// spend much of their time handing its cache line back and forth.
    pub fn preload(&mut self, materials: &[Material], metric: Metric) -> Result<(), ProbeError> {
        self.preload_with(materials, metric, &vec![false; materials.len()])
    }

    /// [`DecodedTables::preload`] for a solve of `built`: a WDL/DTZ solve also decodes the
    /// larger tables [`DecodedTables::wdl_decoded_whole`] picks.
    pub fn preload_for(
        &mut self,
        built: Material,
        materials: &[Material],
        metric: Metric,
    ) -> Result<(), ProbeError> {
        if metric.zeroing_file() == Metric::Wdl && self.max_bytes > 0 {
            self.max_side_bytes = Self::side_budget(Index::new(built.canonical()).size());
        }
        let whole = if metric.zeroing_file() == Metric::Wdl && self.max_bytes > 0 {
            let reads = materials
                .iter()
                .map(|&m| Ok((m, self.tb.table(m.canonical(), Metric::Wdl)?.index.size())))
                .collect::<Result<Vec<_>, ProbeError>>()?;
            Self::wdl_decoded_whole(built, &reads)
        } else {
            vec![false; materials.len()]
        };
        self.preload_with(materials, metric, &whole)
    }

    /// [`DecodedTables::preload`], each table decoded whole where `whole` says so, whatever
    /// its size.
    fn preload_with(
        &mut self,
        materials: &[Material],
        metric: Metric,
        whole: &[bool],
    ) -> Result<(), ProbeError> {
        let file = metric.zeroing_file();
        for (&m, &whole) in materials.iter().zip(whole) {
            let d = self.decoded(m, file, whole)?;
            // Under both colour orientations, so that a lookup need not make its material
            // canonical.
            self.fixed.insert((m.swapped(), file), d.clone());
            self.fixed.insert((m, file), d);
        }
        Ok(())
    }

    /// The table of `m` and metric `file` decoded, or read through its files when it is too
    /// large for that (unless `whole`).
    fn decoded(&self, m: Material, file: Metric, whole: bool) -> Result<Source, ProbeError> {
        let key = (m.canonical(), file);
        let wdl: Arc<StoredTable> = self.tb.table(key.0, Metric::Wdl)?;
        let decodes = whole
            || Self::decoded_bytes(wdl.index.size(), file).is_some_and(|b| b <= self.max_bytes);
        let d = if decodes {
            let sides = if file == Metric::Wdl {
                // A `.wdl` symbol is the class + 2, a `WdlCell` unresolved.
                Sides::Wdl([WdlCells::decode(&wdl, 0)?, WdlCells::decode(&wdl, 1)?])
            } else {
                let wdls = [wdl.decode_wdl_symbols(0)?, wdl.decode_wdl_symbols(1)?];
                // Values: the class from the `.wdl` file, the distance from this one.
                let t = self.tb.table(key.0, file)?;
                let codes = |s: usize| -> Result<Option<Vec<u16>>, ProbeError> {
                    if !t.stores_side(s) {
                        let kept = self.dtw_sides.as_ref().and_then(|dir| {
                            side::read(dir, key.0, s, t.file().file_checksum(), &wdls[s])
                        });
                        if kept.is_some() {
                            self.sides_read.fetch_add(1, Ordering::Relaxed);
                        }
                        return Ok(kept);
                    }
                    Ok(Some(t.decode_value_codes(s, &wdls[s])?))
                };
                let [white, black] = [codes(0)?, codes(1)?];
                if white.is_none() && black.is_none() {
                    unreachable!("a file stores at least one side");
                }
                let side = |stored: Option<Vec<u16>>, wdl: &[u8]| match stored {
                    Some(codes) => DtwSide::Stored(codes.into_iter().map(AtomicU16::new).collect()),
                    // Draws are known from the `.wdl` file; the rest is searched when needed.
                    None => DtwSide::Searched(SearchedSide::new(
                        wdl.iter().map(|&s| WdlCell::value(s).wdl()),
                    )),
                };
                Sides::Dtw([side(white, &wdls[0]), side(black, &wdls[1])])
            };
            Source::Decoded(Arc::new(Decoded {
                index: wdl.index.clone(),
                sides,
            }))
        } else {
            self.files(wdl, m, file)
        };
        Ok(d)
    }

    /// The table of `m` (its `.wdl` file `wdl`) in metric `file`, read through its files.
    fn files(&self, wdl: Arc<StoredTable>, m: Material, file: Metric) -> Source {
        let dtw = match file {
            Metric::Dtw => self.tb.table(m, file).ok(),
            _ => None,
        };
        Source::Files(Arc::new(Files {
            wdl,
            dtw,
            searched: SearchedSlots::default(),
            outcomes: OnceLock::new(),
            decoding: AtomicBool::new(false),
            sides: [OnceLock::new(), OnceLock::new()],
            decoding_side: [AtomicBool::new(false), AtomicBool::new(false)],
        }))
    }
}

impl DecodedTables<'_> {
    /// The DTW of `pos`, slot `idx` of the side to move `side` that `d`'s `.dtw` file leaves
    /// out, by one ply of search (as [`dtw_of_left_out`] finds it): every move hands the turn
    /// to the side the file stores or leaves the table. A quiet child of this table is read
    /// from its stored slot, whose code holds its outcome as well as its distance; a child
    /// that can capture is valued whole and kept in its slot ([`Self::kept_dtw_capture`]; the
    /// next search that reaches it reads it there, elsewhere [`TableSource::capture_value`]
    /// keeps it where its table does); a child of
    /// another table is read through `self`, from a win only if its class is a loss (a read of
    /// its class first spares a search of its distance). The value is kept for the next lookup
    /// of the slot; it does not depend on which thread finds it first.
    fn search_dtw(
        &self,
        d: &Decoded,
        side: usize,
        idx: usize,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        let Sides::Dtw(sides) = &d.sides else {
            unreachable!("only a left-out DTW side is searched")
        };
        let (DtwSide::Stored(stored), DtwSide::Searched(found)) = (&sides[1 - side], &sides[side])
        else {
            unreachable!("a .dtw file stores exactly the side it does not leave out")
        };
        // From a win only the moves into the opponent's losses can be best.
        let won = !found.outcome(idx).is_loss();
        // The children first, each with its slot in this table (if it is of it), asked for
        // ahead of their reads: almost every one is a cache miss.
        let moves = pos.legal_moves();
        let mut children = Vec::with_capacity(moves.len());
        for m in moves.iter() {
            let child = pos.after(m);
            let slot = d.index.encode(&child).map(|(s, i)| {
                debug_assert_ne!(s, side, "a move hands the turn to the other side");
                prefetch(stored, i as usize);
                i as usize
            });
            children.push((child, slot));
        }
        let mut best: Option<Value> = None;
        for (child, slot) in &children {
            let v = if searches_captures(child) {
                // A value kept in the child's slot, unless the slot is not the child's own
                // (an en-passant square).
                match slot.filter(|_| child.ep_square().is_none()) {
                    Some(i) => self.kept_dtw_capture(&sides[1 - side], i, child, Metric::Dtw)?,
                    None => self.capture_value(child, Metric::Dtw)?,
                }
            } else if child.us().is_empty() || child.them().is_empty() {
                resolve(child, Metric::Dtw, &mut |p: &Position| {
                    self.stored_value(p, Metric::Dtw)
                })?
            } else if let Some(i) = *slot {
                stored_at(stored, i)
            } else if won && !self.outcome_in(child, Metric::Dtw)?.is_loss() {
                continue;
            } else {
                self.stored_value(child, Metric::Dtw)?
            };
            if won && !v.is_loss() {
                continue;
            }
            let v = v.after_move();
            best = Some(best.map_or(v, |b| b.max(v)));
        }
        // With no legal move the side to move has won.
        let v = best.unwrap_or(Value::win(0));
        found.set(idx, v);
        Ok(v)
    }

    /// The outcomes of a table read through its files for DTW, once decoded: the first lookup
    /// to ask decodes them, if [`DecodedTables::OUTCOME_BYTES`] allows; `None` until then, and
    /// for good when it does not (the lookups read the `.wdl` file).
    #[inline]
    fn outcomes<'f>(&self, files: &'f Files) -> Option<&'f Outcomes> {
        // Only a DTW build reads classes this way.
        files.dtw.as_ref()?;
        decode_within(
            &files.outcomes,
            &files.decoding,
            (&self.outcome_bytes, self.max_outcome_bytes),
            Outcomes::bytes(files.wdl.index.size()),
            || Outcomes::decode(&files.wdl).ok(),
        )
    }

    /// Side `side` of a table read through its files for WDL/DTZ, once decoded: the first
    /// lookup of the side decodes it, if [`DecodedTables::side_budget`] allows; `None` until
    /// then, and for good when it does not (the lookups read the `.wdl` file).
    #[inline]
    fn wdl_side<'f>(&self, files: &'f Files, side: usize) -> Option<&'f WdlCells> {
        if self.max_side_bytes == 0 {
            return None;
        }
        decode_within(
            &files.sides[side],
            &files.decoding_side[side],
            (&self.sides_used, self.max_side_bytes),
            WdlCells::bytes(files.wdl.index.size()),
            || WdlCells::decode(&files.wdl, side).ok(),
        )
    }

    /// The class of slot `idx` of `side` of a table read through its files: from its
    /// [`Outcomes`] where a DTW build decoded them (won, drawn or lost only), else from its
    /// side decoded for WDL/DTZ ([`DecodedTables::wdl_side`]), else from its `.wdl` file.
    #[inline]
    fn class_in_files(&self, files: &Files, side: usize, idx: u64) -> Result<Wdl, ProbeError> {
        if let Some(o) = self.outcomes(files) {
            return Ok(o.wdl(side, idx));
        }
        match self.wdl_side(files, side) {
            Some(cells) => Ok(WdlCell::value(cells.get(idx as usize)).wdl()),
            None => Ok(files.wdl.wdl(side, idx)?),
        }
    }

    /// Whether the quiet position `pos` is won, drawn or lost, as `W(1)`, `D` or `L(1)`, from
    /// its table in metric `file` (read as a build in that file reads it): a read of its
    /// class, never a search.
    fn outcome_in(&self, pos: &Position, file: Metric) -> Result<Value, ProbeError> {
        self.in_source(pos, file, |source, m| {
            let d = match source {
                Source::Decoded(d) => d,
                Source::Files(f) => {
                    let (side, idx) = f
                        .wdl
                        .index
                        .encode_as(pos, m)
                        .expect("material matches its table");
                    return Ok(self.class_in_files(f, side, idx)?.as_value().outcome());
                }
            };
            let (side, idx) = d
                .index
                .encode_as(pos, m)
                .expect("material matches its table");
            let idx = idx as usize;
            Ok(match &d.sides {
                Sides::Wdl(s) => WdlCell::value(s[side].get(idx)).outcome(),
                Sides::Dtw(s) => match &s[side] {
                    DtwSide::Stored(codes) => stored_at(codes, idx).outcome(),
                    DtwSide::Searched(found) => found.outcome(idx),
                },
            })
        })
    }

    /// `f` of how the table of `pos` in metric `file` is read (preloaded, without a lock, or
    /// [`DecodedTables::far_source`]) and of the material of `pos` (as it stands).
    #[inline]
    fn in_source<T>(
        &self,
        pos: &Position,
        file: Metric,
        f: impl FnOnce(&Source, Material) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        let m = Material::of_position(pos);
        match self.fixed.get(&(m, file)) {
            Some(source) => f(source, m),
            None => f(&self.far_source(m, file)?, m),
        }
    }

    /// The value of `pos` (of material `m`) in its decoded table `d`.
    #[inline]
    fn value_in(&self, d: &Decoded, pos: &Position, m: Material) -> Result<Value, ProbeError> {
        let (side, idx) = d
            .index
            .encode_as(pos, m)
            .expect("material matches its table");
        match d.value(side, idx as usize) {
            Some(v) => Ok(v),
            None => self.search_dtw(d, side, idx as usize, pos),
        }
    }

    /// How to read the table of `m` and metric `file`, one not preloaded: decoded, or through
    /// its files when it is too large or no longer fits [`DecodedTables::FAR_BYTES`].
    fn far_source(&self, m: Material, file: Metric) -> Result<Source, ProbeError> {
        let key = (m.canonical(), file);
        let used = {
            let far = self.far.read().expect("far lock");
            if let Some(d) = far.0.get(&key) {
                return Ok(d.clone());
            }
            far.1
        };
        let wdl = self.tb.table(key.0, Metric::Wdl)?;
        let bytes = Self::decoded_bytes(wdl.index.size(), file).unwrap_or(u64::MAX);
        let fits = used.saturating_add(bytes) <= self.far_bytes;
        let d = if fits {
            self.decoded(m, file, false)?
        } else {
            self.files(wdl.clone(), m, file)
        };
        let mut far = self.far.write().expect("far lock");
        let (cache, used) = &mut *far;
        if let Some(d) = cache.get(&key) {
            // Another thread decoded it meanwhile.
            return Ok(d.clone());
        }
        let d = match d {
            Source::Decoded(_) if used.saturating_add(bytes) <= self.far_bytes => {
                *used += bytes;
                d
            }
            Source::Decoded(_) => self.files(wdl, m, file),
            d => d,
        };
        cache.insert(key, d.clone());
        Ok(d)
    }

    /// The value of `pos` (of material `m`) in metric `file`, read through its table's files.
    /// A slot of the side a `.dtw` file leaves out is found by one ply of search whose lookups
    /// go through `self` (the decoded tables, and the slots searched so far), and kept in the
    /// table's searched slots while [`DecodedTables::SEARCHED_SLOTS`] allows.
    fn value_in_files(
        &self,
        files: &Files,
        pos: &Position,
        m: Material,
        file: Metric,
    ) -> Result<Value, ProbeError> {
        let wdl = &files.wdl;
        let (side, idx) = wdl
            .index
            .encode_as(pos, m)
            .expect("material matches its table");
        let w = if file == Metric::Dtw {
            // Only a win's or a loss's sign matters beside a distance.
            self.class_in_files(files, side, idx)?
        } else if let Some(cells) = self.wdl_side(files, side) {
            // A quiet position's class (the only kind looked up here), as the file stores it.
            return Ok(WdlCell::value(cells.get(idx as usize)));
        } else {
            wdl.wdl(side, idx)?
        };
        let t = match (file, &files.dtw) {
            (Metric::Wdl, _) => return Ok(w.as_value()),
            (Metric::Dtw, Some(t)) => t,
            // A file that cannot be read, reported as the prober reports it.
            _ => return self.tb.stored_value(pos, file),
        };
        if w == Wdl::Draw {
            return Ok(Value::DRAW);
        }
        // The `.dtw` file orders its slots as the `.wdl` file (checked when it was opened).
        if t.stores_side(side) {
            return Ok(value_of_distance(file, w, t.distance(side, idx)?));
        }
        if let Some(v) = files.searched.get(idx) {
            return Ok(v);
        }
        let v = dtw_of_left_out(
            pos,
            w,
            &mut |p: &Position| {
                Ok(resolve(p, Metric::Wdl, &mut |q| self.outcome_in(q, Metric::Dtw))?.is_loss())
            },
            &mut |p: &Position| self.stored_value(p, Metric::Dtw),
        )?;
        if self.searched.fetch_add(1, Ordering::Relaxed) < Self::SEARCHED_SLOTS {
            files.searched.insert(idx, v);
        }
        Ok(v)
    }

    /// The value in `metric` of `pos` (of material `m`), whose side to move can capture, in its
    /// table `source`: kept in its slot of a decoded table once resolved (in a `.wdl` table its
    /// class, in a `.dtw` table its value), searched otherwise. A position with an en-passant
    /// square is searched: its slot is the position without one.
    fn capture_value_from(
        &self,
        source: &Source,
        pos: &Position,
        m: Material,
        metric: Metric,
    ) -> Result<Value, ProbeError> {
        let Source::Decoded(d) = source else {
            return resolve(pos, metric, &mut |p: &Position| {
                self.stored_value(p, metric)
            });
        };
        if pos.ep_square().is_some() {
            return self.capture_search(pos, metric);
        }
        let (side, idx) = d
            .index
            .encode_as(pos, m)
            .expect("material matches its table");
        let idx = idx as usize;
        match &d.sides {
            Sides::Wdl(s) => {
                let b = s[side].get(idx);
                if b & WdlCell::RESOLVED != 0 {
                    return Ok(WdlCell::value(b));
                }
                // Only the class matters (`metric` reads `.wdl` files): it is what is kept.
                let v = self.capture_search(pos, metric)?;
                s[side].set(idx, WdlCell::of(v.wdl()) | WdlCell::RESOLVED);
                Ok(v)
            }
            Sides::Dtw(s) => self.kept_dtw_capture(&s[side], idx, pos, metric),
        }
    }

    /// The value in `metric` of `pos`, whose side to move can capture, by a capture search
    /// whose children that can capture in turn are valued by [`TableSource::capture_value`]
    /// (and so kept where their tables keep them).
    fn capture_search(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        resolve_with(
            pos,
            metric,
            &mut |p: &Position| self.stored_value(p, metric),
            &mut |p: &Position| self.capture_value(p, metric),
        )
    }

    /// The value of `pos`, slot `idx` of the decoded DTW side `dtw`, whose side to move can
    /// capture and which has no en-passant square: the value kept in its slot, or found by
    /// [`Self::capture_search`] and kept there.
    #[inline]
    fn kept_dtw_capture(
        &self,
        dtw: &DtwSide,
        idx: usize,
        pos: &Position,
        metric: Metric,
    ) -> Result<Value, ProbeError> {
        if let Some(v) = dtw.capture(idx) {
            return Ok(v);
        }
        let v = self.capture_search(pos, metric)?;
        dtw.keep_capture(idx, v);
        Ok(v)
    }

    /// The value of `pos` (of material `m`) in metric `file`, read as `source` says.
    #[inline]
    fn value_from(
        &self,
        source: &Source,
        pos: &Position,
        m: Material,
        file: Metric,
    ) -> Result<Value, ProbeError> {
        match source {
            Source::Decoded(d) => self.value_in(d, pos, m),
            Source::Files(files) => self.value_in_files(files, pos, m, file),
        }
    }
}

/// What `slot` holds once decoded: the first caller to find it empty (and `taken` unset)
/// decodes it with `decode`, if `budget` (the bytes used so far, and the most allowed) can
/// take its `bytes`; the others get `None` meanwhile instead of waiting (a decoder's parallel
/// loop may run lookups on the decoding thread itself), and for good when the budget did not
/// allow it or the decoding failed (a file that cannot be decoded is read slot by slot, which
/// reports the fault where a lookup meets it).
fn decode_within<'s, T>(
    slot: &'s OnceLock<Option<T>>,
    taken: &AtomicBool,
    (used, max): (&AtomicU64, u64),
    bytes: u64,
    decode: impl FnOnce() -> Option<T>,
) -> Option<&'s T> {
    if let Some(t) = slot.get() {
        return t.as_ref();
    }
    if taken.swap(true, Ordering::Relaxed) {
        return None;
    }
    let granted = used
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
            let total = u.saturating_add(bytes);
            (total <= max).then_some(total)
        })
        .is_ok();
    let decoded = if granted { decode() } else { None };
    if granted && decoded.is_none() {
        used.fetch_sub(bytes, Ordering::Relaxed);
    }
    slot.get_or_init(|| decoded).as_ref()
}

impl TableSource for DecodedTables<'_> {
    type Error = ProbeError;

    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        let file = metric.zeroing_file();
        self.in_source(pos, file, |source, m| self.value_from(source, pos, m, file))
    }

    fn outcome(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        self.outcome_in(pos, metric.zeroing_file())
    }

    fn capture_value(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        self.in_source(pos, metric.zeroing_file(), |source, m| {
            self.capture_value_from(source, pos, m, metric)
        })
    }
}

impl TableSource for Tablebase {
    type Error = ProbeError;

    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        self.lookup(pos, metric.zeroing_file())
    }

    fn outcome(&self, pos: &Position, _: Metric) -> Result<Value, ProbeError> {
        Ok(self.lookup(pos, Metric::Wdl)?.outcome())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Material {
        Material::parse(s).unwrap()
    }

    #[test]
    fn wdl_cells_keep_two_slots_a_byte_apart() {
        use rayon::prelude::*;
        // An odd number of slots, every symbol beside every other.
        let n: usize = 10_001;
        let cells = WdlCells((0..n.div_ceil(2)).map(|_| AtomicU8::new(0)).collect());
        let sym = |i: usize| (i * 7 % 5) as u8;
        (0..n).for_each(|i| cells.set(i, sym(i)));
        assert!((0..n).all(|i| cells.get(i) == sym(i)));
        // Resolving neighbours from several threads at once loses neither.
        (0..n).into_par_iter().for_each(|i| {
            if i % 3 != 0 {
                cells.set(i, WdlCell::of(Wdl::Loss) | WdlCell::RESOLVED);
            }
        });
        for i in 0..n {
            let want = if i % 3 != 0 {
                Wdl::Loss.as_value()
            } else {
                WdlCell::value(sym(i))
            };
            assert_eq!(WdlCell::value(cells.get(i)), want, "slot {i}");
            assert_eq!(cells.get(i) & WdlCell::RESOLVED != 0, i % 3 != 0);
        }
        assert_eq!(WdlCells::bytes(n as u64), cells.0.len() as u64);
    }

    #[test]
    fn wdl_builds_decode_smaller_tables_whole_within_the_budget() {
        // Half a byte a slot and side: `small` slots take MAX_BYTES, `third` a third of the
        // budget.
        let small = DecodedTables::MAX_BYTES;
        assert_eq!(DecodedTables::whole_bytes(small, Metric::Wdl), small);
        let third = DecodedTables::WDL_BYTES / 3 + 1;
        let reads = [
            (m("KQRvKBQ"), third),    // as large as the table built: a promotion's
            (m("KQRvBN"), third + 1), // the largest: left out once the budget is spent
            (m("KQRvK"), small),      // within MAX_BYTES: always
            (m("KQvKB"), third),      // the two smallest larger ones, in size order
            (m("QRvKB"), third),
            (m("KRRvKBN"), small + 1), // six pieces: not smaller
        ];
        let whole = DecodedTables::wdl_decoded_whole(m("KQRvKBN"), &reads);
        assert_eq!(whole, [false, false, true, true, true, false]);
        // With the budget for one large table only, the earlier of equal sizes is taken.
        let whole = DecodedTables::wdl_decoded_whole(
            m("KQRvKBN"),
            &[(m("QRvKB"), third * 2), (m("KQvKB"), third * 2)],
        );
        assert_eq!(whole, [true, false]);
        // A five-piece build reads its four-piece tables decoded (all within MAX_BYTES), its
        // five-piece promotion targets through their files.
        let five = [(m("KQvKB"), 50_000_000), (m("KQvB"), 1_000_000)];
        assert_eq!(
            DecodedTables::wdl_decoded_whole(m("KPvKB"), &five),
            [false, true]
        );
    }
}
