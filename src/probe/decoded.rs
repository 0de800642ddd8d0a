//! Whole tables decoded into memory: the generator's source of smaller tables.
//!
//! The generator looks up millions of positions in the tables it depends on, with no locality
//! a block cache could exploit well. Tables up to [`DecodedTables::MAX_SLOTS`] slots per side are
//! therefore decoded once, whole (1 byte per slot for WDL, 2 for DTW), the first time they are
//! needed; larger ones are read through their files' block caches.

use super::Tablebase;
use crate::r#gen::{GenError, TableSource};
use crate::index::Index;
use crate::material::{Material, MaterialHasher};
use crate::rules::Position;
use crate::store::{FileKind, StoredTable};
use crate::value::{Metric, Value};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, RwLock};

/// One decoded table: WDL + 2 or value codes, per side.
struct Decoded {
    index: Index,
    sides: [Vec<u16>; 2],
}

type Cache = HashMap<(Material, FileKind), Option<Arc<Decoded>>, BuildHasherDefault<MaterialHasher>>;

/// A [`TableSource`] over a [`Tablebase`] that keeps small tables decoded in memory.
pub struct DecodedTables<'a> {
    tb: &'a Tablebase,
    cache: RwLock<Cache>,
}

impl<'a> DecodedTables<'a> {
    /// Tables with more slots per side than this are not decoded whole.
    pub const MAX_SLOTS: u64 = 1 << 26;

    pub fn new(tb: &'a Tablebase) -> DecodedTables<'a> {
        DecodedTables { tb, cache: RwLock::new(Cache::default()) }
    }

    fn decoded(&self, m: Material, kind: FileKind) -> Result<Option<Arc<Decoded>>, GenError> {
        let key = (m.canonical(), kind);
        if let Some(d) = self.cache.read().expect("cache lock").get(&key) {
            return Ok(d.clone());
        }
        let t: Arc<StoredTable> = self.tb.table(key.0, kind).map_err(|e| match e {
            super::ProbeError::MissingTable { material, .. } => GenError::MissingTable(material),
            e => GenError::Source(e.to_string()),
        })?;
        let d = if t.index.size() <= Self::MAX_SLOTS {
            let side = |s| t.decode_side(s).map_err(|e| GenError::Source(e.to_string()));
            Some(Arc::new(Decoded { index: t.index.clone(), sides: [side(0)?, side(1)?] }))
        } else {
            None
        };
        self.cache.write().expect("cache lock").insert(key, d.clone());
        Ok(d)
    }
}

impl TableSource for DecodedTables<'_> {
    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, GenError> {
        let kind = if metric == Metric::Dtz { FileKind::Wdl } else { FileKind::Dtw };
        let m = Material::of_position(pos);
        match self.decoded(m, kind)? {
            Some(d) => {
                let (side, idx) = d.index.encode(pos).expect("material matches its table");
                let raw = d.sides[side][idx as usize];
                Ok(if kind == FileKind::Wdl { super::wdl_value(raw as i8 - 2) } else { Value(raw) })
            }
            None => self.tb.stored_value(pos, metric),
        }
    }
}
