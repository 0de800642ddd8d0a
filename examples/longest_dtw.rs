//! The longest DTW win of every piece count in a table directory, with its position: reads
//! every table's `.wdl` and `.dtw` files (nothing is generated) and scans every stored
//! position, both sides to move (the side a `.dtw` file leaves out by one ply of search, as a
//! prober reads it). `antitb stats MATERIAL` gives the same per table.
//!
//! Usage: `cargo run --release --example longest_dtw -- DIR`

use antitb::format::ReadOptions;
use antitb::probe::Tablebase;
use antitb::store::{StoredTable, file_name};
use antitb::table::{Material, Metric};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

fn open(dir: &Path, m: Material, kind: Metric) -> StoredTable {
    let path = dir.join(file_name(m, kind));
    StoredTable::open(&path, m, kind, &ReadOptions { cache_blocks: 0 })
        .unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: longest_dtw DIR"));
    let mut tables: Vec<Material> = std::fs::read_dir(&dir)
        .expect("read dir")
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".dtw").and_then(|s| s.parse().ok())
        })
        .collect();
    tables.sort_by_key(|m: &Material| (m.count(), m.to_string()));
    let tb = Tablebase::open_with(
        std::slice::from_ref(&dir),
        ReadOptions { cache_blocks: 1024 },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // piece count -> (plies, fen, material)
    let mut best: BTreeMap<usize, (u16, String, Material)> = BTreeMap::new();
    for m in tables {
        let wdl = open(&dir, m, Metric::Wdl);
        let dtw = open(&dir, m, Metric::Dtw);
        dtw.check_index_of(&wdl.index).expect("one index");
        let index = &wdl.index;
        for side in 0..2 {
            let w = wdl.decode_wdl(side).expect("decode");
            let d = dtw
                .stores_side(side)
                .then(|| dtw.decode_values(side, |i| w[i]).expect("decode"));
            let top = (0..index.size())
                .into_par_iter()
                .filter(|&i| w[i as usize].is_win())
                .filter_map(|i| {
                    let pos = index.decode(side, i)?;
                    if pos.has_capture() {
                        return None;
                    }
                    let v = match &d {
                        Some(d) => d[i as usize],
                        None => tb.probe_dtw(&pos).expect("probe").value(),
                    };
                    Some((v.distance(), std::cmp::Reverse(i)))
                })
                .max();
            if let Some((plies, std::cmp::Reverse(i))) = top {
                let e = best.entry(m.count()).or_insert((0, String::new(), m));
                if plies > e.0 {
                    let fen = index.decode(side, i).expect("valid").to_string();
                    *e = (plies, fen, m);
                }
            }
        }
    }
    for (pieces, (plies, fen, m)) in best {
        println!("{pieces} pieces: longest DTW win {plies} plies ({m}): {fen}");
    }
}
