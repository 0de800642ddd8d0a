//! Proof library lookups, text against binary, on the same proof in the same run: the time of
//! `ProofLibrary::get` (read the file, check it with the checker of its format, read it back
//! into a `Proof`) and the file's bytes, the text library being the anchor (ratios
//! binary/text).
//!
//! ```text
//! cargo run --release --example library_lookup_bench -- TABLES_DIR PROOF.proofb [ROUNDS]
//! ```
//!
//! The binary proof is checked first, then written back as text into a scratch library of its
//! own; each round looks the position up in both libraries (alternately), and the best and the
//! median of the rounds are reported.

use antitb::probe::Tablebase;
use antitb::prove::check_binary;
use antitb::prove::library::{ProofLibrary, Stored, write_proof};
use antitb::prove::{Proof, binary};
use std::path::Path;
use std::time::{Duration, Instant};

fn fail(message: String) -> ! {
    eprintln!("library_lookup_bench: {message}");
    std::process::exit(2);
}

/// One lookup: its time and the proof's size (the proof must be served).
fn lookup(lib: &ProofLibrary, proof: &Proof, tables: &Tablebase) -> (Duration, usize) {
    let t = Instant::now();
    let got = lib.get(&proof.root, tables);
    let elapsed = t.elapsed();
    match got {
        Stored::Proof(p) => (elapsed, p.size()),
        other => fail(format!("not served: {other:?}")),
    }
}

fn best_and_median(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (v[0].as_secs_f64(), v[v.len() / 2].as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        fail("usage: library_lookup_bench TABLES_DIR PROOF.proofb [ROUNDS]".to_string());
    }
    let rounds: usize = args
        .get(2)
        .map_or(Ok(5), |r| r.parse())
        .unwrap_or_else(|e| fail(format!("bad ROUNDS: {e}")));
    let tables = Tablebase::open(&[Path::new(&args[0])]).unwrap_or_else(|e| fail(e.to_string()));
    let bytes = std::fs::read(&args[1]).unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let checked = check_binary::check(std::io::Cursor::new(&bytes), &tables)
        .unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let read = binary::read_binary(&bytes).unwrap_or_else(|e| fail(e));

    let scratch = std::env::temp_dir().join(format!("antitb-lookup-bench-{}", std::process::id()));
    let (text_dir, bin_dir) = (scratch.join("text"), scratch.join("binary"));
    let open = |d: &Path| ProofLibrary::open(d).unwrap_or_else(|e| fail(e));
    let (text_lib, bin_lib) = (open(&text_dir), open(&bin_dir));
    write_proof(
        &text_lib.text_path(&read.proof.root),
        &read.proof,
        &read.comment,
    )
    .unwrap_or_else(|e| fail(e.to_string()));
    bin_lib
        .put(&read.proof, &read.comment)
        .unwrap_or_else(|e| fail(e));
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let text_bytes = size(&text_lib.text_path(&read.proof.root));
    let bin_bytes = size(&bin_lib.path(&read.proof.root));

    let (mut text_times, mut bin_times) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        let (t, n) = lookup(&text_lib, &read.proof, &tables);
        assert_eq!(n, checked.nodes, "the text library serves the whole proof");
        text_times.push(t);
        let (t, n) = lookup(&bin_lib, &read.proof, &tables);
        assert_eq!(
            n, checked.nodes,
            "the binary library serves the whole proof"
        );
        bin_times.push(t);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let (tb, tm) = best_and_median(text_times);
    let (bb, bm) = best_and_median(bin_times);
    println!(
        "{} nodes, {} rounds: text {} bytes, lookup best {:.3} s median {:.3} s; \
         binary {} bytes, lookup best {:.3} s median {:.3} s; ratios binary/text: bytes {:.4}, \
         best {:.2}, median {:.2}",
        checked.nodes,
        rounds.max(1),
        text_bytes,
        tb,
        tm,
        bin_bytes,
        bb,
        bm,
        bin_bytes as f64 / text_bytes as f64,
        bb / tb,
        bm / tm
    );
}
