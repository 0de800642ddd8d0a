//! Published checksums of table files: SHA-256 in the format of `sha256sum` (`HEX  NAME` per
//! line), so a user can check a table directory with `antitb checksums --against FILE` or with
//! `sha256sum -c FILE` run inside it. Table output is deterministic (the same bytes for every
//! thread count), so a published list vouches for every file a user builds.
//!
//! `tables/CHECKSUMS` lists every table file up to 4 pieces; `scripts/checksums.sh` writes it.

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why checksums could not be computed or read.
#[derive(Debug)]
pub enum ChecksumError {
    Io(PathBuf, std::io::Error),
    /// A line of a checksum list is not `HEX  NAME`.
    BadLine {
        path: PathBuf,
        line: usize,
    },
}

impl fmt::Display for ChecksumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChecksumError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            ChecksumError::BadLine { path, line } => {
                write!(
                    f,
                    "{}:{line}: not a checksum line ('<64 hex digits>  <file name>')",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for ChecksumError {}

/// The SHA-256 of a file, as 64 lower-case hex digits.
pub fn sha256_file(path: &Path) -> Result<String, ChecksumError> {
    let io = |e| ChecksumError::Io(path.to_path_buf(), e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The SHA-256 of `bytes`, as 64 lower-case hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Is `name` a table file name (`KQvR.wdl`, `.dtz`, `.dtw`)?
pub fn is_table_file(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    matches!(ext, "wdl" | "dtz" | "dtw")
        && crate::table::Material::parse(stem).is_ok_and(|m| m.to_string() == stem)
}

/// The table files in `dir`, by name.
pub fn table_files(dir: &Path) -> Result<Vec<String>, ChecksumError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| ChecksumError::Io(dir.to_path_buf(), e))?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_table_file(n))
        .collect();
    names.sort();
    Ok(names)
}

/// SHA-256 of each named file of `dir` (in parallel), by name.
pub fn compute(dir: &Path, names: &[String]) -> Result<BTreeMap<String, String>, ChecksumError> {
    names
        .par_iter()
        .map(|n| Ok((n.clone(), sha256_file(&dir.join(n))?)))
        .collect()
}

/// `sha256sum` lines for `sums`, sorted by name.
pub fn format_list(sums: &BTreeMap<String, String>) -> String {
    sums.iter().map(|(n, h)| format!("{h}  {n}\n")).collect()
}

/// Parse a `sha256sum` list (blank lines and `#` comments allowed; a `*` before the name, binary
/// mode, is accepted).
pub fn parse_list(path: &Path) -> Result<BTreeMap<String, String>, ChecksumError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ChecksumError::Io(path.to_path_buf(), e))?;
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || ChecksumError::BadLine {
            path: path.to_path_buf(),
            line: i + 1,
        };
        let (hex, name) = line.split_once(' ').ok_or_else(bad)?;
        let name = name
            .strip_prefix(' ')
            .or_else(|| name.strip_prefix('*'))
            .ok_or_else(bad)?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) || name.is_empty() {
            return Err(bad());
        }
        out.insert(name.to_string(), hex.to_ascii_lowercase());
    }
    Ok(out)
}

/// The outcome of comparing a directory's files with a list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Files present and equal to the list.
    pub matched: Vec<String>,
    /// Files present whose checksum differs from the list.
    pub mismatched: Vec<String>,
    /// Files in the list but not in the directory.
    pub missing: Vec<String>,
    /// Files compared that the list does not name.
    pub unlisted: Vec<String>,
}

impl Comparison {
    pub fn ok(&self) -> bool {
        self.mismatched.is_empty()
    }
}

/// Compare the files `names` of `dir` with `list`; with `None`, every table file of `dir`, and
/// every file of the list counts as missing when `dir` lacks it.
pub fn compare(
    dir: &Path,
    names: Option<&[String]>,
    list: &BTreeMap<String, String>,
) -> Result<Comparison, ChecksumError> {
    let all = names.is_none();
    let names = match names {
        Some(n) => n.to_vec(),
        None => table_files(dir)?,
    };
    let (listed, unlisted): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|n| list.contains_key(n));
    let (here, gone): (Vec<String>, Vec<String>) =
        listed.into_iter().partition(|n| dir.join(n).is_file());
    let sums = compute(dir, &here)?;
    let mut c = Comparison {
        unlisted,
        ..Comparison::default()
    };
    for (n, h) in sums {
        if list[&n] == h {
            c.matched.push(n)
        } else {
            c.mismatched.push(n)
        }
    }
    c.missing = if all { missing_from(dir, list) } else { gone };
    Ok(c)
}

/// Names in `list` that have no file in `dir`.
pub fn missing_from(dir: &Path, list: &BTreeMap<String, String>) -> Vec<String> {
    list.keys()
        .filter(|n| !dir.join(n).is_file())
        .cloned()
        .collect()
}
