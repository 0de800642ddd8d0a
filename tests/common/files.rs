//! Writing tables for the tests: whole sets with the library's build driver, and files from
//! decoded sections (for tests that alter or convert stored tables).

use antitb::build::{BuildOptions, build};
use antitb::format::{Sections, TableFile, WriteOptions, write_table};
use antitb::table::Material;
use std::path::{Path, PathBuf};

/// Writes `secs` with the metadata and value width of `original` to `path` (fresh checksums).
pub fn write_like(original: &TableFile, secs: &[&[u16]], path: &Path, opts: &WriteOptions) {
    let narrow: Vec<Vec<u8>> = secs
        .iter()
        .map(|s| s.iter().map(|&x| x as u8).collect())
        .collect();
    let narrow: Vec<&[u8]> = narrow.iter().map(|v| v.as_slice()).collect();
    let sections = if original.value_width() == 1 {
        Sections::U8(&narrow)
    } else {
        Sections::U16(secs)
    };
    write_table(path, original.meta(), sections, opts).expect("write table");
}

/// Build `targets` and everything they need with the library into `dir` (a fresh directory),
/// reading existing tables from `extra`; with `dtw`, DTW files too.
pub fn build_into(dir: &Path, targets: &[Material], extra: &[PathBuf], dtw: bool) {
    let _ = std::fs::remove_dir_all(dir);
    let mut opts = BuildOptions::new(dir);
    opts.extra_dirs = extra.to_vec();
    opts.dtw = dtw;
    opts.check_disk = false;
    build(targets, &opts, &|_| {}).expect("build tables");
}

/// Every table with at most `n` pieces.
pub fn up_to(n: usize) -> Vec<Material> {
    (2..=n).flat_map(Material::all_with_pieces).collect()
}
