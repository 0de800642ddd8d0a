//! Probe speed: antitb's [`Tablebase`] on its ≤4-piece tables against shakmaty-syzygy on de Man's
//! reference Syzygy tables, same positions, same run, one thread.
//!
//! Positions: 60 random valid slots of every 4-piece table (567 × 60 = 34 020), side to move at
//! random, no en passant (a table slot never has an en-passant square). Many have captures and
//! are resolved by search into 3- and 2-piece tables by both probers, so every piece count up to
//! 4 is probed. The same seed gives the same positions.
//!
//! For each prober and each of WDL (`probe_wdl` / `probe_wdl_after_zeroing`) and DTZ
//! (`probe_dtz` / `probe_dtz`): the whole set twice, the second pass timed (warm: files open,
//! pages mapped, caches filled as far as they go). Prints probes per second and the ratio
//! antitb / shakmaty-syzygy; WDL results are compared as a sanity check (they must agree).
//!
//! Usage: `cargo run --release --example bench_probe -- [ANTITB_DIR] [--syzygy DIR] [--cache N]
//! [--seed S]` (defaults: /tmp/tb4, ../shared/reference/syzygy, the reader's default cache).
//! `scripts/bench-probe.sh` runs it.

use antitb::format::ReadOptions;
use antitb::probe::Tablebase;
use antitb::rules::{Color, Position, Role};
use antitb::table::{Index, Material};
use shakmaty::variant::Antichess;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

const PER_TABLE: usize = 60;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The library's conversion (one copy; see its module doc).
#[path = "../src/verify/syzygy/to_shakmaty.rs"]
mod to_shakmaty;

struct Timing {
    rate: f64,
    errors: usize,
    first_error: Option<String>,
}

/// Run `probe` over items `0..n` twice; time the second pass.
fn measure<T>(
    n: usize,
    mut probe: impl FnMut(usize) -> Result<T, String>,
) -> (Timing, Vec<Option<T>>) {
    for i in 0..n {
        let _ = black_box(probe(i));
    }
    time(n, probe)
}

/// Run `probe` over items `0..n` once, timed.
fn time<T>(
    n: usize,
    mut probe: impl FnMut(usize) -> Result<T, String>,
) -> (Timing, Vec<Option<T>>) {
    let mut out = Vec::with_capacity(n);
    let mut errors = 0;
    let mut first_error = None;
    let start = Instant::now();
    for i in 0..n {
        match black_box(probe(i)) {
            Ok(v) => out.push(Some(v)),
            Err(e) => {
                errors += 1;
                first_error.get_or_insert(e);
                out.push(None);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    (
        Timing {
            rate: n as f64 / secs.max(1e-9),
            errors,
            first_error,
        },
        out,
    )
}

fn report(name: &str, t: &Timing) {
    print!("    {name:<28} {:>10.0} probes/s", t.rate);
    if t.errors > 0 {
        print!(
            "   ({} errors, first: {})",
            t.errors,
            t.first_error.as_deref().unwrap_or("")
        );
    }
    println!();
}

/// `PER_TABLE` random valid slots of every 4-piece table, in both representations; and how many
/// shakmaty did not accept (left out).
fn positions(rng: &mut Rng) -> (Vec<Position>, Vec<Antichess>, usize) {
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut unconvertible = 0;
    for mat in Material::all_with_pieces(4) {
        let index = Index::new(mat);
        let mut got = 0;
        while got < PER_TABLE {
            let side = (rng.next() % 2) as usize;
            let Some(p) = index.decode(side, rng.next() % index.size()) else {
                continue;
            };
            got += 1;
            match to_shakmaty::to_shakmaty(&p).ok() {
                Some(s) => {
                    ours.push(p);
                    theirs.push(s);
                }
                None => unconvertible += 1,
            }
        }
    }
    (ours, theirs, unconvertible)
}

fn main() {
    let mut antitb_dir = PathBuf::from("/tmp/tb4");
    let mut syzygy_dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/syzygy");
    let mut opts = ReadOptions::default();
    let mut seed = 0x00be_5eed_u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |what: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{what} needs a value"))
        };
        match a.as_str() {
            "--syzygy" => syzygy_dir = PathBuf::from(value("--syzygy")),
            "--cache" => opts.cache_blocks = value("--cache").parse().expect("--cache N"),
            "--seed" => seed = value("--seed").parse().expect("--seed S"),
            _ if !a.starts_with("--") => antitb_dir = PathBuf::from(a),
            _ => panic!("unknown option {a}"),
        }
    }
    if !syzygy_dir.is_dir() {
        println!(
            "skipped: reference Syzygy tables not found at {}",
            syzygy_dir.display()
        );
        return;
    }

    // The positions: set A (the benchmark set) and set B (as many others, same distribution).
    let mut rng = Rng(seed);
    let (ours, theirs, skipped_a) = positions(&mut rng);
    let (ours_b, theirs_b, _) = positions(&mut rng);
    let unconvertible = skipped_a;
    let n = ours.len();
    let captures = ours.iter().filter(|p| p.has_capture()).count();
    println!(
        "{n} positions: {PER_TABLE} random slots of each of the {} 4-piece tables ({captures} with a capture, resolved by search{})",
        Material::all_with_pieces(4).len(),
        if unconvertible > 0 {
            format!("; {unconvertible} not accepted by shakmaty, left out")
        } else {
            String::new()
        }
    );
    println!("antitb tables:  {}", antitb_dir.display());
    println!("syzygy tables:  {}", syzygy_dir.display());
    println!("one thread; each set probed twice, the second pass timed");

    let tb = Tablebase::open_with(&[&antitb_dir], opts.clone()).expect("open antitb tables");
    let mut sz = shakmaty_syzygy::Tablebase::<Antichess>::new();
    let files = sz.add_directory(&syzygy_dir).expect("add Syzygy directory");
    println!(
        "antitb reader cache: {} blocks per file; syzygy files: {files}",
        opts.cache_blocks
    );

    let (a_wdl, ours_wdl) = measure(n, |i| tb.probe_wdl(&ours[i]).map_err(|e| e.to_string()));
    let (s_wdl, their_wdl) = measure(n, |i| {
        sz.probe_wdl_after_zeroing(&theirs[i])
            .map(|w| w as i8)
            .map_err(|e| e.to_string())
    });
    let (a_dtz, ours_dtz) = measure(n, |i| {
        tb.probe_dtz(&ours[i])
            .map(|v| v.signed())
            .map_err(|e| e.to_string())
    });
    let (s_dtz, _) = measure(n, |i| {
        sz.probe_dtz(&theirs[i])
            .map(|d| d.ignore_rounding().0)
            .map_err(|e| e.to_string())
    });

    // The same probers, warm, on set B: positions not seen before (the antitb block cache and
    // the page cache hold only what set A left there).
    let (a_wdl_b, _) = time(n, |i| tb.probe_wdl(&ours_b[i]).map_err(|e| e.to_string()));
    let (s_wdl_b, _) = time(n, |i| {
        sz.probe_wdl_after_zeroing(&theirs_b[i])
            .map(|w| w as i8)
            .map_err(|e| e.to_string())
    });
    let (a_dtz_b, _) = time(n, |i| {
        tb.probe_dtz(&ours_b[i])
            .map(|v| v.signed())
            .map_err(|e| e.to_string())
    });
    let (s_dtz_b, _) = time(n, |i| {
        sz.probe_dtz(&theirs_b[i])
            .map(|d| d.ignore_rounding().0)
            .map_err(|e| e.to_string())
    });
    // DTW (no Syzygy counterpart), where the directory has `.dtw` files: set A, second pass.
    let has_dtw = antitb_dir.join("KQvK.dtw").is_file();
    let a_dtw = has_dtw.then(|| {
        measure(n, |i| {
            tb.probe_dtw(&ours[i])
                .map(|v| v.signed())
                .map_err(|e| e.to_string())
        })
    });

    let both = |a: f64, b: f64| 2.0 / (1.0 / a + 1.0 / b);
    for (title, [aw, sw, ad, sd]) in [
        (
            "same positions, second pass (the benchmark)",
            [&a_wdl, &s_wdl, &a_dtz, &s_dtz],
        ),
        (
            "unseen positions (set B), files warm",
            [&a_wdl_b, &s_wdl_b, &a_dtz_b, &s_dtz_b],
        ),
    ] {
        println!("{title}:");
        println!("  WDL");
        report("antitb", aw);
        report("shakmaty-syzygy", sw);
        println!(
            "    ratio antitb / syzygy       {:>10.2}",
            aw.rate / sw.rate
        );
        println!("  DTZ");
        report("antitb (exact DTZ)", ad);
        report("shakmaty-syzygy", sd);
        println!(
            "    ratio antitb / syzygy       {:>10.2}",
            ad.rate / sd.rate
        );
        println!(
            "  WDL+DTZ (harmonic mean)       antitb {:.0}  syzygy {:.0}  ratio {:.2}",
            both(aw.rate, ad.rate),
            both(sw.rate, sd.rate),
            both(aw.rate, ad.rate) / both(sw.rate, sd.rate)
        );
    }

    if let Some((t, values)) = &a_dtw {
        println!("DTW, same positions, second pass (no Syzygy counterpart):");
        report("antitb (exact DTW)", t);
        // A fingerprint of the values, to compare two table directories' answers.
        let fingerprint = values.iter().fold(0u64, |h, v| {
            (h ^ v.map_or(u64::MAX, |x| x as u64)).wrapping_mul(0x100_0000_01b3)
        });
        println!("    values fingerprint          {fingerprint:016x}");
        println!(
            "    ratio DTW / DTZ             {:>10.2}",
            t.rate / a_dtz.rate
        );
    }

    // Sanity: the WDL of the two probers must agree, and antitb's DTZ must carry the same WDL.
    let mut wdl_mismatch = 0;
    let mut dtz_sign_mismatch = 0;
    for i in 0..n {
        if let (Some(a), Some(b)) = (ours_wdl[i].map(|w| w.to_i8()), their_wdl[i]) {
            if a != b {
                if wdl_mismatch < 5 {
                    println!("  WDL differs: {} antitb {a} syzygy {b}", ours[i]);
                }
                wdl_mismatch += 1;
            }
            if let Some(d) = ours_dtz[i]
                && d.signum() != i32::from(a.signum())
                && !(d == 0 && a == 2)
            {
                dtz_sign_mismatch += 1;
            }
        }
    }
    println!(
        "WDL agreement: {} of {n} positions differ; DTZ/WDL sign disagreements in antitb: {dtz_sign_mismatch}",
        wdl_mismatch
    );
    if wdl_mismatch > 0 || a_wdl.errors + a_dtz.errors > 0 {
        std::process::exit(1);
    }
}
