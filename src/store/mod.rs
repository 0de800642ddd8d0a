//! The files of one table: what each stores and how values are mapped to symbols.
//!
//! A material `M` has up to three files, each a [`crate::format`] file indexed by
//! [`crate::table`] (sections: one per stored side to move, in the canonical orientation):
//!
//! | file      | sections        | values                                                    |
//! |-----------|-----------------|-----------------------------------------------------------|
//! | `M.wdl`   | White, Black    | 1 byte: WDL + 2 (0 = loss … 4 = win), SPEC.md §2           |
//! | `M.dtz`   | one side only   | a symbol per position: the DTZ *distance* `n` of `W(n)` / `L(n)`, less 100 for cursed wins and blessed losses |
//! | `M.dtw`   | White, Black    | a symbol per position: the DTW distance                   |
//!
//! The sign and class of a DTZ or DTW value come from the `.wdl` file (DTW wins and losses are
//! exactly the WDL wins and losses, cursed and blessed included, as the 50-move rule only
//! decides *how* a won game is won), so `.dtz`/`.dtw` files hold distances only, and draws are
//! "don't care". `.dtz` files hold **one side to move**, whichever compresses smaller; the DTZ
//! of the other side is exact all the same, by one ply of search: every move of that side leads
//! to the stored side or is a zeroing move scored by WDL (SPEC.md §2). See [`crate::probe`].
//!
//! Only *quiet* decisive positions are stored: valid slots whose side to move has no capture
//! (plus, in `.dtz`/`.dtw`, a decisive WDL). Everything else is "don't care" and repeats the
//! previous stored symbol, which costs almost nothing after compression; a prober resolves
//! captures by search first (SPEC.md §4).
//!
//! Codecs ([`StoreOptions`]): `.wdl` and `.dtz` files use the pairs codec (format version 3),
//! which a probe decodes in a fraction of a microsecond; `.dtw` files, probed only for analysis
//! and the largest by far, use zstd blocks (format version 2), about 20 % smaller on their long
//! and varied distances.
//!
//! The *value encoding* header field of `.dtz`/`.dtw` files: byte 0 is a bit set of the
//! stored sides (bit 0 White, bit 1 Black; the file has one section per bit, White's first),
//! then the distance of each symbol (little-endian `u16` each), commonest first. Symbols are
//! 1 byte when there are at most 256 distinct distances, else 2.

use crate::format::{
    self, Compression, FormatError, Sections, TableFile, TableMeta, WriteOptions, WriteStats,
};
use crate::table::{Index, Material, Metric, Table, Value};
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

/// How table files are written, per kind of file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreOptions {
    /// `.wdl` files: what an engine probes in its search, so the fast pairs codec.
    pub wdl: WriteOptions,
    /// `.dtz` files: probed at the root and along lines, a one-ply search for the unstored
    /// side; the pairs codec too.
    pub dtz: WriteOptions,
    /// `.dtw` files: analysis only, and the largest; zstd, which makes them smaller.
    pub dtw: WriteOptions,
}

/// Bytes per block of `.wdl` files (pairs codec). Larger blocks make smaller files and slower
/// probes: with 512-byte blocks the ≤4-piece `.wdl` + `.dtz` files were 3.4 % smaller, but WDL
/// probes fell from 2.7x to 1.05x Syzygy's rate and DTZ probes (whose one-ply search reads the
/// WDL of every child) to 0.27x. See `src/format/pairs.rs`.
pub const WDL_BLOCK_BYTES: u32 = 128;
/// Bytes per block of `.dtz` files (pairs codec).
pub const DTZ_BLOCK_BYTES: u32 = 128;

/// Default `.dtw` values per block; see `examples/size_lab.rs` and tables/FORMAT.md.
pub const DTW_VALUES_PER_BLOCK: u32 = 1 << 14;
/// Default zstd level of `.dtw` files.
pub const DTW_LEVEL: i32 = 15;

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            wdl: WriteOptions::pairs_with(WDL_BLOCK_BYTES),
            dtz: WriteOptions::pairs_with(DTZ_BLOCK_BYTES),
            dtw: WriteOptions {
                compression: Compression::Zstd,
                level: DTW_LEVEL,
                values_per_block: DTW_VALUES_PER_BLOCK,
            },
        }
    }
}

/// How don't-care slots are filled.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fill {
    /// Repeat the previous stored symbol (best for zstd, measured).
    Previous,
    /// A gap between stored symbols `a` and `b` becomes `a…a b…b`, switching to `b` where the
    /// slot one row up (8 slots back: the last piece one rank lower) stops being `a`. Rows
    /// then repeat more often, which the pairs codec turns into shared symbols: 7.5 % smaller
    /// `.wdl` and 4.7 % smaller `.dtz` data than `Previous` on KRvKN KPvKP BBvNN KQvRB RNPvK.
    Rows,
}

impl Fill {
    /// The fill that suits the codec `opts` writes with.
    fn suiting(opts: &WriteOptions) -> Fill {
        match opts.compression {
            Compression::Pairs { .. } => Fill::Rows,
            Compression::Zstd => Fill::Previous,
        }
    }
}

/// Slots back to the same square of the last piece one rank lower (the index's last digit is
/// a square, 8 per rank).
const ROW: usize = 8;

/// Map the slots of one side through `f` (`None` = don't care), filling don't-care slots as
/// `fill` says.
fn symbols<T: Copy + Default + PartialEq>(
    table: &Table,
    side: usize,
    fill: Fill,
    f: impl Fn(u64, u16) -> Option<T>,
) -> Vec<T> {
    let values = &table.values[side];
    let at = |i: usize| f(i as u64, values[i]);
    let mut out = Vec::with_capacity(values.len());
    let mut last = None;
    let mut i = 0;
    while i < values.len() {
        if let Some(v) = at(i) {
            last = Some(v);
            out.push(v);
            i += 1;
            continue;
        }
        // A gap `i..end`, then `next` (if any).
        let end = (i..values.len())
            .find(|&j| at(j).is_some())
            .unwrap_or(values.len());
        let next = (end < values.len()).then(|| at(end)).flatten();
        let a = match fill {
            Fill::Previous => last.unwrap_or_default(),
            Fill::Rows => last.or(next).unwrap_or_default(),
        };
        let b = next.unwrap_or(a);
        let mut switched = fill == Fill::Previous || a == b;
        for j in i..end {
            if !switched && j >= ROW && out[j - ROW] != a {
                switched = true;
            }
            out.push(if switched && fill == Fill::Rows { b } else { a });
        }
        i = end;
    }
    out
}

/// The number a `.dtz`/`.dtw` file stores for a value: its distance (less 100 for DTZ cursed
/// wins and blessed losses, whose class the `.wdl` file gives), `None` for a draw.
fn stored_distance(kind: FileKind, v: Value) -> Option<u16> {
    if v.is_draw() {
        return None;
    }
    let d = v.distance();
    Some(if kind == FileKind::Dtz && d > 100 {
        d - 100
    } else {
        d
    })
}

/// The value a `.dtz`/`.dtw` distance stands for, given the position's WDL (non-zero).
#[inline]
pub fn value_of_distance(kind: FileKind, wdl: i8, d: u16) -> Value {
    let d = if kind == FileKind::Dtz && (wdl == 1 || wdl == -1) {
        d + 100
    } else {
        d
    };
    if wdl > 0 {
        Value::win(d)
    } else {
        Value::loss(d)
    }
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
    opts: &StoreOptions,
) -> Result<Vec<(PathBuf, WriteStats)>, StoreError> {
    let material = table.material();
    let mut written = Vec::new();
    if table.metric == Metric::Dtz {
        let wdl = [0, 1].map(|s| {
            symbols(table, s, Fill::suiting(&opts.wdl), |idx, c| {
                table.is_quiet(s, idx).then(|| (Value(c).wdl() + 2) as u8)
            })
        });
        let path = dir.join(file_name(material, FileKind::Wdl));
        let stats = format::write_table(
            &path,
            &meta(material, FileKind::Wdl, &table.index, Vec::new()),
            Sections::U8(&[&wdl[0], &wdl[1]]),
            &opts.wdl,
        )?;
        written.push((path, stats));
    }
    let kind = if table.metric == Metric::Dtz {
        FileKind::Dtz
    } else {
        FileKind::Dtw
    };
    let stored = |side: usize, idx: u64, code: u16| {
        if table.is_quiet(side, idx) {
            stored_distance(kind, Value(code))
        } else {
            None
        }
    };
    // Symbol map: distances by decreasing frequency (ties by distance), so the commonest is 0.
    let mut freq: HashMap<u16, u64> = HashMap::new();
    for side in 0..2 {
        for (idx, &code) in table.values[side].iter().enumerate() {
            if let Some(d) = stored(side, idx as u64, code) {
                *freq.entry(d).or_default() += 1;
            }
        }
    }
    let mut dists: Vec<(u16, u64)> = freq.into_iter().collect();
    dists.sort_by_key(|&(d, n)| (std::cmp::Reverse(n), d));
    if dists.is_empty() {
        dists.push((0, 0));
    }
    let sym_of: HashMap<u16, u16> = dists
        .iter()
        .enumerate()
        .map(|(i, &(d, _))| (d, i as u16))
        .collect();
    let map: Vec<u8> = dists.iter().flat_map(|&(d, _)| d.to_le_bytes()).collect();
    let path = dir.join(file_name(material, kind));
    let encoding =
        |sides: u8| -> Vec<u8> { std::iter::once(sides).chain(map.iter().copied()).collect() };
    let wide = dists.len() > 256;
    let fill = Fill::suiting(if kind == FileKind::Dtz {
        &opts.dtz
    } else {
        &opts.dtw
    });
    let syms: [Vec<u16>; 2] = [0, 1].map(|s| {
        symbols(table, s, fill, |idx, c| {
            stored(s, idx, c).map(|d| sym_of[&d])
        })
    });
    let narrow: [Vec<u8>; 2] = [0, 1].map(|s| syms[s].iter().map(|&x| x as u8).collect());
    // The file holding the sections `which` of the symbol arrays, compressed.
    let encode = |which: &[usize]| -> Result<format::Encoded, StoreError> {
        let mask = which.iter().fold(0u8, |m, &s| m | 1 << s);
        let m = meta(material, kind, &table.index, encoding(mask));
        let u8s: Vec<&[u8]> = which.iter().map(|&s| narrow[s].as_slice()).collect();
        let u16s: Vec<&[u16]> = which.iter().map(|&s| syms[s].as_slice()).collect();
        let sections = if wide {
            Sections::U16(&u16s)
        } else {
            Sections::U8(&u8s)
        };
        let o = if kind == FileKind::Dtz {
            &opts.dtz
        } else {
            &opts.dtw
        };
        Ok(format::encode_table(&path, &m, sections, o)?)
    };
    let encoded = if kind == FileKind::Dtz {
        // One side: whichever compresses smaller (White on a tie).
        let (white, black) = (encode(&[0])?, encode(&[1])?);
        if black.file_len() < white.file_len() {
            black
        } else {
            white
        }
    } else {
        encode(&[0, 1])?
    };
    let stats = format::write_encoded(&path, &encoded)?;
    written.push((path, stats));
    Ok(written)
}

/// One open table file of one material.
pub struct StoredTable {
    pub index: Index,
    pub kind: FileKind,
    file: TableFile,
    /// Section of each side to move, if the file stores it.
    section: [Option<usize>; 2],
    /// Symbol → distance (`.dtz`/`.dtw` files).
    distances: Vec<u16>,
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
        let (mask, distances) = match kind {
            FileKind::Wdl if meta.encoding.is_empty() => (3u8, Vec::new()),
            FileKind::Wdl => return Err(mismatch("unexpected value map".to_string())),
            _ => {
                let e = &meta.encoding;
                if e.len() < 3 || e.len() % 2 != 1 || !matches!(e[0], 1..=3) {
                    return Err(mismatch("bad value map".to_string()));
                }
                let d: Vec<u16> = e[1..]
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect();
                if d.iter().any(|&x| x > crate::table::MAX_DISTANCE) {
                    return Err(mismatch("bad value map".to_string()));
                }
                (e[0], d)
            }
        };
        if kind == FileKind::Dtw && mask != 3 {
            return Err(mismatch("a .dtw file must store both sides".to_string()));
        }
        let mut section = [None, None];
        let mut n = 0;
        for (side, sec) in section.iter_mut().enumerate() {
            if mask >> side & 1 != 0 {
                *sec = Some(n);
                n += 1;
            }
        }
        if file.section_count() != n || (0..n).any(|s| file.section_len(s) != index.size()) {
            return Err(mismatch(format!(
                "expected {n} section(s) of {} values",
                index.size()
            )));
        }
        Ok(StoredTable {
            index,
            kind,
            file,
            section,
            distances,
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

    /// Does the file store positions with `side` to move (always, but for `.dtz` files)?
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

    fn section_of(&self, side: usize) -> Result<usize, StoreError> {
        self.section[side].ok_or_else(|| {
            self.corrupt(format!(
                "{} to move is not stored in this file",
                if side == 0 { "White" } else { "Black" }
            ))
        })
    }

    /// Decode a stored symbol: WDL + 2 (0..=4) for WDL files, a distance otherwise.
    #[inline]
    fn decode(&self, raw: u16) -> Result<u16, StoreError> {
        match self.kind {
            FileKind::Wdl if raw <= 4 => Ok(raw),
            FileKind::Wdl => Err(self.corrupt(format!("WDL symbol {raw} out of range"))),
            _ => self
                .distances
                .get(raw as usize)
                .copied()
                .ok_or_else(|| self.corrupt(format!("symbol {raw} outside the value map"))),
        }
    }

    /// The stored WDL (−2..=2) of a slot (WDL files only).
    pub fn wdl(&self, side: usize, idx: u64) -> Result<i8, StoreError> {
        debug_assert_eq!(self.kind, FileKind::Wdl);
        Ok(self.decode(self.file.get(side, idx)?)? as i8 - 2)
    }

    /// The stored distance of a slot (`.dtz`/`.dtw` files; meaningful only for quiet positions
    /// with a decisive WDL, see [`value_of_distance`]).
    pub fn distance(&self, side: usize, idx: u64) -> Result<u16, StoreError> {
        debug_assert_ne!(self.kind, FileKind::Wdl);
        let s = self.section_of(side)?;
        self.decode(self.file.get(s, idx)?)
    }

    /// Every slot of one side, decoded: WDL + 2 for WDL files, distances otherwise.
    pub fn decode_side(&self, side: usize) -> Result<Vec<u16>, StoreError> {
        let s = self.section_of(side)?;
        let raw = self.file.decode_section(s)?;
        raw.into_iter().map(|r| self.decode(r)).collect()
    }

    /// Every slot of one side as values, from this `.dtz`/`.dtw` file and the same table's WDL
    /// (`wdl(i)` of slot `i`, −2..=2): draws where the WDL is a draw, and the stored distance
    /// with the WDL's sign and class elsewhere (meaningful for quiet positions only).
    pub fn decode_values(
        &self,
        side: usize,
        wdl: impl Fn(usize) -> i8,
    ) -> Result<Vec<Value>, StoreError> {
        let d = self.decode_side(side)?;
        Ok(d.iter()
            .enumerate()
            .map(|(i, &d)| {
                let w = wdl(i);
                if w == 0 {
                    Value::DRAW
                } else {
                    value_of_distance(self.kind, w, d)
                }
            })
            .collect())
    }
}
