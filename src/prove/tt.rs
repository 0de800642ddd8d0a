//! The transposition table: a fixed number of 4-entry buckets, chosen from a memory budget and
//! never grown, so a search runs in bounded memory whatever its length.
//!
//! An entry holds the proof and disproof numbers of one (position, prover) pair with the work
//! spent on it. When a bucket is full, the entry with the least work is replaced: solved entries
//! and entries over big subtrees are the most expensive to recompute, so they stay.

/// A proof or disproof number meaning "solved": pn = INF is a disproof, dn = INF a proof.
pub const INF: u32 = u32::MAX;
/// The largest number of an unsolved node (sums saturate here).
pub const CAP: u32 = INF - 1;

/// No move recorded.
pub const NO_MOVE: u16 = u16::MAX;

/// One stored node. `key == 0` marks an empty slot (a real key of 0 is stored as 1).
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

impl Entry {
    #[inline]
    pub fn is_proven(&self) -> bool {
        self.pn == 0
    }

    #[inline]
    pub fn is_disproven(&self) -> bool {
        self.dn == 0
    }
}

const WAYS: usize = 4;

/// The table itself.
pub struct Tt {
    buckets: Vec<[Entry; WAYS]>,
    mask: usize,
    used: usize,
}

#[inline]
fn stored_key(key: u64) -> u64 {
    if key == 0 { 1 } else { key }
}

impl Tt {
    /// A table using at most `bytes` of memory (at least one bucket; a power of two of buckets).
    pub fn with_bytes(bytes: usize) -> Tt {
        let bucket = std::mem::size_of::<[Entry; WAYS]>();
        let mut n = 1usize;
        while n * 2 * bucket <= bytes {
            n *= 2;
        }
        Tt {
            buckets: vec![[Entry::default(); WAYS]; n],
            mask: n - 1,
            used: 0,
        }
    }

    /// Number of entries the table can hold.
    pub fn capacity(&self) -> usize {
        self.buckets.len() * WAYS
    }

    /// Number of entries in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Bytes taken by the entries.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<[Entry; WAYS]>()
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // The low bits pick the bucket; the whole key is compared.
        (key ^ (key >> 32)) as usize & self.mask
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<Entry> {
        let k = stored_key(key);
        self.buckets[self.bucket(k)]
            .iter()
            .find(|e| e.key == k)
            .copied()
    }

    /// Store `e` (its `key` is the node's key), replacing the same key, else an empty slot,
    /// else the entry with the least work (unsolved before solved).
    pub fn put(&mut self, mut e: Entry) {
        e.key = stored_key(e.key);
        let b = self.bucket(e.key);
        let bucket = &mut self.buckets[b];
        if let Some(slot) = bucket.iter_mut().find(|s| s.key == e.key) {
            *slot = e;
            return;
        }
        if let Some(slot) = bucket.iter_mut().find(|s| s.key == 0) {
            *slot = e;
            self.used += 1;
            return;
        }
        let victim = bucket
            .iter_mut()
            .min_by_key(|s| (s.work, s.pn == 0 || s.dn == 0))
            .expect("a bucket has slots");
        *victim = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_find_replace() {
        let mut tt = Tt::with_bytes(1 << 12);
        assert!(tt.bytes() <= 1 << 12 && 2 * tt.bytes() > 1 << 12);
        let cap = tt.capacity();
        for k in 1..=(3 * cap as u64) {
            tt.put(Entry {
                key: k.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                pn: 1,
                dn: 1,
                work: (k % 7) as u32,
                ..Entry::default()
            });
        }
        assert!(tt.used() <= cap && tt.used() > cap * 9 / 10);
        let e = Entry {
            key: 42,
            pn: 0,
            dn: INF,
            work: 1000,
            ..Entry::default()
        };
        tt.put(e);
        assert_eq!(tt.get(42), Some(e));
        tt.put(Entry { pn: 5, ..e });
        assert_eq!(tt.get(42).unwrap().pn, 5);
        assert_eq!(tt.get(0), None);
    }
}
