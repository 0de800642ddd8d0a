//! What an engine does with the tables: WDL probes from inside a search, on several threads
//! sharing one [`Tablebase`] (it is `Sync`: open it once, probe it from every search thread).
//!
//! A toy alpha-beta search (material count, fewer pieces is better in antichess) runs from
//! positions with two pieces more than the tables hold; wherever it reaches a position the
//! tables cover it takes the probed WDL instead of searching on. The searches run on 1 thread,
//! then on `THREADS` threads at once (the roots dealt out): the scores must be the same.
//!
//! Then the cost of a probe alone: the positions the searches probed, probed again (about a
//! million probes, best of three) on 1 thread, then on `THREADS` threads at once (each thread
//! the whole list). Printed: ns per probe as one thread sees it, and probes per second in all.
//!
//! Usage: `cargo run --release --example engine_probe -- [TABLES] [--threads N] [--roots N]
//! [--depth N]`. `TABLES` (default `tables`) must hold every table up to some piece count; when
//! it holds none, the ≤3-piece tables (WDL and DTZ) are built into a temporary directory first.

use antitb::build::{BuildOptions, build};
use antitb::probe::{ProbeError, Tablebase};
use antitb::rules::Position;
use antitb::table::Index;
use antitb::{Error, Material, Wdl};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Score of a won position for the side to move (less the plies to it).
const WIN: i32 = 10_000;

/// What search threads found: root scores (by root number), nodes, the positions probed.
#[derive(Default)]
struct Searched {
    scores: Vec<(usize, i32)>,
    nodes: u64,
    probed: Vec<Position>,
}

/// Can the tables answer `pos`? Both sides have pieces, and it has at most as many pieces as
/// the tables, or one more with a capture to play (the probe resolves captures).
fn fits(tb: &Tablebase, pos: &Position) -> bool {
    let n = pos.piece_count();
    let max = tb.max_pieces();
    !pos.us().is_empty()
        && !pos.them().is_empty()
        && (n <= max || (n == max + 1 && pos.has_capture()))
}

/// The score of a probed WDL for the side to move: wins beat draws beat losses; cursed wins
/// and blessed losses are draws under the 50-move rule but better or worse than one.
fn wdl_score(wdl: Wdl, ply: i32) -> i32 {
    match wdl {
        Wdl::Win => WIN - ply,
        Wdl::CursedWin => 1,
        Wdl::Draw => 0,
        Wdl::BlessedLoss => -1,
        Wdl::Loss => ply - WIN,
    }
}

/// Negamax with alpha-beta; table positions are leaves.
fn search(
    tb: &Tablebase,
    pos: &Position,
    depth: u32,
    ply: i32,
    mut alpha: i32,
    beta: i32,
    out: &mut Searched,
) -> Result<i32, ProbeError> {
    out.nodes += 1;
    let moves = pos.legal_moves();
    if moves.is_empty() {
        // No piece or no move: the side to move has won.
        return Ok(WIN - ply);
    }
    if ply > 0 && fits(tb, pos) {
        out.probed.push(*pos);
        return Ok(wdl_score(tb.probe_wdl(pos)?, ply));
    }
    if depth == 0 {
        return Ok(pos.them().count() as i32 - pos.us().count() as i32);
    }
    for m in moves.iter() {
        let score = -search(tb, &pos.after(m), depth - 1, ply + 1, -beta, -alpha, out)?;
        if score > alpha {
            alpha = score;
            if alpha >= beta {
                break;
            }
        }
    }
    Ok(alpha)
}

/// `n` valid positions with `pieces` pieces, spread over the materials and their slots by a
/// multiplicative hash (deterministic: the same roots every run).
fn roots(n: usize, pieces: usize) -> Vec<Position> {
    let materials = Material::all_with_pieces(pieces);
    let mut out = Vec::with_capacity(n);
    let mut k: u64 = 0;
    while out.len() < n {
        k += 1;
        let h = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let index = Index::new(materials[(h >> 40) as usize % materials.len()]);
        if let Some(p) = index.decode((k % 2) as usize, (h >> 7) % index.size()) {
            out.push(p);
        }
    }
    out
}

/// Search every root on `threads` threads at once (root `i` on thread `i % threads`).
fn search_all(
    tb: &Tablebase,
    roots: &[Position],
    depth: u32,
    threads: usize,
) -> Result<(Vec<i32>, Searched, f64), ProbeError> {
    let start = Instant::now();
    let parts: Vec<Result<Searched, ProbeError>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut out = Searched::default();
                    for (i, root) in roots.iter().enumerate().skip(t).step_by(threads) {
                        let score = search(tb, root, depth, 0, -WIN - 1, WIN + 1, &mut out)?;
                        out.scores.push((i, score));
                    }
                    Ok(out)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("search thread"))
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut scores = vec![0; roots.len()];
    let mut all = Searched::default();
    for part in parts {
        let out = part?;
        for (i, v) in out.scores {
            scores[i] = v;
        }
        all.nodes += out.nodes;
        all.probed.extend(out.probed);
    }
    Ok((scores, all, secs))
}

/// Probe every position of `list`, `rounds` times, on each of `threads` threads at once; the
/// wall time.
fn probe_all(
    tb: &Tablebase,
    list: &[Position],
    rounds: usize,
    threads: usize,
) -> Result<f64, ProbeError> {
    let start = Instant::now();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    for _ in 0..rounds {
                        for p in list {
                            black_box(tb.probe_wdl(black_box(p))?);
                        }
                    }
                    Ok::<(), ProbeError>(())
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().expect("probe thread"))
    })?;
    Ok(start.elapsed().as_secs_f64())
}

/// The best of three wall times of [`probe_all`] (the machine may be busy with other work).
fn best_of_3(
    tb: &Tablebase,
    list: &[Position],
    rounds: usize,
    threads: usize,
) -> Result<f64, ProbeError> {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        best = best.min(probe_all(tb, list, rounds, threads)?);
    }
    Ok(best)
}

/// The directory to probe: `dir` if it holds tables (`false`), else the ≤3-piece tables built
/// now into a temporary directory (`true`).
fn tables(dir: &Path) -> Result<(PathBuf, bool), Error> {
    if Tablebase::open(&[dir]).is_ok_and(|tb| tb.max_pieces() >= 2) {
        return Ok((dir.to_path_buf(), false));
    }
    let tmp = std::env::temp_dir().join(format!("antitb-engine-probe-{}", std::process::id()));
    eprintln!(
        "no tables in {}: building the ≤3-piece tables into {}",
        dir.display(),
        tmp.display()
    );
    let all: Vec<Material> = (2..=3).flat_map(Material::all_with_pieces).collect();
    build(&all, &BuildOptions::new(&tmp), &|_| {})?;
    Ok((tmp, true))
}

fn main() -> Result<(), Error> {
    let mut dir = PathBuf::from("tables");
    let (mut threads, mut n_roots, mut depth) = (2usize, 200usize, 4u32);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut number = |what: &str| -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} needs a number"))
        };
        match a.as_str() {
            "--threads" => threads = number("--threads").max(1),
            "--roots" => n_roots = number("--roots").max(1),
            "--depth" => depth = number("--depth") as u32,
            _ => dir = PathBuf::from(a),
        }
    }
    let (dir, temporary) = tables(&dir)?;
    let result = run(&dir, threads, n_roots, depth);
    if temporary {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn run(dir: &Path, threads: usize, n_roots: usize, depth: u32) -> Result<(), Error> {
    let tb = Tablebase::open(&[dir])?;
    let pieces = tb.max_pieces() as usize + 2;
    let roots = roots(n_roots, pieces);
    println!(
        "tables up to {} pieces in {}; {} roots with {pieces} pieces, depth {depth}",
        tb.max_pieces(),
        dir.display(),
        roots.len()
    );

    // The search, on one thread and then on several sharing the tablebase.
    let (one, searched, t1) = search_all(&tb, &roots, depth, 1)?;
    let (many, _, tn) = search_all(&tb, &roots, depth, threads)?;
    assert_eq!(one, many, "the same scores whatever the threads");
    let won = one.iter().filter(|&&s| s > WIN / 2).count();
    let lost = one.iter().filter(|&&s| s < -WIN / 2).count();
    println!(
        "search: {} nodes, {} WDL probes; {won} roots won, {lost} lost; {:.2} s on 1 thread, {:.2} s on {threads} (same scores)",
        searched.nodes,
        searched.probed.len(),
        t1,
        tn
    );

    // The probes alone: the same positions, warm (files open and mapped), repeated to about a
    // million probes per thread and timed three times.
    let list = &searched.probed;
    if list.is_empty() {
        println!("no probes to time (more roots or depth?)");
        return Ok(());
    }
    let rounds = 1_000_000usize.div_ceil(list.len());
    probe_all(&tb, list, 1, 1)?;
    let n = (rounds * list.len()) as f64;
    let w1 = best_of_3(&tb, list, rounds, 1)?;
    let wn = best_of_3(&tb, list, rounds, threads)?;
    let ns1 = w1 * 1e9 / n;
    let nsn = wn * 1e9 / n;
    println!(
        "probe_wdl: {ns1:.0} ns per probe on 1 thread ({:.2} M probes/s); {nsn:.0} ns per probe \
         and thread on {threads} threads at once ({:.2} M probes/s in all, {:.2}x one thread)",
        n / w1 / 1e6,
        threads as f64 * n / wn / 1e6,
        (threads as f64 * n / wn) / (n / w1)
    );
    Ok(())
}
