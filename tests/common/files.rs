//! Writing table files from decoded sections, for tests that alter or convert stored tables.

use antitb::format::{Sections, TableFile, WriteOptions, write_table};
use std::path::Path;

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
