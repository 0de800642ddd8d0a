//! Writes text proofs again in both formats and times each writer (best of a few rounds, to
//! memory): the write half of `scripts/bench-proof-format.sh`, which times the checkers.
//!
//! ```text
//! cargo run --release --example proof_format_bench -- TEXT_PROOF...
//! ```
//!
//! (`scripts/bench-proof-format.sh` writes the binary proofs of `proofs/e3` as text for it.)
//!
//! One line per file: nodes, bytes and bytes per node of each format, and the write times;
//! the text format is the anchor (ratios binary/text).

use antitb::prove::Proof;
use std::time::{Duration, Instant};

/// Best time of `rounds` runs of `f`, and its last result.
fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..rounds {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.expect("at least one round"))
}

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: proof_format_bench PROOF_FILE...");
        std::process::exit(2);
    }
    println!(
        "{:<24} {:>9} {:>10} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7}",
        "file", "nodes", "text B", "bin B", "text B/n", "bin B/n", "text w s", "bin w s", "w ratio"
    );
    let (mut tn, mut tt, mut tb, mut wt, mut wb) = (0usize, 0usize, 0usize, 0f64, 0f64);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        let proof = Proof::from_text(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
        let nodes = proof.size();
        let rounds = if nodes < 100_000 { 5 } else { 3 };
        let (t_text, out_text) = best(rounds, || proof.to_text("bench"));
        let (t_bin, out_bin) = best(rounds, || proof.to_binary("bench").expect("writes"));
        let name = std::path::Path::new(f)
            .file_name()
            .map_or(f.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<24} {:>9} {:>10} {:>9} {:>8.2} {:>8.3} {:>9.4} {:>9.4} {:>7.2}",
            name,
            nodes,
            out_text.len(),
            out_bin.len(),
            out_text.len() as f64 / nodes as f64,
            out_bin.len() as f64 / nodes as f64,
            t_text.as_secs_f64(),
            t_bin.as_secs_f64(),
            t_bin.as_secs_f64() / t_text.as_secs_f64()
        );
        tn += nodes;
        tt += out_text.len();
        tb += out_bin.len();
        wt += t_text.as_secs_f64();
        wb += t_bin.as_secs_f64();
    }
    println!(
        "{:<24} {:>9} {:>10} {:>9} {:>8.2} {:>8.3} {:>9.4} {:>9.4} {:>7.2}",
        "all",
        tn,
        tt,
        tb,
        tt as f64 / tn as f64,
        tb as f64 / tn as f64,
        wt,
        wb,
        wb / wt
    );
}
