//! The files of one table: what each stores and how values are mapped to symbols.
//!
//! A material `M` has up to three files, each a [`crate::format`] file with two sections
//! (side to move White, Black, in the canonical orientation) indexed by [`crate::index`]:
//!
//! | file      | values                                                         |
//! |-----------|----------------------------------------------------------------|
//! | `M.wdl`   | 1 byte: WDL + 2 (0 = loss … 4 = win), SPEC.md §2                |
//! | `M.dtz`   | a symbol per position; the header's encoding maps symbols to     |
//! |           | value codes ([`Value`]: `W(n)`, `D`, `L(n)` with exact DTZ)      |
//! | `M.dtw`   | the same for DTW (SPEC.md §3)                                    |
//!
//! Only *quiet* positions are stored: valid slots whose side to move has no capture. Capture
//! positions and invalid slots are "don't care": they repeat the previous stored symbol, which
//! costs almost nothing after compression; a prober resolves captures by search first
//! (SPEC.md §4). The symbol map of DTZ/DTW files lists value codes by decreasing frequency
//! (little-endian `u16` each); symbols are 1 byte when there are at most 256 distinct values.

use crate::format::{self, FormatError, Sections, TableFile, TableMeta, WriteOptions, WriteStats};
use crate::r#gen::Table;
use crate::index::Index;
use crate::material::Material;
use crate::value::{Metric, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The kind of a table file.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FileKind {
    Wdl,
    Dtz,
    Dtw,
}

impl FileKind {
    pub const ALL: [FileKind; 3] = [FileKind::Wdl, FileKind::Dtz, FileKind::Dtw];

    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Wdl => "wdl",
            FileKind::Dtz => "dtz",
            FileKind::Dtw => "dtw",
        }
    }

    fn format_metric(self) -> format::Metric {
        match self {
            FileKind::Wdl => format::Metric::Wdl,
            FileKind::Dtz => format::Metric::Dtz,
            FileKind::Dtw => format::Metric::Dtw,
        }
    }
}

/// The file name of a table (`KQvR.dtz`).
pub fn file_name(material: Material, kind: FileKind) -> String {
    format!("{}.{}", material.canonical(), kind.extension())
}

/// Why a table file could not be written or read.
#[derive(Debug)]
pub enum StoreError {
    Format(FormatError),
    /// The file is readable but does not describe the table it is named after.
    Mismatch {
        path: PathBuf,
        what: String,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Format(e) => write!(f, "{e}"),
            StoreError::Mismatch { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<FormatError> for StoreError {
    fn from(e: FormatError) -> StoreError {
        StoreError::Format(e)
    }
}

/// Map the stored slots of `table` through `f`, repeating the previous symbol in don't-care
/// slots.
fn symbols<T: Copy + Default>(table: &Table, side: usize, f: impl Fn(u16) -> T) -> Vec<T> {
    let mut out = Vec::with_capacity(table.values[side].len());
    let mut last = T::default();
    for (idx, &code) in table.values[side].iter().enumerate() {
        if table.is_quiet(side, idx as u64) {
            last = f(code);
        }
        out.push(last);
    }
    out
}

fn meta(material: Material, kind: FileKind, index: &Index, encoding: Vec<u8>) -> TableMeta {
    TableMeta {
        material: material.to_string(),
        metric: kind.format_metric(),
        index_params: index.params(),
        encoding,
    }
}

/// Write the WDL and DTZ files of a DTZ table, or the DTW file of a DTW table, into `dir`.
pub fn write_table(
    dir: &Path,
    table: &Table,
    opts: &WriteOptions,
) -> Result<Vec<(PathBuf, WriteStats)>, StoreError> {
    let material = table.material();
    let mut written = Vec::new();
    if table.metric == Metric::Dtz {
        let wdl = [0, 1].map(|s| symbols(table, s, |c| (Value(c).wdl() + 2) as u8));
        let path = dir.join(file_name(material, FileKind::Wdl));
        let stats = format::write_table(
            &path,
            &meta(material, FileKind::Wdl, &table.index, Vec::new()),
            Sections::U8(&[&wdl[0], &wdl[1]]),
            opts,
        )?;
        written.push((path, stats));
    }
    let kind = if table.metric == Metric::Dtz {
        FileKind::Dtz
    } else {
        FileKind::Dtw
    };
    // Symbol map: value codes by decreasing frequency (ties by code), so the commonest is 0.
    let mut freq: HashMap<u16, u64> = HashMap::new();
    for side in 0..2 {
        for (idx, &code) in table.values[side].iter().enumerate() {
            if table.is_quiet(side, idx as u64) {
                *freq.entry(code).or_default() += 1;
            }
        }
    }
    let mut codes: Vec<(u16, u64)> = freq.into_iter().collect();
    codes.sort_by_key(|&(c, n)| (std::cmp::Reverse(n), c));
    let sym_of: HashMap<u16, u16> = codes
        .iter()
        .enumerate()
        .map(|(i, &(c, _))| (c, i as u16))
        .collect();
    let encoding: Vec<u8> = codes.iter().flat_map(|&(c, _)| c.to_le_bytes()).collect();
    let path = dir.join(file_name(material, kind));
    let m = meta(material, kind, &table.index, encoding);
    let stats = if codes.len() <= 256 {
        let s = [0, 1].map(|side| symbols(table, side, |c| sym_of[&c] as u8));
        format::write_table(&path, &m, Sections::U8(&[&s[0], &s[1]]), opts)?
    } else {
        let s = [0, 1].map(|side| symbols(table, side, |c| sym_of[&c]));
        format::write_table(&path, &m, Sections::U16(&[&s[0], &s[1]]), opts)?
    };
    written.push((path, stats));
    Ok(written)
}

/// One open table file of one material.
pub struct StoredTable {
    pub index: Index,
    pub kind: FileKind,
    file: TableFile,
    /// Symbol → value code (DTZ/DTW files).
    codes: Vec<u16>,
}

impl StoredTable {
    /// Open `path` as the `kind` file of `material`, checking that its header agrees.
    pub fn open(
        path: &Path,
        material: Material,
        kind: FileKind,
        opts: &format::ReadOptions,
    ) -> Result<StoredTable, StoreError> {
        let material = material.canonical();
        let file = TableFile::open_with(path, opts)?;
        let index = Index::new(material);
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
        if meta.metric != kind.format_metric() {
            return Err(mismatch(format!(
                "holds metric {}, expected {}",
                meta.metric,
                kind.extension()
            )));
        }
        if meta.index_params != index.params() {
            return Err(mismatch(
                "index parameters differ from this version's".to_string(),
            ));
        }
        if file.section_count() != 2 || (0..2).any(|s| file.section_len(s) != index.size()) {
            return Err(mismatch(format!(
                "expected 2 sections of {} values",
                index.size()
            )));
        }
        let codes: Vec<u16> = meta
            .encoding
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        if kind != FileKind::Wdl
            && (codes.is_empty() || codes.iter().any(|&c| Value::from_code(c).is_none()))
        {
            return Err(mismatch("bad value map".to_string()));
        }
        Ok(StoredTable {
            index,
            kind,
            file,
            codes,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The underlying file (checksums, sizes).
    pub fn file(&self) -> &TableFile {
        &self.file
    }

    /// Decode a stored symbol: WDL (−2..=2) for WDL files, a value code otherwise.
    fn decode(&self, raw: u16) -> Result<i32, StoreError> {
        match self.kind {
            FileKind::Wdl if raw <= 4 => Ok(i32::from(raw) - 2),
            FileKind::Wdl => Err(self.corrupt(format!("WDL symbol {raw} out of range"))),
            _ => self
                .codes
                .get(raw as usize)
                .map(|&c| i32::from(c))
                .ok_or_else(|| self.corrupt(format!("symbol {raw} outside the value map"))),
        }
    }

    fn corrupt(&self, what: String) -> StoreError {
        StoreError::Mismatch {
            path: self.path().to_path_buf(),
            what,
        }
    }

    /// The stored WDL (−2..=2) of a slot (WDL files only).
    pub fn wdl(&self, side: usize, idx: u64) -> Result<i8, StoreError> {
        debug_assert_eq!(self.kind, FileKind::Wdl);
        Ok(self.decode(self.file.get(side, idx)?)? as i8)
    }

    /// The stored value of a slot (DTZ or DTW files).
    pub fn value(&self, side: usize, idx: u64) -> Result<Value, StoreError> {
        debug_assert_ne!(self.kind, FileKind::Wdl);
        Ok(Value(self.decode(self.file.get(side, idx)?)? as u16))
    }

    /// Every slot of one side, decoded: WDL + 2 for WDL files, value codes otherwise.
    pub fn decode_side(&self, side: usize) -> Result<Vec<u16>, StoreError> {
        let raw = self.file.decode_section(side)?;
        raw.into_iter()
            .map(|r| {
                self.decode(r).map(|v| {
                    if self.kind == FileKind::Wdl {
                        (v + 2) as u16
                    } else {
                        v as u16
                    }
                })
            })
            .collect()
    }
}
