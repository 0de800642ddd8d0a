//! Tables kept in memory: the [`TableSource`] of tests and of one-shot generation runs.

use super::{GenError, TableSource, generate};
use crate::rules::Position;
use crate::table::{Material, MaterialHasher, Metric, Table, Value, resolve};
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;

/// Why [`MemoryTables`] has no value for a position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum LookupError {
    /// The table of the position's material (in that metric) is not here.
    MissingTable(Material),
    /// The table is here, but its slot of the position holds no value (an invalid slot).
    NoValue { material: Material, fen: String },
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::MissingTable(m) => write!(f, "missing table {}", m.canonical()),
            LookupError::NoValue { material, fen } => {
                write!(f, "no value for {fen} in {}", material.canonical())
            }
        }
    }
}

impl std::error::Error for LookupError {}

/// A set of generated tables in memory, by canonical material and metric.
#[derive(Default)]
pub struct MemoryTables {
    tables: HashMap<(Material, Metric), Table, BuildHasherDefault<MaterialHasher>>,
}

impl MemoryTables {
    pub fn new() -> MemoryTables {
        MemoryTables::default()
    }

    pub fn insert(&mut self, table: Table) {
        self.tables.insert((table.material(), table.metric), table);
    }

    pub fn get(&self, material: Material, metric: Metric) -> Option<&Table> {
        self.tables.get(&(material.canonical(), metric))
    }

    /// Generate every table needed for `targets` (in dependency order) that is not here yet.
    pub fn generate_closure(
        &mut self,
        targets: &[Material],
        metric: Metric,
    ) -> Result<(), GenError<LookupError>> {
        for m in Material::closure(targets) {
            if self.get(m, metric).is_none() {
                let t = generate(m, metric, self, &|_| {})?;
                self.insert(t);
            }
        }
        Ok(())
    }

    /// Generate every table with at most `n` pieces.
    pub fn generate_up_to(
        &mut self,
        n: usize,
        metric: Metric,
    ) -> Result<(), GenError<LookupError>> {
        let all: Vec<Material> = (2..=n).flat_map(Material::all_with_pieces).collect();
        self.generate_closure(&all, metric)
    }

    /// The value of any position whose tables are here, resolving captures by search.
    pub fn probe(&self, pos: &Position, metric: Metric) -> Result<Value, LookupError> {
        resolve(pos, metric, &mut |p| self.stored_value(p, metric))
    }
}

impl TableSource for MemoryTables {
    type Error = LookupError;

    fn stored_value(&self, pos: &Position, metric: Metric) -> Result<Value, LookupError> {
        let m = Material::of_position(pos);
        let t = self.get(m, metric).ok_or(LookupError::MissingTable(m))?;
        t.stored(pos).ok_or_else(|| LookupError::NoValue {
            material: m,
            fen: pos.to_string(),
        })
    }
}
