//! The transposition table: a fixed number of 64-byte buckets of four 16-byte slots, chosen from a
//! memory budget and never grown, so a search runs in bounded memory whatever its length.
//!
//! A slot holds the proof and disproof numbers of one (position, prover) key with the work spent
//! on it and the move that solved it. The low 32 bits of the key pick the bucket (reversed and
//! scaled to the bucket count by a multiply-high, so any count is possible and the whole
//! `--memory` is used), the high 32 bits are stored to tell keys apart within it (so two
//! positions agree on all 64 bits, or on the bucket bits plus 32, before they are confused:
//! neither the proof extraction nor the disproof certificate trusts an entry without re-playing
//! the position, so a confusion costs time, never a wrong answer). When a bucket is full, the slot
//! with the least work is replaced: solved entries and entries over big subtrees are the most
//! expensive to recompute, so they stay.
//!
//! A sixteenth of the memory holds, apart from the entries, the move that first proved each OR
//! node ([`Tt::record_proof`], two words per node with the full key, four to a line; a full line
//! gives up its move with the least work). Proof extraction follows these moves (`extract.rs`): the proof of a
//! node is older than the node's, so a line of first moves never closes a cycle, and it outlives
//! the entries, which the search replaces long before it ends in a table much smaller than the
//! search (measured on 1.e3 b5 2.Bxb5 h6 at 256 MB: the root proved, no proof extracted before;
//! 4.5e5 moves kept and a proof of 1e5 nodes with them).
//!
//! The search spends most of its time waiting for buckets of children it has just generated, so
//! [`Tt::prefetch`] asks for a bucket ahead of its use, and the buckets live in an anonymous
//! mapping aligned on 2 MB and advised for transparent huge pages, which turns most of those
//! misses' TLB walks into hits (measured: see the commit adding it). The mapping comes zeroed from
//! the kernel (an all-zero bucket is empty), so nothing is cleared up front and untouched parts
//! of a big table cost no memory.

/// A proof or disproof number meaning "solved": pn = INF is a disproof, dn = INF a proof.
pub const INF: u32 = u32::MAX;
/// The largest number of an unsolved node (sums saturate here).
pub const CAP: u32 = INF - 1;

/// No move recorded.
pub const NO_MOVE: u16 = u16::MAX;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// One node as the search sees it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    pub key: u64,
    pub pn: u32,
    pub dn: u32,
    /// Nodes expanded below this node so far (saturating): the replacement priority.
    pub work: u32,
    /// Index (in move-generation order) of the move that proved an OR node or disproved an
    /// AND node.
    pub best: u16,
}

/// One slot as stored: two words, written and read without locks by any number of threads.
/// `hi` is `(check ^ fold(lo)) << 32 | pn` and `lo` is `dn << 32 | work << 16 | best`: a read that
/// mixes the words of two different writes decodes to a wrong check (unless 32 bits of them
/// agree by chance) and so reads as another key's slot, never as a wrong entry of this key
/// (Hyatt's lockless hashing). All zero is an empty slot (its check decodes to 0).
#[derive(Default)]
#[repr(C)]
struct Slot {
    hi: AtomicU64,
    lo: AtomicU64,
}

/// A slot's contents, decoded.
#[derive(Copy, Clone, Debug)]
struct Fields {
    /// The high half of the key (never 0), or 0 for an empty slot.
    check: u32,
    pn: u32,
    dn: u32,
    work: u16,
    best: u16,
}

/// 32 well-mixed bits of `lo`: reads mixing two writes are caught unless these agree by chance.
#[inline]
fn fold(lo: u64) -> u32 {
    (lo.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32
}

impl Slot {
    #[inline]
    fn load(&self) -> Fields {
        let hi = self.hi.load(Ordering::Relaxed);
        let lo = self.lo.load(Ordering::Relaxed);
        Fields {
            check: (hi >> 32) as u32 ^ fold(lo),
            pn: hi as u32,
            dn: (lo >> 32) as u32,
            work: (lo >> 16) as u16,
            best: lo as u16,
        }
    }

    #[inline]
    fn store(&self, f: Fields) {
        let lo = u64::from(f.dn) << 32 | u64::from(f.work) << 16 | u64::from(f.best);
        let hi = u64::from(f.check ^ fold(lo)) << 32 | u64::from(f.pn);
        self.hi.store(hi, Ordering::Relaxed);
        self.lo.store(lo, Ordering::Relaxed);
    }
}

const WAYS: usize = 4;

#[derive(Default)]
#[repr(C, align(64))]
struct Bucket([Slot; WAYS]);

/// Alignment of the bucket array: one transparent huge page on x86-64.
const HUGE_PAGE: usize = 2 << 20;

/// The bucket array: an anonymous mapping, its buckets starting on a [`HUGE_PAGE`] boundary.
struct Buckets {
    /// Owns the mapping (unmapped on drop); reached only through `ptr`.
    _map: memmap2::MmapMut,
    ptr: *mut Bucket,
    len: usize,
}

// SAFETY: `Buckets` owns its mapping exclusively (like a `Vec<Bucket>`); the raw pointer is only
// dereferenced through borrows of it. Exercised by every search, e.g. tests/prove.rs
// `forced_wins_with_6_to_10_pieces_agree_with_brute_force` (one thread) and
// `three_pieces_agree_with_the_tables_on_several_threads` (shared across threads).
unsafe impl Send for Buckets {}
// SAFETY: as above; `&Buckets` gives only `&[Bucket]`, whose slots are atomics.
unsafe impl Sync for Buckets {}

impl Buckets {
    /// `len` empty buckets, or the reason the memory cannot be had.
    fn new(len: usize) -> std::io::Result<Buckets> {
        let bytes = len
            .checked_mul(std::mem::size_of::<Bucket>())
            .and_then(|b| b.checked_add(HUGE_PAGE))
            .ok_or_else(|| std::io::Error::other("size overflows"))?;
        let map = memmap2::MmapOptions::new().len(bytes).map_anon()?;
        let base = map.as_ptr() as usize;
        let offset = base.next_multiple_of(HUGE_PAGE) - base;
        #[cfg(target_os = "linux")]
        {
            // Only a hint: without transparent huge pages the table works the same, slower.
            let _ = map.advise_range(
                memmap2::Advice::HugePage,
                offset,
                len * std::mem::size_of::<Bucket>(),
            );
        }
        // SAFETY: `offset + len * 64 <= bytes`, and `offset` is a multiple of 64 (the mapping is
        // page-aligned), so the pointer is in bounds and aligned for `Bucket`. Exercised by every
        // search, e.g. tests/prove.rs `forced_wins_with_6_to_10_pieces_agree_with_brute_force`.
        let ptr = unsafe { map.as_ptr().add(offset) }
            .cast::<Bucket>()
            .cast_mut();
        Ok(Buckets {
            _map: map,
            ptr,
            len,
        })
    }

    #[inline]
    fn as_slice(&self) -> &[Bucket] {
        // SAFETY: `ptr..ptr + len` lies in the mapping, which lives as long as `self`; it is
        // initialised (zeroed by the kernel, and all-zero bytes are a valid `Bucket` of atomics).
        // Exercised by every probe of the table, e.g. tests/prove.rs
        // `three_pieces_agree_with_the_tables_on_several_threads`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A per-thread counter on a cache line of its own.
#[derive(Default)]
#[repr(align(128))]
struct Lane(AtomicUsize);

/// The table itself, shared by the threads of a search: every method takes `&self`.
pub struct Tt {
    buckets: Buckets,
    /// The moves that proved OR nodes, kept apart from the entries ([`Tt::proved_move`]).
    proved: Proved,
    /// Slots filled, counted per thread ([`Tt::put`]'s `lane`) so that threads do not write one
    /// cache line.
    used: Box<[Lane]>,
}

/// The high half of the key, never 0 (0 marks an empty slot).
#[inline]
fn check_of(key: u64) -> u32 {
    ((key >> 32) as u32).max(1)
}

impl Tt {
    /// A table using at most `bytes` of memory (as many 64-byte buckets as fit, at least two; a
    /// sixteenth of them, at least one, hold the proving moves), for `lanes` threads (at least
    /// one), or an error if the memory cannot be had or is over 2^32 buckets (256 GB).
    pub fn with_bytes(bytes: usize, lanes: usize) -> Result<Tt, String> {
        let bucket = std::mem::size_of::<Bucket>();
        let all = (bytes / bucket).max(2);
        let lines = (all / PROVED_SHARE).max(1);
        let n = all - lines;
        if all as u64 > 1 << 32 {
            return Err(format!(
                "a transposition table of {} MB is over the largest, 262144 MB",
                bytes >> 20
            ));
        }
        let cannot = |e: std::io::Error| {
            format!(
                "cannot allocate a {} MB transposition table: {e}",
                (all * bucket) >> 20
            )
        };
        let buckets = Buckets::new(n).map_err(cannot)?;
        let proved = Proved {
            lines: Buckets::new(lines).map_err(cannot)?,
        };
        let used = (0..lanes.max(1)).map(|_| Lane::default()).collect();
        Ok(Tt {
            buckets,
            used,
            proved,
        })
    }

    /// Number of entries the table can hold.
    pub fn capacity(&self) -> usize {
        self.buckets.len * WAYS
    }

    /// Number of entries in use (slots filled; a slot two threads fill at once counts twice).
    pub fn used(&self) -> usize {
        let n: usize = self.used.iter().map(|l| l.0.load(Ordering::Relaxed)).sum();
        n.min(self.capacity())
    }

    /// Bytes taken by the entries and the proving moves.
    pub fn bytes(&self) -> usize {
        (self.buckets.len + self.proved.lines.len) * std::mem::size_of::<Bucket>()
    }

    /// The bucket of `key`: its low 32 bits, reversed, scaled to the bucket count (at most 2^32)
    /// by a multiply-high. The bucket and the stored check (the high 32 bits) stay independent,
    /// and with a power of two of buckets the keys sharing a bucket are exactly those sharing
    /// their low bits (a mask), so such a table searches the same nodes as one indexed by a mask.
    #[inline]
    fn bucket(&self, key: u64) -> usize {
        ((u64::from((key as u32).reverse_bits()) * self.buckets.len as u64) >> 32) as usize
    }

    /// Hint that `key` will be looked up soon.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let p: *const Bucket = &self.buckets.as_slice()[self.bucket(key)];
            // SAFETY: a prefetch never faults and reads nothing the program sees; the pointer is
            // in bounds anyway. Measured on 1.e3 b6 (10^6 nodes, 256 MB table): 620k nodes/s
            // without, 900k with: almost every child's bucket is a cache miss. Exercised by every
            // search, e.g. tests/prove.rs `forced_wins_with_6_to_10_pieces_agree_with_brute_force`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
        }
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<Entry> {
        let c = check_of(key);
        self.buckets.as_slice()[self.bucket(key)]
            .0
            .iter()
            .map(Slot::load)
            .find(|s| s.check == c)
            .map(|s| Entry {
                key,
                pn: s.pn,
                dn: s.dn,
                work: u32::from(s.work),
                best: s.best,
            })
    }

    /// Store `e` (its `key` is the node's key), replacing the same key, else an empty slot,
    /// else the entry with the least work (unsolved before solved). `lane` is the calling
    /// thread's number (below the `lanes` of [`Tt::with_bytes`]). Two threads storing into one
    /// bucket at once may lose one of the stores (a cost in time, never a wrong entry).
    #[inline]
    pub fn put(&self, e: Entry, lane: usize) {
        let c = check_of(e.key);
        let new = Fields {
            check: c,
            pn: e.pn,
            dn: e.dn,
            work: e.work.min(u32::from(u16::MAX)) as u16,
            best: e.best,
        };
        let bucket = &self.buckets.as_slice()[self.bucket(e.key)].0;
        let seen: [Fields; WAYS] = std::array::from_fn(|i| bucket[i].load());
        if let Some(i) = seen.iter().position(|s| s.check == c) {
            bucket[i].store(new);
            return;
        }
        if let Some(i) = seen.iter().position(|s| s.check == 0) {
            bucket[i].store(new);
            self.used[lane].0.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let victim = (0..WAYS)
            .min_by_key(|&i| (seen[i].work, seen[i].pn == 0 || seen[i].dn == 0))
            .expect("a bucket has slots");
        bucket[victim].store(new);
    }
}

impl Tt {
    /// Remember that the OR node `key` was proved by its move number `best` after `work` nodes
    /// below it. The first move recorded for a key stays.
    #[inline]
    pub fn record_proof(&self, key: u64, best: u16, work: u32) {
        self.proved.record(key, best, work);
    }

    /// The move first recorded as proving the OR node `key`, if it is still kept.
    #[inline]
    pub fn proved_move(&self, key: u64) -> Option<u16> {
        self.proved.get(key)
    }

    /// Every proving move kept: (key, move number, work below the node, saturated at 65535).
    /// Records written while this runs may be missed or, half-written, come with a key no
    /// search will meet.
    pub fn proved_moves(&self) -> impl Iterator<Item = (u64, u16, u16)> + '_ {
        self.proved.records()
    }

    /// Take in a position solved by an earlier search: the OR node `key` is proved by its move
    /// number `best` after `work` nodes below it (an entry the search reads as proved, and the
    /// move for proof extraction).
    pub fn load_proved(&self, key: u64, best: u16, work: u16, lane: usize) {
        self.record_proof(key, best, u32::from(work));
        self.put(
            Entry {
                key,
                pn: 0,
                dn: INF,
                work: u32::from(work),
                best,
            },
            lane,
        );
    }
}

/// One part in this many of a table's memory holds [`Proved`].
const PROVED_SHARE: usize = 16;

/// Records of one line of [`Proved`].
const PROVED_WAYS: usize = 4;

/// The moves that proved OR nodes, kept apart from the entries so that proved lines survive
/// the replacement of entries (proof extraction follows them; `extract.rs`), and so that they
/// can be saved whole, full keys and all, to a store of solved positions (`solved.rs`). A 64-byte
/// line of the same mapping as the entries holds four records of two words, `data = 1 << 32 |
/// work << 16 | best` and `key ^ data` (written data first, so a reader that meets a half-written
/// record decodes another key: Hyatt's lockless hashing again). A key keeps the first move
/// recorded for it; a full line gives up the record with the least work, if that is no more than
/// the new one's.
struct Proved {
    lines: Buckets,
}

/// Marks a record's data word as used (an empty record is all zero).
const RECORD_USED: u64 = 1 << 32;

impl Proved {
    /// The four records of `key`'s line (a bucket's four slots, as (key ^ data, data)).
    #[inline]
    fn line(&self, key: u64) -> &[Slot; PROVED_WAYS] {
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
        &self.lines.as_slice()[((h * self.lines.len as u64) >> 32) as usize].0
    }

    /// The data word of `slot` if it holds `key`.
    #[inline]
    fn data_of(slot: &Slot, key: u64) -> Option<u64> {
        let data = slot.lo.load(Ordering::Relaxed);
        (data != 0 && slot.hi.load(Ordering::Relaxed) ^ data == key).then_some(data)
    }

    fn record(&self, key: u64, best: u16, work: u32) {
        let work = u64::from(work.min(u32::from(u16::MAX)));
        let data = RECORD_USED | work << 16 | u64::from(best);
        let line = self.line(key);
        let mut victim = 0;
        let mut least = u64::MAX;
        for (i, slot) in line.iter().enumerate() {
            if Self::data_of(slot, key).is_some() {
                return;
            }
            let v = slot.lo.load(Ordering::Relaxed);
            if v == 0
                && slot
                    .lo
                    .compare_exchange(0, data, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                slot.hi.store(key ^ data, Ordering::Relaxed);
                return;
            }
            let w = (v >> 16) & 0xffff;
            if v != 0 && w < least {
                least = w;
                victim = i;
            }
        }
        if least <= work {
            line[victim].lo.store(data, Ordering::Relaxed);
            line[victim].hi.store(key ^ data, Ordering::Relaxed);
        }
    }

    fn get(&self, key: u64) -> Option<u16> {
        self.line(key)
            .iter()
            .find_map(|s| Self::data_of(s, key).map(|d| d as u16))
    }

    /// Every record: (key, best, work).
    fn records(&self) -> impl Iterator<Item = (u64, u16, u16)> + '_ {
        self.lines.as_slice().iter().flat_map(|b| {
            b.0.iter().filter_map(|s| {
                let data = s.lo.load(Ordering::Relaxed);
                let key = s.hi.load(Ordering::Relaxed) ^ data;
                (data != 0).then_some((key, data as u16, (data >> 16) as u16))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_find_replace() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        let tt = Tt::with_bytes(1 << 12, 1).unwrap();
        assert_eq!(tt.bytes(), 1 << 12);
        let cap = tt.capacity();
        for k in 1..=(3 * cap as u64) {
            tt.put(
                Entry {
                    key: k.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                    pn: 1,
                    dn: 1,
                    work: (k % 7) as u32,
                    ..Entry::default()
                },
                0,
            );
        }
        assert!(tt.used() <= cap && tt.used() > cap * 9 / 10);
        let e = Entry {
            key: 42 << 32 | 5,
            pn: 0,
            dn: INF,
            work: 1000,
            best: 3,
        };
        tt.put(e, 0);
        assert_eq!(tt.get(e.key), Some(e));
        tt.put(Entry { pn: 5, ..e }, 0);
        assert_eq!(tt.get(e.key).unwrap().pn, 5);
        assert_eq!(tt.get(43 << 32 | 5), None);
        // Work saturates.
        tt.put(Entry { work: 1 << 20, ..e }, 0);
        assert_eq!(tt.get(e.key).unwrap().work, 65535);
    }

    #[test]
    fn any_bucket_count_uses_the_whole_budget() {
        // 3 MB + 100 bytes: 49 153 buckets, 3 072 of them for the proving moves, 46 081 (not a
        // power of two) for the entries, none wasted.
        let bytes = (3 << 20) + 100;
        let tt = Tt::with_bytes(bytes, 1).unwrap();
        assert_eq!(tt.bytes(), (3 << 20) + 64);
        assert_eq!(tt.proved.lines.len, 3_072);
        assert_eq!(tt.capacity(), 46_081 * WAYS);
        // Keys spread over the low 32 bits reach every bucket: the table fills up.
        let cap = tt.capacity() as u64;
        let mut hit = vec![false; tt.buckets.len];
        for k in 1..=(3 * cap) {
            let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            hit[tt.bucket(key)] = true;
            tt.put(
                Entry {
                    key,
                    pn: 1,
                    dn: 1,
                    ..Entry::default()
                },
                0,
            );
        }
        assert!(hit.iter().all(|&h| h));
        assert!(tt.used() as u64 > cap * 95 / 100, "{} of {cap}", tt.used());
        // The last bucket is reachable and in bounds.
        assert_eq!(tt.bucket(u64::MAX), tt.buckets.len - 1);
        assert_eq!(tt.bucket(0), 0);
        // With a power of two of buckets, keys share a bucket exactly when they share their low
        // bits.
        // (1 092 buckets: 68 for the proving moves, 1 024 for the entries.)
        let tt = Tt::with_bytes(1_092 * 64, 1).unwrap();
        assert_eq!(tt.buckets.len, 1 << 10);
        let mask = tt.buckets.len as u64 - 1;
        let mut of_low = vec![usize::MAX; tt.buckets.len];
        for k in 0..100_000u64 {
            let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k << 40);
            let b = tt.bucket(key);
            let slot = &mut of_low[(key & mask) as usize];
            assert!(*slot == usize::MAX || *slot == b);
            *slot = b;
        }
        // Tiny budgets still get one bucket of entries; budgets over 2^32 buckets are refused.
        assert_eq!(Tt::with_bytes(1, 1).unwrap().capacity(), WAYS);
        assert!(Tt::with_bytes((64 << 32) + 64, 1).is_err());
    }

    #[test]
    fn proving_moves_keep_the_first_and_give_way_by_work() {
        // 17 buckets: one line of four proving moves.
        let tt = Tt::with_bytes(17 * 64, 1).unwrap();
        assert_eq!(tt.proved.lines.len, 1);
        let key = |k: u64| k << 32 | 7;
        assert_eq!(tt.proved_move(key(1)), None);
        tt.record_proof(key(1), 3, 10);
        // A key keeps its first move.
        tt.record_proof(key(1), 4, 1000);
        assert_eq!(tt.proved_move(key(1)), Some(3));
        // The entries are another table: filling them leaves the move in place.
        for k in 1..=1000 {
            tt.put(
                Entry {
                    key: key(k),
                    pn: 0,
                    dn: INF,
                    work: 1 << 15,
                    best: 0,
                },
                0,
            );
        }
        assert_eq!(tt.proved_move(key(1)), Some(3));
        for k in 2..=4 {
            tt.record_proof(key(k), k as u16, 100 + k as u32);
        }
        assert!((1..=4).all(|k| tt.proved_move(key(k)).is_some()));
        // Full: less work than any is dropped, more replaces the least (key 1, work 10).
        tt.record_proof(key(9), 9, 5);
        assert_eq!(tt.proved_move(key(9)), None);
        tt.record_proof(key(10), 10, 50);
        assert_eq!(tt.proved_move(key(10)), Some(10));
        assert_eq!(tt.proved_move(key(1)), None);
        assert!((2..=4).all(|k| tt.proved_move(key(k)) == Some(k as u16)));
        // Keys differing only in their low half are told apart (full keys are kept).
        assert_eq!(tt.proved_move(key(2) ^ 1), None);
        // Every record is listed with its full key and work.
        let mut all: Vec<_> = tt.proved_moves().collect();
        all.sort_unstable();
        assert_eq!(
            all,
            vec![
                (key(2), 2, 102),
                (key(3), 3, 103),
                (key(4), 4, 104),
                (key(10), 10, 50)
            ]
        );
        // Work saturates at 65535, and a move index of 65534 comes back whole.
        tt.record_proof(key(11), 65534, u32::MAX);
        assert_eq!(tt.proved_move(key(11)), Some(65534));
    }

    #[test]
    fn loaded_proofs_are_entries_and_moves() {
        let tt = Tt::with_bytes(1 << 16, 1).unwrap();
        let key = 0x1234_5678_9abc_def0;
        tt.load_proved(key, 7, 300, 0);
        let e = tt.get(key).unwrap();
        assert_eq!((e.pn, e.dn, e.work, e.best), (0, INF, 300, 7));
        assert_eq!(tt.proved_move(key), Some(7));
        assert_eq!(tt.proved_moves().collect::<Vec<_>>(), vec![(key, 7, 300)]);
    }

    #[test]
    fn buckets_start_on_a_huge_page_and_empty() {
        let tt = Tt::with_bytes(5 << 20, 1).unwrap();
        assert_eq!(tt.buckets.ptr as usize % HUGE_PAGE, 0);
        assert!(
            tt.buckets
                .as_slice()
                .iter()
                .all(|b| b.0.iter().all(|s| s.load().check == 0))
        );
        assert_eq!(tt.used(), 0);
    }

    #[test]
    fn threads_storing_at_once_never_mix_entries() {
        // Two writers store entries with pn = dn = their own number into a tiny table while a
        // reader checks that every entry it finds is one that was written whole.
        let tt = Tt::with_bytes(1 << 10, 2).unwrap();
        let keys: Vec<u64> = (1..=64u64)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        std::thread::scope(|s| {
            for lane in 0..2u32 {
                let (tt, keys) = (&tt, &keys);
                s.spawn(move || {
                    for round in 0..20_000u32 {
                        let v = lane * 1_000_000 + round;
                        for &key in keys {
                            let e = Entry {
                                key,
                                pn: v,
                                dn: v,
                                work: v % 5,
                                best: (v % 7) as u16,
                            };
                            tt.put(e, lane as usize);
                        }
                    }
                });
            }
            let (tt, keys) = (&tt, &keys);
            s.spawn(move || {
                for _ in 0..20_000 {
                    for &key in keys {
                        if let Some(e) = tt.get(key) {
                            assert_eq!(e.key, key);
                            assert_eq!(e.pn, e.dn, "{e:?}");
                            assert_eq!(e.work, e.pn % 5, "{e:?}");
                            assert_eq!(u32::from(e.best), e.pn % 7, "{e:?}");
                        }
                    }
                }
            });
        });
        assert!(tt.used() <= tt.capacity());
    }
}
