//! Measures the storage layer: compression ratio and speed by block size and zstd level, cold
//! and warm probe latency, and the effect of how don't-care slots are filled.
//!
//! ```text
//! cargo run --release --example format_bench            # synthetic data, full sweep
//! cargo run --release --example format_bench -- --quick
//! cargo run --release --example format_bench -- --warm             # cached-probe latency only
//! cargo run --release --example format_bench -- tables/KRvK.wdl ...   # re-encode real tables
//! ```
//!
//! All compression and decoding figures are single-threaded (a one-thread rayon pool), so they
//! compare configurations rather than machines; multiply by the core count for generation.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use antitb::format::{ReadOptions, Sections, TableFile, TableMeta, WriteOptions, write_table};
use antitb::table::Metric;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
}

/// An owned table: one or two sections of one width.
enum Data {
    U8(Vec<Vec<u8>>),
    U16(Vec<Vec<u16>>),
}

impl Data {
    fn raw_bytes(&self) -> usize {
        match self {
            Data::U8(v) => v.iter().map(Vec::len).sum(),
            Data::U16(v) => 2 * v.iter().map(Vec::len).sum::<usize>(),
        }
    }
    fn write(&self, path: &Path, opts: &WriteOptions) {
        let meta = TableMeta {
            material: "bench".into(),
            metric: Metric::Wdl,
            index_params: vec![],
            encoding: vec![],
        };
        match self {
            Data::U8(v) => {
                let r: Vec<&[u8]> = v.iter().map(|s| s.as_slice()).collect();
                write_table(path, &meta, Sections::U8(&r), opts).unwrap();
            }
            Data::U16(v) => {
                let r: Vec<&[u16]> = v.iter().map(|s| s.as_slice()).collect();
                write_table(path, &meta, Sections::U16(&r), opts).unwrap();
            }
        }
    }
}

/// Runs of mostly one value: 90% of runs are value 1, mean run length ~150, 2% noise.
fn wdl_runs(n: usize) -> Vec<u8> {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let val = if r.chance(900) {
            1
        } else {
            (r.next() % 5) as u8
        };
        let run = 1 + (r.next() % 300) as usize;
        for _ in 0..run.min(n - v.len()) {
            v.push(if r.chance(20) {
                (r.next() % 5) as u8
            } else {
                val
            });
        }
    }
    v
}

fn cheb(a: usize, b: usize) -> usize {
    let (fa, ra, fb, rb) = (a % 8, a / 8, b % 8, b / 8);
    fa.abs_diff(fb).max(ra.abs_diff(rb))
}

/// Index-structured data for four pieces on squares `a b c d` (the last varies fastest, as in
/// a real index): the value is a function of distances between pieces, with 3% noise;
/// positions with two pieces on one square are don't-care slots, filled either with the
/// previous value (`fill_neighbour`) or with a distinct marker.
fn structured(dtz: bool, fill_neighbour: bool) -> Vec<u16> {
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    let n = 64 * 64 * 64 * 64;
    let mut v = Vec::with_capacity(n);
    let mut prev = 0u16;
    for i in 0..n {
        let (a, b, c, d) = (i >> 18, (i >> 12) & 63, (i >> 6) & 63, i & 63);
        if a == b || a == c || a == d || b == c || b == d || c == d {
            v.push(if fill_neighbour { prev } else { 255 });
            continue;
        }
        let wdl = if cheb(a, c) <= 1 {
            0 // loss: must capture
        } else if cheb(b, d) > 2 {
            2 // win
        } else {
            1 // draw
        };
        let mut x = if dtz {
            match wdl {
                2 => (2 * cheb(a, d) + cheb(b, c)) as u16 + 1,
                0 => 100 + cheb(b, d) as u16,
                _ => 0,
            }
        } else {
            wdl
        };
        if r.chance(30) {
            x = if dtz {
                (r.next() % 40) as u16
            } else {
                (r.next() % 3) as u16
            };
        }
        v.push(x);
        prev = x;
    }
    v
}

fn single<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(f)
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

fn sweep(name: &str, data: &Data, dir: &Path, vpbs: &[u32], levels: &[i32]) {
    println!("\n## {name}: {} raw bytes", data.raw_bytes());
    println!(
        "{:>7} {:>5} {:>10} {:>8} {:>10} {:>10} {:>9}",
        "vpb", "level", "bytes", "ratio", "comp MB/s", "dec MB/s", "cold µs"
    );
    let path = dir.join("bench.tbl");
    for &vpb in vpbs {
        for &level in levels {
            let opts = WriteOptions {
                compression: antitb::format::Compression::Zstd,
                level,
                values_per_block: vpb,
            };
            let t0 = Instant::now();
            single(|| data.write(&path, &opts));
            let tc = t0.elapsed();
            let t = TableFile::open_with(&path, &ReadOptions { cache_blocks: 0 }).unwrap();
            let t0 = Instant::now();
            single(|| {
                for s in 0..t.section_count() {
                    std::hint::black_box(t.decode_section(s).unwrap());
                }
            });
            let td = t0.elapsed();
            // Cold probe: no cache, random index, so each probe decodes one block.
            let mut r = Rng(7);
            let probes = 300;
            let t0 = Instant::now();
            for _ in 0..probes {
                let s = (r.next() as usize) % t.section_count();
                let len = t.section_len(s);
                if len > 0 {
                    std::hint::black_box(t.get(s, r.next() % len).unwrap());
                }
            }
            let cold = t0.elapsed().as_secs_f64() * 1e6 / f64::from(probes);
            println!(
                "{vpb:>7} {level:>5} {:>10} {:>8.1} {:>10.1} {:>10.0} {:>9.1}",
                t.file_len(),
                data.raw_bytes() as f64 / t.file_len() as f64,
                mbps(data.raw_bytes(), tc),
                mbps(data.raw_bytes(), td),
                cold
            );
        }
    }
}

/// Warm probes: a hot set of blocks that fits the cache, random indices within it; threads
/// either share one hot set (contending for the same cache slots) or have their own.
fn warm(dir: &Path) {
    println!("\n## warm get (all probed blocks cached)");
    let data = Data::U16(vec![structured(true, true)]);
    let path = dir.join("warm.tbl");
    data.write(&path, &WriteOptions::default());
    let t = TableFile::open_with(&path, &ReadOptions { cache_blocks: 64 }).unwrap();
    let vpb = u64::from(t.values_per_block());
    let n = 4_000_000u64;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut counts = vec![1, 2, cores];
    counts.retain(|&k| k <= cores);
    counts.dedup();
    for threads in counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for shared in [true, false] {
            // Shared: blocks 0..32 for everyone. Own: thread k uses blocks 8k..8k+8 (slots
            // never shared).
            let hot = |k: usize| {
                if shared {
                    (0, 32 * vpb)
                } else {
                    (8 * k as u64 * vpb, 8 * vpb)
                }
            };
            for k in 0..threads {
                let (lo, len) = hot(k);
                for i in (lo..lo + len).step_by(1000) {
                    t.get(0, i).unwrap();
                }
            }
            let t0 = Instant::now();
            pool.broadcast(|ctx| {
                let (lo, len) = hot(ctx.index());
                let mut r = Rng(ctx.index() as u64 * 77 + 1);
                let mut acc = 0u64;
                for _ in 0..n {
                    acc += u64::from(t.get(0, lo + r.next() % len).unwrap());
                }
                std::hint::black_box(acc);
            });
            let ns = t0.elapsed().as_secs_f64() * 1e9 / n as f64;
            let what = if shared {
                "shared hot blocks"
            } else {
                "own hot blocks"
            };
            println!("{threads:>2} thread(s), {what}: {ns:.1} ns per get");
        }
    }
    let t0 = Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(zstd::bulk::Decompressor::new().unwrap());
    }
    println!(
        "zstd decompression context creation: {:.2} µs",
        t0.elapsed().as_secs_f64() * 1e6 / 1000.0
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let files: Vec<PathBuf> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    let dir = std::env::temp_dir().join(format!("antitb-format-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (vpbs, levels): (&[u32], &[i32]) = if quick {
        (&[1 << 15], &[3, 9])
    } else {
        (
            &[1 << 12, 1 << 14, 1 << 15, 1 << 16],
            &[1, 3, 6, 9, 12, 15, 19],
        )
    };

    if args.iter().any(|a| a == "--warm") {
        warm(&dir);
    } else if files.is_empty() {
        let n = 1 << 24;
        sweep(
            "wdl-runs (u8, runs, 90% one value)",
            &Data::U8(vec![wdl_runs(n)]),
            &dir,
            vpbs,
            levels,
        );
        let narrow = |v: Vec<u16>| v.into_iter().map(|x| x as u8).collect::<Vec<u8>>();
        sweep(
            "wdl-structured (u8, 4 pieces, don't-care = neighbour)",
            &Data::U8(vec![narrow(structured(false, true))]),
            &dir,
            vpbs,
            levels,
        );
        sweep(
            "dtz-structured (u16, 4 pieces, don't-care = neighbour)",
            &Data::U16(vec![structured(true, true)]),
            &dir,
            vpbs,
            levels,
        );
        let fill_cmp: (&[u32], &[i32]) = (&[1 << 15], &[3, 9]);
        sweep(
            "wdl-structured, don't-care = distinct marker 255",
            &Data::U8(vec![narrow(structured(false, false))]),
            &dir,
            fill_cmp.0,
            fill_cmp.1,
        );
        warm(&dir);
    } else {
        for f in &files {
            let t = TableFile::open(f).unwrap();
            let data = if t.value_width() == 1 {
                Data::U8(
                    (0..t.section_count())
                        .map(|s| t.decode_section_u8(s).unwrap())
                        .collect(),
                )
            } else {
                Data::U16(
                    (0..t.section_count())
                        .map(|s| t.decode_section(s).unwrap())
                        .collect(),
                )
            };
            sweep(&f.display().to_string(), &data, &dir, vpbs, levels);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
