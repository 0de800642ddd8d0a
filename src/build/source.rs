//! The generator's source of smaller tables during a build: stored files, read through a
//! [`Tablebase`], and whole tables decoded into memory.
//!
//! The generator looks up millions of positions in the tables it depends on, with no locality
//! a block cache could exploit well. Tables up to [`DecodedTables::MAX_SLOTS`] slots per side are
//! therefore decoded once, whole (a value code of 2 bytes per slot and side), the first time
//! they are needed; larger ones are read through their files' block caches.
//!
//! For a DTZ table only the WDL class of a smaller table's position matters (a zeroing move
//! scores by it, [`Metric::zeroing`]), so the small `.wdl` files are read; a DTW table reads
//! `.dtw` files ([`Metric::zeroing_file`]).

use crate::r#gen::TableSource;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::Position;
use crate::store::StoredTable;
use crate::table::{Index, Material, MaterialHasher, Metric, Value, Wdl};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, RwLock};

/// One decoded table: value codes per side (a WDL file's classes as [`Wdl::as_value`]).
struct Decoded {
    index: Index,
    sides: [Vec<u16>; 2],
}

type Cache = HashMap<(Material, Metric), Option<Arc<Decoded>>, BuildHasherDefault<MaterialHasher>>;

/// A [`TableSource`] over a [`Tablebase`] that keeps small tables decoded in memory.
pub struct DecodedTables<'a> {
    tb: &'a Tablebase,
    /// Tables decoded up front ([`DecodedTables::preload`]): read without a lock.
    fixed: Cache,
    /// Tables decoded on first use.
    cache: RwLock<Cache>,
}

impl<'a> DecodedTables<'a> {
    /// Tables with more slots per side than this are not decoded whole: 16 MiB of codes per
    /// table at most, which holds every table up to four pieces (the largest, e.g. `KQRvK`,
    /// has 1.8 M slots per side); five-piece tables (about 10^8 slots) are read from their
    /// memory-mapped files, as a six-piece table reaches up to 30 of them.
    pub const MAX_SLOTS: u64 = 1 << 22;

    pub fn new(tb: &'a Tablebase) -> DecodedTables<'a> {
        DecodedTables {
            tb,
            fixed: Cache::default(),
            cache: RwLock::new(Cache::default()),
        }
    }

    /// Decode `materials` now (the tables a generation in `metric` will look up), so that
    /// lookups in them take no lock: with a shared lock, two threads making millions of lookups
    /// spend much of their time handing its cache line back and forth.
    pub fn preload(&mut self, materials: &[Material], metric: Metric) -> Result<(), ProbeError> {
        let file = metric.zeroing_file();
        for &m in materials {
            let d = self.decoded(m, file)?;
            self.fixed.insert((m.canonical(), file), d);
        }
        Ok(())
    }

    /// The table of `m` and metric `file` decoded, or `None` when it is too large for that.
    fn decoded(&self, m: Material, file: Metric) -> Result<Option<Arc<Decoded>>, ProbeError> {
        let key = (m.canonical(), file);
        if let Some(d) = self.cache.read().expect("cache lock").get(&key) {
            return Ok(d.clone());
        }
        let wdl: Arc<StoredTable> = self.tb.table(key.0, Metric::Wdl)?;
        let d = if wdl.index.size() <= Self::MAX_SLOTS {
            let mut sides = [Vec::new(), Vec::new()];
            for (s, out) in sides.iter_mut().enumerate() {
                let w = wdl.decode_wdl(s)?;
                let values = if file == Metric::Wdl {
                    w.into_iter().map(Wdl::as_value).collect()
                } else {
                    // Values: the class from the `.wdl` file, the distance from this one.
                    self.tb.table(key.0, file)?.decode_values(s, |i| w[i])?
                };
                *out = values.into_iter().map(Value::code).collect();
            }
            Some(Arc::new(Decoded {
                index: wdl.index.clone(),
                sides,
            }))
        } else {
            None
        };
        self.cache
            .write()
            .expect("cache lock")
            .insert(key, d.clone());
        Ok(d)
    }
}

impl TableSource for DecodedTables<'_> {
    type Error = ProbeError;

    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        let file = metric.zeroing_file();
        let m = Material::of_position(pos);
        let owned;
        let d: Option<&Decoded> = match self.fixed.get(&(m.canonical(), file)) {
            Some(d) => d.as_deref(),
            None => {
                owned = self.decoded(m, file)?;
                owned.as_deref()
            }
        };
        match d {
            Some(d) => {
                let (side, idx) = d.index.encode(pos).expect("material matches its table");
                Ok(Value(d.sides[side][idx as usize]))
            }
            None => self.tb.stored_value(pos, metric),
        }
    }
}

impl TableSource for Tablebase {
    type Error = ProbeError;

    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, ProbeError> {
        self.lookup(pos, metric.zeroing_file())
    }
}
