//! Size lab: bytes on disk and block decode time of tables under other storage options.
//!
//! Generates each MATERIAL in memory (its smaller tables are read from DIR, which must hold
//! them), writes it with every option set below into a scratch directory with
//! [`antitb::store::write_table`] (exactly what `antitb generate` writes, but for the options),
//! and prints the sizes of the `.wdl` and `.dtz` files, their sum over all materials, the
//! Syzygy reference files' size for the same materials, and the mean time to decode one block
//! (what a probe that misses the block cache pays).
//!
//! Usage: `cargo run --release --example size_lab -- DIR MATERIAL... [--syzygy DIR]`
//! (for example `/tmp/tb4 KRvKN KPvKP BBvNN KQvRB`). The defaults of `src/store/` were
//! chosen with it.
//!
//! With `--dtw`, it solves each MATERIAL's DTW instead and writes its `.dtw` file at several
//! zstd levels (DIR's `M.wdl` is linked into the scratch directory first, so the file takes
//! the order `antitb generate` gives it), and prints bytes, write time (the whole
//! `write_table`: sizing both sides, then encoding the side kept) and cold block decode time.

use antitb::build::DecodedTables;
use antitb::format::{Compression, ReadOptions, TableFile, WriteOptions};
use antitb::r#gen::generate;
use antitb::probe::Tablebase;
use antitb::store::{StoreOptions, file_name, write_table};
use antitb::table::{Material, Metric};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Zstd at `(values per block, level)`, or the pairs codec in blocks of `level` bytes for
/// `(0, level)`.
fn opts(wdl: (u32, i32), dtz: (u32, i32)) -> StoreOptions {
    let w = |(values_per_block, level)| match values_per_block {
        0 => WriteOptions::pairs_with(level as u32),
        _ => WriteOptions {
            compression: Compression::Zstd,
            level,
            values_per_block,
        },
    };
    StoreOptions {
        wdl: w(wdl),
        dtz: w(dtz),
        ..StoreOptions::default()
    }
}

/// Mean nanoseconds to read one value at each of 400 places spread over the file's first
/// section, with no block cache (every read decodes its block), after a first pass that checks
/// the block checksums.
fn decode_ns(path: &Path) -> f64 {
    let f = TableFile::open_with(path, &ReadOptions { cache_blocks: 0 }).expect("open");
    let len = f.section_len(0);
    let step = (len / 400).max(1);
    for i in (0..len).step_by(step as usize) {
        std::hint::black_box(f.get(0, i).expect("read"));
    }
    let t = Instant::now();
    let mut n = 0;
    for i in (0..len).step_by(step as usize) {
        std::hint::black_box(f.get(0, i).expect("read"));
        n += 1;
    }
    t.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// `--dtw`: the `.dtw` file of every material (its smaller tables read from `source`, its
/// `.wdl` file from `dir`) written into `scratch` at the zstd levels `LEVELS`.
fn dtw_levels(dir: &Path, source: &DecodedTables, scratch: &Path, materials: &[Material]) {
    const LEVELS: [i32; 6] = [7, 9, 11, 12, 13, 15];
    let mut totals = [(0u64, 0.0f64, 0.0f64); LEVELS.len()];
    for &m in materials {
        let table = generate(m, Metric::Dtw, source, &|_| {}).expect("generate");
        let m = m.canonical();
        let wdl = file_name(m, Metric::Wdl);
        std::fs::copy(dir.join(&wdl), scratch.join(&wdl)).expect("copy .wdl");
        let path = scratch.join(file_name(m, Metric::Dtw));
        print!("{m}:");
        for (i, &level) in LEVELS.iter().enumerate() {
            let mut o = StoreOptions::default();
            o.dtw.level = level;
            let t = Instant::now();
            write_table(scratch, &table, &o).expect("write");
            let secs = t.elapsed().as_secs_f64();
            let bytes = std::fs::metadata(&path).map_or(0, |x| x.len());
            let ns = decode_ns(&path);
            print!("  L{level} {bytes} B {secs:.2} s {ns:.0} ns");
            let t = &mut totals[i];
            *t = (t.0 + bytes, t.1 + secs, t.2 + ns);
        }
        println!();
    }
    let base = totals[LEVELS.len() - 1];
    for (level, (bytes, secs, ns)) in LEVELS.iter().zip(totals) {
        println!(
            "TOTAL level {level:2}: {bytes:>11} B ({:.3}x), write {secs:7.2} s ({:.2}x), mean decode {:.0} ns",
            bytes as f64 / base.0 as f64,
            secs / base.1,
            ns / materials.len() as f64
        );
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let dtw = match args.iter().position(|a| a == "--dtw") {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    };
    let syzygy = match args.iter().position(|a| a == "--syzygy") {
        Some(i) => {
            let d = args.remove(i + 1);
            args.remove(i);
            PathBuf::from(d)
        }
        None => PathBuf::from("../shared/reference/syzygy"),
    };
    let dir = PathBuf::from(&args[0]);
    let materials: Vec<Material> = args[1..]
        .iter()
        .map(|s| s.parse().expect("material"))
        .collect();
    let tb = Tablebase::open(&[&dir]).expect("open tables");
    let source = DecodedTables::new(&tb);
    let scratch = std::env::temp_dir().join(format!("antitb-size-lab-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    if dtw {
        dtw_levels(&dir, &source, &scratch, &materials);
        let _ = std::fs::remove_dir_all(&scratch);
        return;
    }
    let variants: Vec<(&str, StoreOptions)> = vec![
        ("pairs 256 B / 128 B (default)", StoreOptions::default()),
        ("pairs 128 B / 128 B", opts((0, 128), (0, 128))),
        ("pairs 512 B / 256 B", opts((0, 512), (0, 256))),
        ("pairs 64 B / 64 B", opts((0, 64), (0, 64))),
        ("zstd 16K/15", opts((1 << 14, 15), (1 << 14, 15))),
        ("zstd 8K/15", opts((1 << 13, 15), (1 << 13, 15))),
    ];
    let mut totals = vec![(0u64, 0u64, 0.0f64, 0.0f64); variants.len()];
    let mut syz = (0u64, 0u64);
    for &m in &materials {
        let table = generate(m, Metric::Dtz, &source, &|_| {}).expect("generate");
        let m = m.canonical();
        let size = |p: PathBuf| std::fs::metadata(p).map_or(0, |x| x.len());
        let (sw, sz) = (
            size(syzygy.join(format!("{m}.gtbw"))),
            size(syzygy.join(format!("{m}.gtbz"))),
        );
        syz = (syz.0 + sw, syz.1 + sz);
        println!("{m}: syzygy wdl {sw}, dtz {sz}");
        for (i, (name, o)) in variants.iter().enumerate() {
            let t = Instant::now();
            write_table(&scratch, &table, o).expect("write");
            let secs = t.elapsed().as_secs_f64();
            let wdl = scratch.join(file_name(m, Metric::Wdl));
            let dtz = scratch.join(file_name(m, Metric::Dtz));
            let (w, z) = (size(wdl.clone()), size(dtz.clone()));
            let (dw, dz) = (decode_ns(&wdl), decode_ns(&dtz));
            println!(
                "  {name:24} wdl {w:>9} dtz {z:>9}  write {secs:.2} s  decode wdl {dw:.0} ns, dtz {dz:.0} ns"
            );
            let t = &mut totals[i];
            *t = (t.0 + w, t.1 + z, t.2 + dw, t.3 + dz);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let n = materials.len() as f64;
    let syz_all = (syz.0 + syz.1) as f64;
    println!(
        "TOTAL syzygy: wdl {} dtz {} = {}",
        syz.0,
        syz.1,
        syz.0 + syz.1
    );
    for ((name, _), (w, z, dw, dz)) in variants.iter().zip(totals) {
        println!(
            "TOTAL {name:24} wdl {w:>10} dtz {z:>10} = {:>10} ({:.2}x syzygy; wdl {:.2}x)  mean decode wdl {:.0} ns, dtz {:.0} ns",
            w + z,
            (w + z) as f64 / syz_all,
            w as f64 / syz.0 as f64,
            dw / n,
            dz / n
        );
    }
}
