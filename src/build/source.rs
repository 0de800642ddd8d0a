//! The generator's source of smaller tables during a build: stored files, read through a
//! [`Tablebase`], and whole tables decoded into memory.
//!
//! The generator looks up millions of positions in the tables it depends on, with no locality
//! a block cache could exploit well. Tables up to [`DecodedTables::MAX_SLOTS`] slots per side are
//! therefore decoded once, whole (1 byte per slot for WDL, 2 for DTW), the first time they are
//! needed; larger ones are read through their files' block caches.

use crate::r#gen::{GenError, TableSource};
use crate::probe::{ProbeError, Tablebase, wdl_value};
use crate::rules::Position;
use crate::store::{FileKind, StoredTable};
use crate::table::{Index, Material, MaterialHasher, Metric, Value};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, RwLock};

/// One decoded table: WDL + 2 or value codes, per side.
struct Decoded {
    index: Index,
    sides: [Vec<u16>; 2],
}

type Cache =
    HashMap<(Material, FileKind), Option<Arc<Decoded>>, BuildHasherDefault<MaterialHasher>>;

/// A [`TableSource`] over a [`Tablebase`] that keeps small tables decoded in memory.
pub struct DecodedTables<'a> {
    tb: &'a Tablebase,
    /// Tables decoded up front ([`DecodedTables::preload`]): read without a lock.
    fixed: Cache,
    /// Tables decoded on first use.
    cache: RwLock<Cache>,
}

impl<'a> DecodedTables<'a> {
    /// Tables with more slots per side than this are not decoded whole.
    pub const MAX_SLOTS: u64 = 1 << 26;

    pub fn new(tb: &'a Tablebase) -> DecodedTables<'a> {
        DecodedTables {
            tb,
            fixed: Cache::default(),
            cache: RwLock::new(Cache::default()),
        }
    }

    /// Decode `materials` now (the tables a generation will look up), so that lookups in them
    /// take no lock: with a shared lock, two threads making millions of lookups spend much of
    /// their time handing its cache line back and forth.
    pub fn preload(&mut self, materials: &[Material], metric: Metric) -> Result<(), GenError> {
        let kind = if metric == Metric::Dtz {
            FileKind::Wdl
        } else {
            FileKind::Dtw
        };
        for &m in materials {
            let d = self.decoded(m, kind)?;
            self.fixed.insert((m.canonical(), kind), d);
        }
        Ok(())
    }

    fn decoded(&self, m: Material, kind: FileKind) -> Result<Option<Arc<Decoded>>, GenError> {
        let key = (m.canonical(), kind);
        if let Some(d) = self.cache.read().expect("cache lock").get(&key) {
            return Ok(d.clone());
        }
        let open = |kind| {
            self.tb.table(key.0, kind).map_err(|e| match e {
                ProbeError::MissingTable { material, .. } => GenError::MissingTable(material),
                e => GenError::Source(e.to_string()),
            })
        };
        let source = |e: crate::store::StoreError| GenError::Source(e.to_string());
        let wdl: Arc<StoredTable> = open(FileKind::Wdl)?;
        let d = if wdl.index.size() <= Self::MAX_SLOTS {
            let mut sides = [Vec::new(), Vec::new()];
            for (s, out) in sides.iter_mut().enumerate() {
                let w = wdl.decode_side(s).map_err(source)?;
                *out = if kind == FileKind::Wdl {
                    w
                } else {
                    // Values: the class from the `.wdl` file, the distance from this one.
                    let t = open(kind)?;
                    t.decode_values(s, |i| w[i] as i8 - 2)
                        .map_err(source)?
                        .into_iter()
                        .map(Value::code)
                        .collect()
                };
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
    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, GenError> {
        let kind = if metric == Metric::Dtz {
            FileKind::Wdl
        } else {
            FileKind::Dtw
        };
        let m = Material::of_position(pos);
        let owned;
        let d: Option<&Decoded> = match self.fixed.get(&(m.canonical(), kind)) {
            Some(d) => d.as_deref(),
            None => {
                owned = self.decoded(m, kind)?;
                owned.as_deref()
            }
        };
        match d {
            Some(d) => {
                let (side, idx) = d.index.encode(pos).expect("material matches its table");
                let raw = d.sides[side][idx as usize];
                Ok(if kind == FileKind::Wdl {
                    wdl_value(raw as i8 - 2)
                } else {
                    Value(raw)
                })
            }
            None => self.tb.stored_value(pos, metric),
        }
    }
}

impl TableSource for Tablebase {
    /// For `Metric::Dtz` only the WDL class matters (zeroing moves score by WDL), so the small
    /// `.wdl` file is read; `Metric::Dtw` reads `.dtw` files.
    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, GenError> {
        let kind = if metric == Metric::Dtz {
            FileKind::Wdl
        } else {
            FileKind::Dtw
        };
        self.lookup(pos, kind).map_err(|e| match e {
            ProbeError::MissingTable { material, .. } => GenError::MissingTable(material),
            e => GenError::Source(e.to_string()),
        })
    }
}
