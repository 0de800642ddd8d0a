//! Rewrite `.dtw` files written before `.dtw` files stored one side to move (both sides, the
//! same format version, still read by every command) into today's layout, byte for byte what
//! `antitb generate` writes now: the values are read from the old file, nothing is solved again.
//! It is how `tables/CHECKSUMS` was brought to one-side `.dtw` files without regenerating the
//! 714 tables up to 4 pieces.
//!
//! Usage: `cargo run --release --example rewrite_dtw -- IN_DIR OUT_DIR`
//!
//! For every `M.dtw` in IN_DIR (with its `M.wdl`), OUT_DIR gets the new `M.dtw`; `M.wdl` is
//! linked into OUT_DIR first if it is not there (the writer takes the file's order from it).
//! Files that already store one side are copied as they are.

use antitb::format::ReadOptions;
use antitb::store::{StoreOptions, StoredTable, file_name, write_table};
use antitb::table::{Material, Metric, Table, Value};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn open(dir: &Path, m: Material, metric: Metric) -> Result<StoredTable, String> {
    let path = dir.join(file_name(m, metric));
    StoredTable::open(&path, m, metric, &ReadOptions { cache_blocks: 0 }).map_err(|e| e.to_string())
}

/// The table of `m` in memory, as the generator hands it to the writer: every quiet slot's
/// value, capture positions marked as not stored.
fn read_table(dir: &Path, m: Material) -> Result<Table, String> {
    let wdl = open(dir, m, Metric::Wdl)?;
    let dtw = open(dir, m, Metric::Dtw)?;
    dtw.check_index_of(&wdl.index).map_err(|e| e.to_string())?;
    let index = wdl.index.clone();
    let words = index.size().div_ceil(64) as usize;
    let mut values = [Vec::new(), Vec::new()];
    let mut quiet = [vec![0u64; words], vec![0u64; words]];
    for side in 0..2 {
        if !dtw.stores_side(side) {
            return Err(format!("{} stores one side already", dtw.path().display()));
        }
        let w = wdl.decode_wdl(side).map_err(|e| e.to_string())?;
        let v = dtw
            .decode_values(side, |i| w[i])
            .map_err(|e| e.to_string())?;
        let q: Vec<Option<bool>> = (0..index.size())
            .into_par_iter()
            .map(|i| index.decode(side, i).map(|p| !p.has_capture()))
            .collect();
        values[side] = v
            .iter()
            .zip(&q)
            .map(|(v, q)| match q {
                Some(_) => v.code(),
                None => Value::INVALID.code(),
            })
            .collect();
        for (i, q) in q.iter().enumerate() {
            if *q == Some(true) {
                quiet[side][i / 64] |= 1 << (i % 64);
            }
        }
    }
    Ok(Table {
        index,
        metric: Metric::Dtw,
        values,
        quiet,
    })
}

fn rewrite(input: &Path, output: &Path, m: Material) -> Result<(), String> {
    let wdl_out = output.join(file_name(m, Metric::Wdl));
    if !wdl_out.exists() {
        let wdl_in = std::fs::canonicalize(input.join(file_name(m, Metric::Wdl)))
            .map_err(|e| e.to_string())?;
        std::os::unix::fs::symlink(wdl_in, &wdl_out).map_err(|e| e.to_string())?;
    }
    let old = open(input, m, Metric::Dtw)?;
    if !(old.stores_side(0) && old.stores_side(1)) {
        std::fs::copy(old.path(), output.join(file_name(m, Metric::Dtw)))
            .map_err(|e| e.to_string())?;
        return Ok(());
    }
    let table = read_table(input, m)?;
    write_table(output, &table, &StoreOptions::default()).map_err(|e| e.to_string())?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [input, output] = &args[..] else {
        eprintln!("usage: rewrite_dtw IN_DIR OUT_DIR");
        return ExitCode::FAILURE;
    };
    let mut tables: Vec<Material> = match std::fs::read_dir(input) {
        Ok(d) => d
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".dtw").and_then(|s| s.parse().ok())
            })
            .collect(),
        Err(e) => {
            eprintln!("rewrite_dtw: {}: {e}", input.display());
            return ExitCode::FAILURE;
        }
    };
    tables.sort_by_key(|m: &Material| (m.count(), m.to_string()));
    if let Err(e) = std::fs::create_dir_all(output) {
        eprintln!("rewrite_dtw: {}: {e}", output.display());
        return ExitCode::FAILURE;
    }
    for m in &tables {
        if let Err(e) = rewrite(input, output, *m) {
            eprintln!("rewrite_dtw: {m}: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "{} .dtw files rewritten into {}",
        tables.len(),
        output.display()
    );
    ExitCode::SUCCESS
}
