//! Estimates of one table's build, made before it starts: peak memory, bytes of files, and
//! work (slot visits). The build refuses what would not fit; `antitb plan` exports them.

use super::metrics;
use super::source::DecodedTables;
use crate::format::SPILL_BYTES;
use crate::format::pairs::encoder_table_bytes;
use crate::r#gen::{IN_MEMORY_SLOTS, LIST_FLOOR, UNIT_SLOTS, WdlHint, largest_unit, list_caps};
use crate::rules::MoveList;
use crate::store::{COPY_BYTES, DTW_VALUES_PER_BLOCK, SECTION_VALUES};
use crate::table::{FRAME, Index, Material, Metric};
use std::collections::{HashMap, HashSet};

/// The resources one table's build needs, estimated before it starts.
///
/// With `n` = slots per side to move ([`Index::size`]), for each metric built (one after the
/// other, so the peak is that of one metric):
///
/// * the solver ([`crate::gen`]) holds, for the largest unit it solves of `u` slots per side
///   ([`largest_unit`]: the whole table without pawns; with pawns the largest batch of pawn
///   configurations of equal advancement, a sixth of KNPvKB), a state byte and a quiet bit
///   per slot and side and frontier lists of at most a quarter byte: `2u × (1 + 1/8 + 1/4)`
///   = `2.75 u` bytes (the lists of a unit below 2^26 slots may take up to 32 MiB,
///   [`LIST_FLOOR`], of which [`FLOOR_LISTS_SHARE`] is counted); plus, with pawns, the frames
///   of the exact store that configurations smaller than a frame leave filling (at worst
///   all, 2 bytes per slot and side); plus the exact values solved so far, 2 bytes per slot
///   and side in memory for tables up to [`IN_MEMORY_SLOTS`] slots per side, compressed in a
///   scratch file beyond (without pawns they fill the store after the lists are spent: the
///   larger of the two counts); plus the window shifts' spills of the unit's exact values
///   ([`SPILLS`] of 2 bytes a slot and side, in memory for a unit up to
///   [`IN_MEMORY_SLOTS`]); a DTW solve also holds the WDL classes of the table
///   ([`WdlHint`]), 2 bits per slot and side;
/// * the writer then streams the files section by section ([`SECTION_VALUES`] slots), two
///   sections at a time: [`WRITER_BYTES_PER_SECTION_SLOT`] per slot of a section and one
///   pairs encoder's table (at [`ENCODER_TABLE_SHARE`] of its bound), the values of one
///   shared run each where the file orders the rest groups unlike the solver
///   ([`Index::shared_run`]: 2 bytes a slot of at most a lead configuration), and the
///   compressed data of the two encodings a one-side file may compare (at
///   [`WRITER_IMAGE_BYTES_PER_SLOT`], [`SPILL_BYTES`] each at most, the rest waits in a spool
///   file on disk) with their headers (a 64th of the data), beside the exact values and, for
///   a table that may be written in another order and whose codes fit [`COPY_BYTES`], a copy
///   of them in that order (4 bytes a slot);
/// * the source of smaller tables ([`DecodedTables`]) holds every table the solver reads
///   decoded, half a byte per slot and side for WDL and DTZ, 2 for DTW; tables above
///   [`DecodedTables::MAX_BYTES`] are read through their files instead (a WDL/DTZ build still
///   decodes those with fewer pieces than its table, smallest first, up to
///   [`DecodedTables::WDL_BYTES`]: [`DecodedTables::wdl_decoded_whole`]): a WDL/DTZ build reads
///   `.wdl` files, and decodes the sides of them its lookups reach, half a byte a slot, up to
///   [`DecodedTables::side_budget`]; the files cache no blocks (their mapped pages, at most
///   [`MAPPED_WDL_BYTES_PER_SLOT`], and where some blocks' symbols start: a few MB a thread,
///   [`crate::format::pairs::CACHED_BLOCKS`]), a DTW build `.dtw` files through block caches
///   ([`SOURCE_CACHE_BLOCKS`] blocks of 2-byte values, of the one side a `.dtw` file
///   stores); a source lives for one metric's solve, so the larger of the metrics' counts,
///   and is released before the writer starts; a DTW build also decodes tables as large as
///   this one that promotions of promotions reach ([`DecodedTables::FAR_BYTES`] at most),
///   and keeps the slots it searches of the left-out `.dtw` sides of tables read through
///   their files, at most one per slot of this table ([`DecodedTables::SEARCHED_BYTES`] at
///   most), and the classes, 2 bits a slot and side, of those tables and of the far tables
///   it reads through their files beyond [`DecodedTables::FAR_BYTES`] (their share of the
///   far bytes above it), [`DecodedTables::OUTCOME_BYTES`] at most;
/// * a fixed [`BASE_MEMORY`] for the program and thread stacks.
///
/// Files: [`DISK_BYTES_PER_SLOT`] bytes per slot and side and file, about twice the largest
/// ratio seen in the ≤4-piece set.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub material: Material,
    /// Slots per side to move.
    pub slots: u64,
    /// Estimated peak memory of the process while building this table, in bytes:
    /// `max(solver + sources, writer) +` [`BASE_MEMORY`].
    pub memory: u64,
    /// Its parts: the solver's and the writer's peaks (the larger over the metrics built), and
    /// the smaller tables read, decoded or mapped, which the solver holds (the writer does
    /// not: they are released before it starts).
    pub solver: u64,
    pub writer: u64,
    pub sources: u64,
    /// Upper estimate of the bytes of the table's files.
    pub disk: u64,
    /// Slot visits (2 sides × slots × metrics): the unit of progress and time estimates.
    pub work: u64,
    /// From 6 pieces, the mean number of moves (captures and promotions) a slot has into
    /// tables a WDL/DTZ build reads through their files ([`files_moves_per_slot`]); 0 below.
    pub files_moves: f64,
    /// The same into every table whose `.wdl` file is above [`DecodedTables::MAX_BYTES`]
    /// decoded, as a WDL/DTZ build read them before it decoded the smaller ones
    /// ([`DecodedTables::WDL_BYTES`]): what [`DTW_COST`] was calibrated with (a DTW build
    /// decodes none of them whole).
    pub dtw_files_moves: f64,
}

impl Estimate {
    /// Estimated single-core CPU seconds of the build: [`NS_PER_SLOT_VISIT`] per slot and side
    /// for WDL+DTZ and [`DTW_COST`] of that again for DTW (up to 4 pieces
    /// [`NS_PER_SLOT_VISIT_UP_TO_4`] per slot visit of [`Estimate::work`]).
    pub fn cpu_seconds(&self) -> f64 {
        // Work counts each metric solved: more than both sides once means DTW too.
        let dtw = self.work > 2 * self.slots;
        cpu_seconds(
            self.material,
            self.slots,
            dtw,
            self.files_moves,
            self.dtw_files_moves,
        )
    }
}

/// Window shifts counted in one unit's solve, each spilling the unit's exact values (2 bytes
/// a slot and side, in memory for a unit up to [`IN_MEMORY_SLOTS`]): the most seen in a unit
/// of the ≤4-piece set (BNPvK's DTW). A build that printed each shift found 26 tables that
/// shift at all among the first 495 of the set, the pawnless ones once a metric.
pub const SPILLS: u64 = 2;
/// Share of the frontier entries [`LIST_FLOOR`] allows a small unit (one per slot and side
/// below it) that its lists are counted to hold at once: they held 0.03 to 0.80 of it, median
/// 0.46, in the 134 unit solves of 13 four-piece tables of 10⁵ to 2·10⁶ slots (RNNvB to
/// BNPvK, both metrics, counted by an instrumented build).
pub const FLOOR_LISTS_SHARE: f64 = 0.6;
/// Share of its bound ([`encoder_table_bytes`]) at which the writer counts the pairs
/// encoder's table: a round counts its pairs in it only while the table has at most 4 entries
/// a value of the sequence, which earlier rounds have shortened by then (fitted with
/// [`WRITER_BYTES_PER_SECTION_SLOT`]).
pub const ENCODER_TABLE_SHARE: f64 = 0.25;
/// Decoded blocks each source file may cache during a build.
pub const SOURCE_CACHE_BLOCKS: usize = 1024;
/// Program and thread stacks, in bytes: an idle `antitb generate` has a peak RSS of 5 MB; the
/// ≤4-piece tables of at most 10⁴ slots a side start their write phases at a median of 7.5 to
/// 8.9 MiB (2 threads), and the 2- and 3-piece ones peaked at up to 1.21x the former 8 MiB.
pub const BASE_MEMORY: u64 = 10 << 20;
/// Upper estimate of compressed bytes per slot and side, by metric (WDL, DTZ, DTW). The
/// largest seen among the ≤4-piece tables: 0.12 (WDL), 0.21 (DTZ), and per piece count the
/// ratio falls (3 pieces: 0.12 / 0.28; 2 pieces: 0.30 / 0.53 on files of a few hundred bytes,
/// where the header dominates: see [`DISK_HEADER_BYTES`]).
pub const DISK_BYTES_PER_SLOT: [f64; 3] = [0.25, 0.5, 0.5];
/// Bytes per slot and side of a `.wdl` file that a WDL/DTZ build reads through its file,
/// mapped: those pages count in the build's resident memory once read. The mean over the
/// ≤4-piece `.wdl` files (0.030; the largest 0.13): an expectation, not a bound, as the pages
/// are clean and the kernel takes them back when memory runs short.
pub const MAPPED_WDL_BYTES_PER_SLOT: f64 = 0.03;
/// The writer's peak per slot of a section ([`SECTION_VALUES`] at most), beside one pairs
/// encoder's table ([`encoder_table_bytes`] of the section, at [`ENCODER_TABLE_SHARE`]): up to
/// two sections are in flight, each with the codes read, their symbols and the encoder's copy
/// of them (2 bytes a slot each) and the encoder's pair candidates, and two sections seldom
/// peak at once. Fitted, with [`ENCODER_TABLE_SHARE`], to the write-phase peaks of the 714
/// ≤4-piece tables (`generate --report`, 2 threads, all metrics, on 7e5a500): 6 bytes here
/// and a quarter of the table put 689 of them within 25 % of the writer's estimate and
/// [`BASE_MEMORY`] (median 0.94); 16 peak above 1.25x it, up to 1.64x, all tables of two
/// to four pawns whose solves peak 2.4 to 11 times higher. With 12 bytes and the whole
/// table, 173 were within 25 % (median 0.57). The five-piece KBNvKQ and five others of
/// 1.2·10⁸ slots (WDL+DTZ, 2 threads) peak at 147 to 154 MiB while writing, against 168 MiB
/// estimated.
pub const WRITER_BYTES_PER_SECTION_SLOT: u64 = 6;
/// Expected compressed bytes per slot and side of the largest file a table writes, for the
/// compressed data its writer keeps in memory (up to [`SPILL_BYTES`] an encoding): above the
/// largest ratio of the five- and six-piece files built so far (NNNvNNN's `.dtw` and
/// KKKKvP's `.dtw`: 0.067 and 0.089), where [`DISK_BYTES_PER_SLOT`] is an upper bound for
/// the disk check.
pub const WRITER_IMAGE_BYTES_PER_SLOT: f64 = 0.1;
/// Header and offset table allowance per file.
pub const DISK_HEADER_BYTES: u64 = 4096;

/// Estimate the build of `material` (DTZ + WDL, and DTW if `dtw`).
pub fn estimate(material: Material, dtw: bool) -> Estimate {
    estimate_with(material, dtw, &mut HashMap::new())
}

/// [`estimate`] with a cache of slot counts (for plans of thousands of tables).
pub fn estimate_with(
    material: Material,
    dtw: bool,
    sizes: &mut HashMap<Material, u64>,
) -> Estimate {
    let m = material.canonical();
    // This table's index: its size, rest groups and sample slots below.
    let index = Index::new(m);
    let n = index.size();
    sizes.insert(m, n);
    let mut size = |m: Material| *sizes.entry(m).or_insert_with(|| Index::new(m).size());
    let file =
        |m: Metric| (2.0 * n as f64 * DISK_BYTES_PER_SLOT[m as usize]) as u64 + DISK_HEADER_BYTES;
    let disk: u64 = metrics(dtw).iter().map(|&m| file(m)).sum();
    let in_memory = if n <= IN_MEMORY_SLOTS { 2 * n * 2 } else { 0 };
    // The largest unit solved: the whole table without pawns; with pawns a batch of pawn
    // configurations of equal advancement, at most `UNIT_SLOTS` slots (never less than one
    // configuration).
    let unit = largest_unit(&index, UNIT_SLOTS);
    // A window shift spills the unit's old exact values, 2 bytes a slot and side, in memory
    // where the unit fits [`IN_MEMORY_SLOTS`] (a compressed scratch file beyond).
    let spills = if unit <= IN_MEMORY_SLOTS {
        SPILLS * 2 * unit * 2
    } else {
        0
    };
    // The frontier lists: a quarter byte a slot and side at most; below the floor
    // [`FLOOR_LISTS_SHARE`] of what the floor allows.
    let floor_lists = (LIST_FLOOR.min(2 * unit) as f64 * FLOOR_LISTS_SHARE) as u64;
    let lists = 8 * list_caps(unit, 0).0.max(floor_lists);
    // Configurations smaller than a frame of the exact store share frames with others solved
    // at other times: in the worst case every frame is filling, 2 bytes a slot.
    let filling = if m.has_pawns() && n > IN_MEMORY_SLOTS && index.rest_size() < FRAME {
        2 * n * 2
    } else {
        0
    };
    // A DTW solve also holds the table's WDL classes from the solve before it ([`WdlHint`]).
    let hint = if dtw { WdlHint::bytes(n) } else { 0 };
    // Without pawns the unit is the table, and its lists are spent before its exact values
    // fill the store (phase 4); with pawns the store holds the units solved before beside
    // them.
    let lists_or_exact = if m.has_pawns() {
        lists + in_memory
    } else {
        lists.max(in_memory)
    };
    let solver = 2 * unit + 2 * unit / 8 + lists_or_exact + spills + filling + hint;
    let section = n.min(SECTION_VALUES);
    // A file in another rest order than the solver's reads the values one shared run (at
    // most a lead configuration, at most a section) at a time, beside each section; a table
    // whose codes fit [`COPY_BYTES`] is first copied whole in that order, where it may have
    // one.
    let run = 2 * index.rest_size().min(section);
    let copy = if 4 * n <= COPY_BYTES && index.rest_orders().len() > 1 {
        4 * n
    } else {
        0
    };
    // The compressed data a file's encodings hold in memory: its expected size, not the
    // upper bound the disk check takes.
    let image = (2.0 * n as f64 * WRITER_IMAGE_BYTES_PER_SLOT) as u64;
    let writer = in_memory
        + copy
        + (encoder_table_bytes(section) as f64 * ENCODER_TABLE_SHARE) as u64
        + WRITER_BYTES_PER_SECTION_SLOT * section
        + 2 * run
        + 2 * (image.min(SPILL_BYTES as u64) + image / 64);
    let block = 2 * u64::from(DTW_VALUES_PER_BLOCK);
    let (sources, far_tables) = reached_tables(m);
    let far: u64 = far_tables
        .iter()
        .filter_map(|&d| DecodedTables::decoded_bytes(size(d), Metric::Dtw))
        .sum();
    // Whether a DTW build reads some table through its files (too large to decode, or beyond
    // the budget of those promotions of promotions reach).
    let through_files = far > DecodedTables::FAR_BYTES
        || sources
            .iter()
            .chain(&far_tables)
            .any(|&d| DecodedTables::decoded_bytes(size(d), Metric::Dtw).is_none());
    // A WDL/DTZ build decodes the tables its solver reads ([`solver_reads`]) that fit
    // [`DecodedTables::MAX_BYTES`] and larger ones up to [`DecodedTables::WDL_BYTES`], and
    // reads the others from their `.wdl` files (the pairs codec, which caches no blocks: only
    // the mapped pages it touches).
    let read_sizes: Vec<(Material, u64)> =
        solver_reads(m).into_iter().map(|d| (d, size(d))).collect();
    let whole = DecodedTables::wdl_decoded_whole(m, &read_sizes);
    let mut cache: u64 = read_sizes
        .iter()
        .zip(&whole)
        .map(|(&(_, s), &whole)| {
            if whole {
                DecodedTables::whole_bytes(s, Metric::Dtz)
            } else {
                (2.0 * s as f64 * MAPPED_WDL_BYTES_PER_SLOT) as u64
            }
        })
        .sum();
    // And the sides of the tables it reads through their files that lookups reach, decoded
    // whole up to [`DecodedTables::side_budget`]: of a table as large as this one the side its
    // promotions land on, of a smaller one (captures by either side) both.
    let sides: u64 = read_sizes
        .iter()
        .zip(&whole)
        .filter(|&(_, &whole)| !whole)
        .map(|(&(d, s), _)| {
            let reached = if d.count() < m.count() { 2 } else { 1 };
            reached * DecodedTables::side_bytes(s)
        })
        .sum();
    cache += sides.min(DecodedTables::side_budget(n));
    let wdl_through_files: HashSet<Material> = read_sizes
        .iter()
        .zip(&whole)
        .filter(|&(_, &whole)| !whole)
        .map(|(&(d, _), _)| d)
        .collect();
    if dtw {
        // A DTW build also decodes, up to a budget, the tables as large as this one that the
        // one-ply search of a left-out `.dtw` side reaches by promotions of promotions; the
        // tables it reads through their files keep the slots of such sides it searched.
        let searched = if through_files {
            (32 * n).min(DecodedTables::SEARCHED_BYTES)
        } else {
            0
        };
        let decoded: u64 = sources
            .iter()
            .map(|&d| {
                let s = size(d);
                DecodedTables::decoded_bytes(s, Metric::Dtw).unwrap_or_else(|| {
                    // A block cache holds at most the side its `.dtw` file stores.
                    (SOURCE_CACHE_BLOCKS as u64 * block).min(2 * s)
                })
            })
            .sum();
        // And the outcomes of the tables it reads through their files, up to their budget:
        // those too large to decode, and the far tables beyond [`DecodedTables::FAR_BYTES`]
        // (which of them is first come first served: the share of their bytes above it).
        // A table's outcome bytes if it is decodable (`true`) or too large (`false`), else 0.
        let mut outcome_bytes = |d: &Material, decodable: bool| {
            let s = size(*d);
            if DecodedTables::decoded_bytes(s, Metric::Dtw).is_some() == decodable {
                DecodedTables::outcome_bytes(s)
            } else {
                0
            }
        };
        let too_large: u64 = sources
            .iter()
            .chain(&far_tables)
            .map(|d| outcome_bytes(d, false))
            .sum();
        let over = far.saturating_sub(DecodedTables::FAR_BYTES);
        let far_over = if over > 0 {
            let all: u64 = far_tables.iter().map(|d| outcome_bytes(d, true)).sum();
            (all as f64 * over as f64 / far as f64) as u64
        } else {
            0
        };
        let outcomes = (too_large + far_over).min(DecodedTables::OUTCOME_BYTES);
        cache = cache.max(decoded + far.min(DecodedTables::FAR_BYTES) + searched + outcomes);
    }
    let metrics = if dtw { 2 } else { 1 };
    let work = 2 * n * metrics;
    let (files_moves, dtw_files_moves) = if m.count() >= 6 {
        files_moves_per_slot(&index, &mut |d| {
            let large = DecodedTables::decoded_bytes(size(d), Metric::Wdl).is_none();
            (wdl_through_files.contains(&d), large)
        })
    } else {
        (0.0, 0.0)
    };
    Estimate {
        material: m,
        slots: n,
        memory: (solver + cache).max(writer) + BASE_MEMORY,
        solver,
        writer,
        sources: cache,
        disk,
        work,
        files_moves,
        dtw_files_moves,
    }
}

/// Valid slots sampled by [`files_moves_per_slot`].
pub const FILES_MOVES_SAMPLES: u32 = 1024;

/// The mean numbers of legal moves, over valid slots of both sides to move, that capture or
/// promote into a table a WDL/DTZ build of `index`'s table reads through its files, and a DTW
/// build: `through_files` says of each table (canonical) whether each build does (a WDL/DTZ
/// build decodes more tables whole, [`DecodedTables::wdl_decoded_whole`]). Estimated from
/// [`FILES_MOVES_SAMPLES`] slots drawn by a fixed generator: the same figures every run.
pub fn files_moves_per_slot(
    index: &Index,
    through_files: &mut impl FnMut(Material) -> (bool, bool),
) -> (f64, f64) {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut kinds: HashMap<Material, (bool, bool)> = HashMap::new();
    let (mut samples, mut moves, mut dtw_moves, mut draws) = (0u32, 0u64, 0u64, 0u64);
    let mut list = MoveList::new();
    // A table of valid slots is never this sparse; the bound only keeps the loop finite.
    while samples < FILES_MOVES_SAMPLES && draws < 1024 * u64::from(FILES_MOVES_SAMPLES) {
        draws += 1;
        let r = next();
        let Some(pos) = index.decode((r >> 63) as usize, (r >> 1) % index.size()) else {
            continue;
        };
        samples += 1;
        pos.legal_moves_into(&mut list);
        for mv in list
            .iter()
            .filter(|mv| mv.is_capture() || mv.promotion.is_some())
        {
            let d = Material::of_position(&pos.after(mv)).canonical();
            if !d.is_table() {
                continue;
            }
            let (wdl, dtw) = *kinds.entry(d).or_insert_with(|| through_files(d));
            moves += u64::from(wdl);
            dtw_moves += u64::from(dtw);
        }
    }
    let per_slot = |n: u64| n as f64 / f64::from(samples.max(1));
    (per_slot(moves), per_slot(dtw_moves))
}

/// Single-core nanoseconds per slot and side of a WDL+DTZ build by piece count, from 6 pieces
/// (5 pieces: [`NS_PER_SLOT_VISIT_5`]; up to 4: [`NS_PER_SLOT_VISIT_UP_TO_4`]), with
/// [`NS_PER_FILES_MOVE`] per move into a table read through its files on top: the user and
/// system CPU time of `antitb generate` (2 threads) measured per table with `--report`, the
/// DTW phases taken out, once levels may go forward and tables without pawns skip phase 2
/// (d5f1cb0, 7238ac1, 61345a1). 6 pieces, by moves into tables read through files per slot
/// ([`files_moves_per_slot`]): KKKKKvB 469 ns at 0 such moves, KKQBNvK 515 at 0.26, KKKKKvP
/// 523 at 0.39 (promotions into six-piece tables, captures into KKKKvP), KQRvKBN 812 at 1.41
/// (captures into its six five-piece tables): the least-squares line is 450 ns plus 252 per
/// move, within 5 % of each (a single figure, the mean 496, was 1.63x short for KQRvKBN).
/// 7 pieces extrapolated. Tables with long wins take more levels, so single tables stray from
/// these by up to half. The entries below 6 pieces are not read.
pub const NS_PER_SLOT_VISIT: [f64; 8] = [450.0, 450.0, 450.0, 450.0, 450.0, 450.0, 450.0, 550.0];

/// Single-core nanoseconds per slot and side of a five-piece WDL+DTZ build, without pawns and
/// with: `scripts/bench-estimates.sh` with `EXTRAPOLATE=5` on 48 five-piece tables (69c601a,
/// 2 threads, all three metrics, the DTW phases taken out): the closures of KKKPvP, KKKKvP,
/// NNNvNP and KNPvKB, 35 tables without pawns (170 to 466 ns, 292 over all) and 13 with
/// (224 to 970, 448 over all). 400 for both before (from KKKKvX, NNNvNN, KRNvBN, KQRBvN).
pub const NS_PER_SLOT_VISIT_5: [f64; 2] = [292.0, 448.0];

/// From 6 pieces, single-core nanoseconds per slot and side that each move per slot into a
/// table read through its files adds to a WDL+DTZ build ([`NS_PER_SLOT_VISIT`]): the lookup
/// walks a compressed block, and a capture position there is resolved by a capture search
/// whose leaves are read the same way. Moves into the tables a build decodes whole beyond
/// [`DecodedTables::MAX_BYTES`] ([`DecodedTables::WDL_BYTES`]) do not count: KKKKvKQ and
/// BBBBvQB (0.81 and 0.87 moves a slot into their five-piece tables, all now decoded) took
/// 0.73x and 0.71x the CPU time they took reading them through their files, where this
/// estimate gives 0.69x.
pub const NS_PER_FILES_MOVE: f64 = 252.0;

/// A DTW build's CPU time beside its table's WDL+DTZ build (what [`NS_PER_SLOT_VISIT`] adds
/// for DTW). Without pawns and with pawns up to 5 pieces, from the same 48 five-piece tables
/// as [`NS_PER_SLOT_VISIT_5`]: 1.43 over the 35 without pawns (0.78 to 2.94 each; 1.57
/// before, from KKKKvX, NNNvNN and KKKKKvB), 2.12 over the 13 with (0.97 to 6.98: the tables
/// whose single black pawn promotes into a five-piece table whose left-out side is searched
/// through its files take the most; 3.98 before, from KKKKvP alone). With pawns from 6
/// pieces, KKKKKvP 9.04. A promotion lands in the side to move a `.dtw` file may leave out,
/// valued by one ply of search: in decoded tables up to 4 pieces, through the files' block
/// caches from 5 (KKKKKvP's DTW phase: 1 596 CPU-s).
pub const DTW_COST: [f64; 3] = [1.43, 2.12, 9.04];

/// Single-core nanoseconds per slot visit (2 sides × slots × metrics) up to 4 pieces, by pawns
/// (0 to 4), from the README's main command (the whole ≤4-piece set, all three metrics,
/// 2 142 files, 2 threads, b40764e): each table's time from its progress line (they add up to
/// 1 984 s beside 1 961 user-s), over its visits. Tables up to 3 pieces 238 ns; 4 pieces
/// without pawns 254, with one 358, two 457, three 589, four (PPvPP, PPPvP: 2 s in all) 551.
/// Before: 358, 465, 555, 812 and 1 329 (881415c, scaled by 0.87 at 61345a1), 1.32x the
/// whole set's time. Tables with pawns read the left-out `.dtw` sides of the tables they
/// promote into, by one ply of search per slot, so single tables stray by up to half.
pub const NS_PER_SLOT_VISIT_UP_TO_4: [f64; 5] = [254.0, 358.0, 457.0, 589.0, 551.0];

/// Estimated single-core CPU seconds of building `m` (`slots` per side), WDL+DTZ and, if
/// `dtw`, DTW: [`NS_PER_SLOT_VISIT`] per slot and side (5 pieces: [`NS_PER_SLOT_VISIT_5`],
/// by pawns or none), from 6 pieces with
/// [`NS_PER_FILES_MOVE`] for each of the `files_moves` a slot has ([`files_moves_per_slot`]),
/// and for DTW [`DTW_COST`] of the same with its `dtw_files_moves` (without pawns; with pawns
/// up to 5 pieces; with pawns from 6); up to 4 pieces [`NS_PER_SLOT_VISIT_UP_TO_4`] per slot
/// visit. Below 6 pieces the estimate counts no such moves ([`Estimate::files_moves`] is 0).
pub fn cpu_seconds(
    m: Material,
    slots: u64,
    dtw: bool,
    files_moves: f64,
    dtw_files_moves: f64,
) -> f64 {
    let visits = 2.0 * slots as f64;
    if m.count() <= 4 {
        let metrics = if dtw { 2.0 } else { 1.0 };
        return visits * metrics * NS_PER_SLOT_VISIT_UP_TO_4[m.pawns().min(4)] * 1e-9;
    }
    let dtw = match (dtw, m.has_pawns(), m.count()) {
        (false, ..) => 0.0,
        (true, false, _) => DTW_COST[0],
        (true, true, ..=5) => DTW_COST[1],
        (true, true, _) => DTW_COST[2],
    };
    let ns = if m.count() == 5 {
        NS_PER_SLOT_VISIT_5[usize::from(m.has_pawns())]
    } else {
        NS_PER_SLOT_VISIT[m.count().min(7)]
    };
    let wdl_dtz = ns + files_moves * NS_PER_FILES_MOVE;
    let dtw = dtw * (ns + dtw_files_moves * NS_PER_FILES_MOVE);
    visits * (wdl_dtz + dtw) * 1e-9
}

/// The tables a WDL or DTZ solve of `m` reads: those its captures reach, capture after
/// capture ([`crate::table::resolve`]), from its own positions and from the positions its
/// promotions reach (the solver resolves a promoted position's captures, as it resolves any
/// child's), and those promotions' own tables. A DTW build reads more: the one-ply search of
/// a left-out `.dtw` side reaches further ([`source_tables`]).
pub(super) fn solver_reads(m: Material) -> Vec<Material> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = m.capture_targets();
    stack.extend(m.promotion_targets());
    while let Some(d) = stack.pop() {
        if seen.insert(d) {
            stack.extend(d.capture_targets());
        }
    }
    seen.into_iter().collect()
}

/// The tables the solver of `m` reads: those one capture or promotion away and (through
/// capture chains) smaller ones. Tables as large as `m` that only promotions of promotions
/// reach are not read by the solver, and not preloaded (PPvPP's closure holds over a hundred
/// 4-piece tables; decoding them all cost 4.2 GB instead of 0.26 GB): see [`reached_tables`].
pub(super) fn source_tables(m: Material) -> Vec<Material> {
    reached_tables(m).0
}

/// [`source_tables`], and the tables as large as `m` that only promotions of promotions reach:
/// not read by the solver, but by the one-ply search of a left-out `.dtw` side of the tables
/// it reads (a promotion from there); none unless `m` has two pawns or more. One pass over
/// `m`'s closure for both.
fn reached_tables(m: Material) -> (Vec<Material>, Vec<Material>) {
    let direct = m.dependencies();
    Material::closure(&[m])
        .into_iter()
        .filter(|&d| d != m)
        .partition(|&d| d.count() < m.count() || direct.contains(&d))
}

/// `1536` → `"1.5 KiB"`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r#gen::{LookupError, MemoryTables, TableSource, generate};
    use crate::rules::Position;
    use crate::table::Value;
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    #[test]
    fn estimate_follows_the_formula() {
        let m = Material::parse("KQvR").unwrap();
        let e = estimate(m, false);
        // 518 canonical placements of the lead pair (K, Q), the rook on one of the other 62.
        assert_eq!(e.slots, 518 * 62);
        let n = e.slots;
        let disk =
            (2.0 * n as f64 * 0.25) as u64 + (2.0 * n as f64 * 0.5) as u64 + 2 * DISK_HEADER_BYTES;
        assert_eq!(e.disk, disk);
        // Solving: state bytes, quiet bits; the frontier lists, which may hold one entry per
        // slot and side (the table is below `LIST_FLOOR`), counted at their share, or the
        // exact values in memory (a small table without pawns: the larger); two spills of
        // the exact values. Writing: the exact values, the fitted bytes per section slot (the
        // whole table is one section), the encoder's table at its share (by the section's
        // length: below `ENCODER_TABLE_BYTES` for so short a one), a shared run of each
        // section (a lead configuration: the rook's 62 squares), the expected compressed data
        // of two encodings, each with its header. + the caches of KvR, KvQ, KvK, KQvK, KRvK,
        // KQvR's other dependencies (all small) + base.
        let lists = 8 * ((2 * n) as f64 * FLOOR_LISTS_SHARE) as u64;
        let solving = 2 * n + 2 * n / 8 + lists.max(4 * n) + 2 * 4 * n;
        let image = (2.0 * n as f64 * WRITER_IMAGE_BYTES_PER_SLOT) as u64;
        let writing = 4 * n
            + WRITER_BYTES_PER_SECTION_SLOT * n
            + (encoder_table_bytes(n) as f64 * ENCODER_TABLE_SHARE) as u64
            + 2 * 2 * 62
            + 2 * (image + image / 64);
        assert_eq!((e.solver, e.writer), (solving, writing), "{e:?}");
        let peak = solving.max(writing) + BASE_MEMORY;
        assert!(e.memory >= peak, "{e:?}");
        assert!(e.memory < peak + 2 * 2 * 518 * 62 * 6, "{e:?}");
        assert_eq!(e.work, 2 * n);
        assert_eq!(estimate(m, true).work, 4 * n);
        // KRvBN may be written in another rest order than its own: its writer counts a copy of
        // the codes in that order (4 bytes a slot) beside the exact values in memory.
        let m = Material::parse("KRvBN").unwrap();
        assert!(Index::new(m).rest_orders().len() > 1);
        let e = estimate(m, false);
        let n = e.slots;
        assert!(n <= IN_MEMORY_SLOTS && 4 * n <= COPY_BYTES, "{e:?}");
        assert!(
            e.writer >= 4 * n + 4 * n + WRITER_BYTES_PER_SECTION_SLOT * n,
            "{e:?}"
        );
    }

    /// Four-piece tables of 4·10⁵ to 5.7·10⁶ slots a side, with and without pawns, are
    /// estimated within 25 % of their peaks (MiB) measured by `generate --report` on 7e5a500
    /// (2 threads, all metrics). Counting the frontier lists at their whole floor, the spills
    /// of the whole table and the encoder's table at its bound, KQvKB's estimate was 1.75x
    /// its peak and KPvBN's 1.57x.
    #[test]
    fn four_piece_estimates_hold_for_their_measured_peaks() {
        for (name, peak_mib) in [
            ("BBBvB", 16.5),
            ("RNNvB", 33.5),
            ("KQvKB", 43.4),
            ("KRvKN", 39.5),
            ("KBNvK", 39.7),
            ("KPvBN", 117.6),
            ("BNvBP", 110.1),
        ] {
            assert_within_a_quarter(name, peak_mib);
        }
    }

    /// The estimate of `name`'s build with all metrics is within 25 % of its measured peak.
    fn assert_within_a_quarter(name: &str, peak_mib: f64) {
        let e = estimate(Material::parse(name).unwrap(), true);
        let ratio = peak_mib * (1 << 20) as f64 / e.memory as f64;
        assert!((0.75..=1.25).contains(&ratio), "{name}: {ratio:.2} {e:?}");
    }

    /// Four-piece tables whose DTW solves reach more tables by promotions of promotions than
    /// [`DecodedTables::FAR_BYTES`] holds decoded: the peaks (MiB) of `generate --report` on
    /// 7e5a500 (2 threads, all metrics), each their DTW solve's. Counting only the far tables'
    /// budget, NPvPP's estimate was 349 MiB (1.50x under); the outcomes of those read
    /// through their files count as well.
    #[test]
    fn far_reaching_pawn_tables_are_not_underestimated() {
        for (name, peak_mib) in [("NPvPP", 522.5), ("QPvPP", 419.0), ("NPPvP", 390.0)] {
            assert_within_a_quarter(name, peak_mib);
        }
    }

    /// The six-piece WDL+DTZ builds measured (single-core ns per slot and side, from their
    /// `--report` lines; see [`NS_PER_SLOT_VISIT`]) are estimated within 25 %, and only
    /// KQRvKBN's five-piece captures, KKQBNvK's and KKKKKvP's reads go through files. They
    /// were built when a WDL/DTZ build read every table above [`DecodedTables::MAX_BYTES`]
    /// through its files, as a DTW build does: the estimate with those moves
    /// ([`Estimate::dtw_files_moves`]). Built since, when it decodes its five-piece tables,
    /// KKKKvKQ is estimated at about 2x its time, before as now (single tables stray).
    #[test]
    fn six_piece_estimates_hold_for_the_tables_built() {
        for (name, measured_ns, files) in [
            ("KKKKKvB", 469.0, false),
            ("KKQBNvK", 515.0, true),
            ("KKKKKvP", 523.0, true),
            ("KQRvKBN", 812.0, true),
        ] {
            let e = estimate(Material::parse(name).unwrap(), false);
            assert_eq!(e.dtw_files_moves > 0.0, files, "{name}: {e:?}");
            assert!(e.files_moves <= e.dtw_files_moves, "{name}: {e:?}");
            // The WDL/DTZ estimate, as if every move into such a table went through its files.
            let m = Material::parse(name).unwrap();
            let seconds = cpu_seconds(m, e.slots, false, e.dtw_files_moves, 0.0);
            let ns = seconds / (2.0 * e.slots as f64) * 1e9;
            let ratio = ns / measured_ns;
            assert!(
                (0.8..=1.25).contains(&ratio),
                "{name}: {ns:.0} ns estimated"
            );
        }
        // The same sample every time.
        let m = Material::parse("KQRvKBN").unwrap();
        assert_eq!(
            estimate(m, false).files_moves,
            estimate(m, false).files_moves
        );
    }

    /// A source that notes the table of every position looked up in it.
    struct Recording<'a> {
        tables: &'a MemoryTables,
        read: Mutex<BTreeSet<Material>>,
    }

    impl TableSource for Recording<'_> {
        type Error = LookupError;

        fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, LookupError> {
            let m = Material::of_position(pos).canonical();
            self.read.lock().unwrap().insert(m);
            self.tables.stored_value(pos, metric)
        }
    }

    #[test]
    fn solver_reads_are_the_tables_a_dtz_solve_looks_up() {
        // Every table up to 3 pieces with a pawn: promotions, capturing promotions, en passant
        // and capture chains after a promotion. The set must hold every table the solver looks
        // up (the estimate counts them, and a build decodes them up front), and little more.
        let mut mem = MemoryTables::new();
        mem.generate_up_to(3, Metric::Dtz).unwrap();
        let mut checked = 0;
        for m in (2..=3).flat_map(Material::all_with_pieces) {
            if !m.has_pawns() {
                continue;
            }
            let source = Recording {
                tables: &mem,
                read: Mutex::default(),
            };
            generate(m, Metric::Dtz, &source, &|_| {}).unwrap();
            let read: Vec<Material> = source.read.into_inner().unwrap().into_iter().collect();
            let want = solver_reads(m);
            for d in &read {
                assert!(
                    want.contains(d),
                    "{m} reads {d}, which solver_reads leaves out"
                );
            }
            // Some 2-piece tables are out of reach by geometry alone: in PPvP, a white
            // pawn that Black's pawn could take after the other promotes could take Black's
            // first, and captures are compulsory, so White never promotes then.
            for d in want.iter().filter(|d| !read.contains(d)) {
                assert_eq!(d.count(), 2, "{m} never reads {d}");
            }
            checked += 1;
        }
        assert_eq!(checked, 57);
    }

    #[test]
    fn solver_reads_leave_out_what_only_two_promotions_reach() {
        let m = |s: &str| Material::parse(s).unwrap();
        let reads = solver_reads(m("PPvPP"));
        // One promotion, then captures.
        for d in ["QPvPP", "PPvPQ", "QPvP", "QvPP", "PvP", "QvP", "PvK"] {
            assert!(reads.contains(&m(d).canonical()), "{d}");
        }
        // Two promotions (of one side or both), then a capture: the DTW build's one-ply
        // searches of left-out sides reach these, a WDL/DTZ solve never does.
        for d in ["QQvP", "QvPQ", "QQvK"] {
            assert!(!reads.contains(&m(d).canonical()), "{d}");
            assert!(source_tables(m("PPvPP")).contains(&m(d).canonical()), "{d}");
        }
    }

    #[test]
    fn human_bytes_reads_well() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
