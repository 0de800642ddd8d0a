//! Reading a table's files: the header checked against the table it should be, symbols
//! decoded to WDL or distances.

use super::write::{SECTION_VALUES, sections_per_side};
use super::{SHORT_BY_SEARCH, StoreError, value_of_distance, wdl_of_symbol, wdl_symbol};
use crate::format::{self, TableFile};
use crate::table::index::INDEX_SCHEME;
use crate::table::{Index, MAX_DISTANCE, Material, Metric, Value, Wdl};
use std::path::Path;

/// One open table file of one material.
pub struct StoredTable {
    pub index: Index,
    pub metric: Metric,
    file: TableFile,
    /// First section of each side to move, if the file stores it (a side is cut into sections
    /// of [`SECTION_VALUES`] slots).
    section: [Option<usize>; 2],
    /// Sections per side.
    per_side: usize,
    /// Symbol → distance (`.dtz`/`.dtw` files).
    distances: Vec<u16>,
    /// Short DTZ values are left out of this `.dtz` file ([`SHORT_BY_SEARCH`]).
    short_by_search: bool,
}

impl StoredTable {
    /// Open `path` as the `metric` file of `material`, checking that its header agrees.
    pub fn open(
        path: &Path,
        material: Material,
        metric: Metric,
        opts: &format::ReadOptions,
    ) -> Result<StoredTable, StoreError> {
        let material = material.canonical();
        let file = TableFile::open_with(path, opts)?;
        let meta = file.meta();
        let mismatch = |what: String| StoreError::Mismatch {
            path: path.to_path_buf(),
            what,
        };
        if meta.material != material.to_string() {
            return Err(mismatch(format!(
                "holds material {}, expected {material}",
                meta.material
            )));
        }
        if meta.metric != metric {
            return Err(mismatch(format!(
                "holds metric {}, expected {}",
                meta.metric,
                metric.extension()
            )));
        }
        let scheme = meta.index_params.first().copied();
        if scheme != Some(INDEX_SCHEME) {
            return Err(mismatch(match scheme {
                Some(s) => format!(
                    "index scheme {s}, this version reads scheme {INDEX_SCHEME}: regenerate the table"
                ),
                None => "no index parameters".to_string(),
            }));
        }
        // The rest groups may come in any order (the writer picks the one that compresses
        // best); the header lists them.
        let Some(index) = Index::from_params(material, &meta.index_params) else {
            return Err(mismatch(
                "index parameters differ from this version's".to_string(),
            ));
        };
        let (mask, distances) = match metric {
            Metric::Wdl if meta.encoding.is_empty() => (3u8, Vec::new()),
            Metric::Wdl => return Err(mismatch("unexpected value map".to_string())),
            _ => {
                let e = &meta.encoding;
                // Byte 0: the stored sides, and the short-values bit (`.dtz` files only).
                if e.len() < 3
                    || e.len() % 2 != 1
                    || !matches!(e[0] & !SHORT_BY_SEARCH, 1..=3)
                    || (e[0] & SHORT_BY_SEARCH != 0 && metric != Metric::Dtz)
                {
                    return Err(mismatch("bad value map".to_string()));
                }
                let d: Vec<u16> = e[1..]
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                if d.iter().any(|&x| x > MAX_DISTANCE) {
                    return Err(mismatch("bad value map".to_string()));
                }
                (e[0], d)
            }
        };
        let short_by_search = mask & SHORT_BY_SEARCH != 0;
        let mask = mask & !SHORT_BY_SEARCH;
        let per_side = sections_per_side(index.size()) as usize;
        let mut section = [None, None];
        let mut n = 0;
        for (side, sec) in section.iter_mut().enumerate() {
            if mask >> side & 1 != 0 {
                *sec = Some(n);
                n += per_side;
            }
        }
        let len_of = |s: usize| {
            let k = (s % per_side) as u64;
            ((k + 1) * SECTION_VALUES).min(index.size()) - k * SECTION_VALUES
        };
        if file.section_count() != n || (0..n).any(|s| file.section_len(s) != len_of(s)) {
            return Err(mismatch(format!(
                "expected {n} section(s) for {} values per side",
                index.size()
            )));
        }
        Ok(StoredTable {
            index,
            metric,
            file,
            section,
            per_side,
            distances,
            short_by_search,
        })
    }

    /// Are the short DTZ values (`W(0)`, `W(1)`, `W(2)`, `L(1)`) left out of this `.dtz` file
    /// (their slots hold any distance, and a reader tells them with
    /// [`crate::table::short_dtz`])? Always `false` for other files.
    #[inline]
    pub fn short_by_search(&self) -> bool {
        self.short_by_search
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Check that this file orders its slots as `wdl`, the index of the same table's `.wdl`
    /// file: a `.dtz` or `.dtw` file takes its values' classes from there, slot by slot.
    pub fn check_index_of(&self, wdl: &Index) -> Result<(), StoreError> {
        if self.index.params() == wdl.params() {
            return Ok(());
        }
        Err(StoreError::Mismatch {
            path: self.path().to_path_buf(),
            what: format!(
                "its pieces are ordered unlike the {} file's: regenerate the table",
                Metric::Wdl.extension()
            ),
        })
    }

    /// The underlying file (checksums, sizes).
    pub fn file(&self) -> &TableFile {
        &self.file
    }

    /// Does the file store positions with `side` to move (always for `.wdl` files; `.dtz` and
    /// `.dtw` files store one side, older `.dtw` files both)?
    #[inline]
    pub fn stores_side(&self, side: usize) -> bool {
        self.section[side].is_some()
    }

    fn corrupt(&self, what: String) -> StoreError {
        StoreError::Mismatch {
            path: self.path().to_path_buf(),
            what,
        }
    }

    /// The section of slot `idx` of `side`, and the slot's place in it.
    #[inline]
    fn locate(&self, side: usize, idx: u64) -> Result<(usize, u64), StoreError> {
        let first = self.section_of(side)?;
        Ok((
            first + (idx / SECTION_VALUES) as usize,
            idx % SECTION_VALUES,
        ))
    }

    /// The raw symbols of every slot of `side`, section after section.
    fn raw_side(&self, side: usize) -> Result<Vec<u16>, StoreError> {
        let mut out = Vec::with_capacity(self.index.size() as usize);
        for k in 0..self.per_side {
            out.extend(self.raw_section(side, k)?);
        }
        Ok(out)
    }

    /// The raw symbols of section `k` of `side`.
    fn raw_section(&self, side: usize, k: usize) -> Result<Vec<u16>, StoreError> {
        let first = self.section_of(side)?;
        debug_assert!(k < self.per_side);
        Ok(self.file.decode_section(first + k)?)
    }

    /// Sections per side to move: section `k` holds slots `k * SECTION_VALUES` up to the next
    /// section's first (the last one may be shorter). A reader that cannot hold a whole side
    /// decodes them one at a time ([`StoredTable::decode_wdl_section`],
    /// [`StoredTable::decode_section`]).
    pub fn sections_per_side(&self) -> usize {
        self.per_side
    }

    /// The slots of section `k` of either side.
    pub fn section_slots(&self, k: usize) -> std::ops::Range<u64> {
        let start = k as u64 * SECTION_VALUES;
        start..(start + SECTION_VALUES).min(self.index.size())
    }

    /// Section `k` of `side` of a `.wdl` file, decoded.
    pub fn decode_wdl_section(&self, side: usize, k: usize) -> Result<Vec<Wdl>, StoreError> {
        Ok(self
            .decode_wdl_section_symbols(side, k)?
            .into_iter()
            // Checked symbols: the default never stands in.
            .map(|s| wdl_of_symbol(u16::from(s)).unwrap_or(Wdl::Draw))
            .collect())
    }

    /// Section `k` of `side` of a `.dtz`/`.dtw` file, decoded to distances.
    pub fn decode_section(&self, side: usize, k: usize) -> Result<Vec<u16>, StoreError> {
        debug_assert_ne!(self.metric, Metric::Wdl);
        self.raw_section(side, k)?
            .into_iter()
            .map(|r| self.decode(r))
            .collect()
    }

    fn section_of(&self, side: usize) -> Result<usize, StoreError> {
        self.section[side].ok_or_else(|| {
            self.corrupt(format!(
                "{} to move is not stored in this file",
                if side == 0 { "White" } else { "Black" }
            ))
        })
    }

    fn bad_wdl(&self, raw: u16) -> StoreError {
        self.corrupt(format!("WDL symbol {raw} out of range"))
    }

    /// Decode a stored symbol: WDL + 2 (0..=4) for WDL files, a distance otherwise.
    #[inline]
    fn decode(&self, raw: u16) -> Result<u16, StoreError> {
        match self.metric {
            Metric::Wdl => match wdl_of_symbol(raw) {
                Some(_) => Ok(raw),
                None => Err(self.bad_wdl(raw)),
            },
            _ => self
                .distances
                .get(raw as usize)
                .copied()
                .ok_or_else(|| self.corrupt(format!("symbol {raw} outside the value map"))),
        }
    }

    /// The stored WDL of a slot (WDL files only).
    #[inline]
    pub fn wdl(&self, side: usize, idx: u64) -> Result<Wdl, StoreError> {
        debug_assert_eq!(self.metric, Metric::Wdl);
        let (s, i) = self.locate(side, idx)?;
        let raw = self.file.get(s, i)?;
        wdl_of_symbol(raw).ok_or_else(|| self.bad_wdl(raw))
    }

    /// The stored distance of a slot (`.dtz`/`.dtw` files; meaningful only for quiet positions
    /// with a decisive WDL, see [`value_of_distance`]).
    pub fn distance(&self, side: usize, idx: u64) -> Result<u16, StoreError> {
        debug_assert_ne!(self.metric, Metric::Wdl);
        let (s, i) = self.locate(side, idx)?;
        self.decode(self.file.get(s, i)?)
    }

    /// Every slot of one side, decoded: WDL + 2 for WDL files, distances otherwise.
    pub fn decode_side(&self, side: usize) -> Result<Vec<u16>, StoreError> {
        self.raw_side(side)?
            .into_iter()
            .map(|r| self.decode(r))
            .collect()
    }

    /// Every slot of one side of a `.wdl` file, decoded.
    pub fn decode_wdl(&self, side: usize) -> Result<Vec<Wdl>, StoreError> {
        Ok(self
            .decode_wdl_symbols(side)?
            .into_iter()
            // Checked symbols: the default never stands in.
            .map(|s| wdl_of_symbol(u16::from(s)).unwrap_or(Wdl::Draw))
            .collect())
    }

    /// Section `k` of `side` of a `.wdl` file as [`StoredTable::decode_wdl_symbols`] gives it
    /// (the generator packs its dependencies' classes from these).
    pub fn decode_wdl_section_symbols(&self, side: usize, k: usize) -> Result<Vec<u8>, StoreError> {
        debug_assert_eq!(self.metric, Metric::Wdl);
        debug_assert!(k < self.per_side);
        let s = self.section_of(side)? + k;
        let part = if self.file.value_width() == 1 {
            self.file.decode_section_u8(s)?
        } else {
            // Symbols above a byte are out of range: checked below.
            let raw = self.file.decode_section(s)?;
            raw.into_iter().map(|r| r.min(255) as u8).collect()
        };
        if let Some(&bad) = part.iter().find(|&&s| s > 4) {
            return Err(self.bad_wdl(u16::from(bad)));
        }
        Ok(part)
    }

    /// Every slot of one side of a `.wdl` file as its symbol, the class + 2 (0..=4, checked):
    /// one byte a slot, each section decoded in one pass (a DTW build decodes its dependencies'
    /// classes so; [`StoredTable::decode_wdl`] widens them to [`Wdl`]).
    pub fn decode_wdl_symbols(&self, side: usize) -> Result<Vec<u8>, StoreError> {
        let mut out: Vec<u8> = Vec::new();
        for k in 0..self.per_side {
            let part = self.decode_wdl_section_symbols(side, k)?;
            // A side of one section (every table up to four pieces) is that section's
            // buffer, not a copy of it.
            if out.is_empty() {
                out = part;
                out.reserve(self.index.size() as usize - out.len());
            } else {
                out.extend_from_slice(&part);
            }
        }
        Ok(out)
    }

    /// Every slot of one side as values, from this `.dtz`/`.dtw` file and the same table's WDL
    /// (`wdl(i)` of slot `i`): draws where the WDL is a draw, and the stored distance with the
    /// WDL's sign and class elsewhere (meaningful for quiet positions only; in a `.dtz` file
    /// that leaves out short values, [`crate::table::short_dtz`] tells them).
    pub fn decode_values(
        &self,
        side: usize,
        wdl: impl Fn(usize) -> Wdl,
    ) -> Result<Vec<Value>, StoreError> {
        let symbols: Vec<u8> = (0..self.index.size() as usize)
            .map(|i| wdl_symbol(wdl(i)))
            .collect();
        Ok(self
            .decode_value_codes(side, &symbols)?
            .into_iter()
            .map(Value)
            .collect())
    }

    /// [`StoredTable::decode_values`] as value codes ([`Value::code`]), the WDL given as the
    /// symbols of [`StoredTable::decode_wdl_symbols`]: each section decoded in one pass.
    pub fn decode_value_codes(&self, side: usize, wdl: &[u8]) -> Result<Vec<u16>, StoreError> {
        debug_assert_ne!(self.metric, Metric::Wdl);
        let size = self.index.size() as usize;
        if wdl.len() != size {
            return Err(self.corrupt(format!("{} WDL classes for {size} slots", wdl.len())));
        }
        let first = self.section_of(side)?;
        let draw = Value::DRAW.code();
        let mut out: Vec<u16> = Vec::with_capacity(size);
        for k in 0..self.per_side {
            let raw = self.file.decode_section(first + k)?;
            let at = out.len();
            let classes = wdl.get(at..at + raw.len()).ok_or_else(|| {
                self.corrupt(format!("section {k} runs past the table's {size} slots"))
            })?;
            for (&r, &c) in raw.iter().zip(classes) {
                let Some(&d) = self.distances.get(usize::from(r)) else {
                    return Err(self.corrupt(format!("symbol {r} outside the value map")));
                };
                out.push(match wdl_of_symbol(u16::from(c)) {
                    None | Some(Wdl::Draw) => draw,
                    Some(w) => value_of_distance(self.metric, w, d).code(),
                });
            }
        }
        Ok(out)
    }
}
