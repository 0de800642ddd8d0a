//! Round trips, determinism across thread counts, and every kind of damage a file can suffer.

use std::fs;
use std::path::{Path, PathBuf};

use super::header::{FIXED_LEN, FixedHeader, Layout, u64_at};
use super::*;

/// A scratch directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("antitb-format-{tag}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// xorshift64: deterministic test data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Tablebase-like data: runs of a few values, mostly one, with noise.
fn runs(len: usize, seed: u64, max: u16) -> Vec<u16> {
    let mut r = Rng(seed | 1);
    let mut v = Vec::with_capacity(len);
    while v.len() < len {
        let run = 1 + (r.next() % 300) as usize;
        let cur = if r.next() % 10 < 8 {
            0
        } else {
            (r.next() % u64::from(max + 1)) as u16
        };
        for _ in 0..run.min(len - v.len()) {
            let x = r.next();
            v.push(if x.is_multiple_of(50) {
                (x >> 8) as u16 % (max + 1)
            } else {
                cur
            });
        }
    }
    v
}

fn meta(metric: Metric) -> TableMeta {
    TableMeta {
        material: "KRPvKN".to_string(),
        metric,
        index_params: vec![6, 5, 4, 3, 2],
        encoding: (0..=255u8).rev().collect(),
    }
}

fn small_opts() -> WriteOptions {
    WriteOptions {
        compression: Compression::Zstd,
        level: 3,
        values_per_block: 1000,
    }
}

fn write_u8(path: &Path, sections: &[Vec<u8>], opts: &WriteOptions) -> WriteStats {
    let refs: Vec<&[u8]> = sections.iter().map(|s| s.as_slice()).collect();
    write_table(path, &meta(Metric::Wdl), Sections::U8(&refs), opts).unwrap()
}

/// A standard small u8 file: two sections of 2500 and 1700 values in blocks of 1000, so
/// 3 + 2 = 5 blocks.
fn standard_file(dir: &TempDir) -> (PathBuf, Vec<Vec<u8>>) {
    let path = dir.join("t.wdl");
    let sections: Vec<Vec<u8>> = [(2500, 1), (1700, 2)]
        .iter()
        .map(|&(n, seed)| runs(n, seed, 4).into_iter().map(|x| x as u8).collect())
        .collect();
    write_u8(&path, &sections, &small_opts());
    (path, sections)
}

fn layout_of(bytes: &[u8]) -> Layout {
    Layout::of(&FixedHeader::decode(bytes)).unwrap()
}

/// Recomputes the header checksum after a deliberate edit, so the edit reaches later checks.
fn fix_header_sum(bytes: &mut [u8]) {
    let l = layout_of(bytes);
    let sum = checksum::xxh64(&bytes[..l.header_sum_pos as usize], 0);
    bytes[l.header_sum_pos as usize..l.data_start as usize].copy_from_slice(&sum.to_le_bytes());
}

fn open_err(path: &Path) -> FormatError {
    TableFile::open(path).expect_err("open should fail")
}

#[test]
fn round_trip_u8_and_u16() {
    let dir = TempDir::new("rt");
    for vpb in [1u32, 7, 1000, 4096, 1 << 15] {
        let opts = WriteOptions {
            compression: Compression::Zstd,
            level: 3,
            values_per_block: vpb,
        };
        // u16: sizes around block multiples, an empty section in the middle.
        let lens = [
            0usize,
            1,
            vpb as usize - 1,
            vpb as usize,
            vpb as usize + 1,
            5000,
            0,
            12345,
        ];
        let data: Vec<Vec<u16>> = lens
            .iter()
            .enumerate()
            .map(|(i, &n)| runs(n, i as u64 + 11, 700))
            .collect();
        let refs: Vec<&[u16]> = data.iter().map(|s| s.as_slice()).collect();
        let path = dir.join(&format!("u16-{vpb}.dtz"));
        let stats = write_table(&path, &meta(Metric::Dtz), Sections::U16(&refs), &opts).unwrap();
        assert_eq!(stats.file_len, fs::metadata(&path).unwrap().len());
        assert_eq!(stats.values, lens.iter().sum::<usize>() as u64);
        assert_eq!(stats.raw_bytes, 2 * stats.values);
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.meta(), &meta(Metric::Dtz));
        assert_eq!(t.value_width(), 2);
        assert_eq!(t.values_per_block(), vpb);
        assert_eq!(t.section_count(), lens.len());
        assert_eq!(t.block_count(), stats.blocks);
        t.verify_checksums().unwrap();
        for (s, d) in data.iter().enumerate() {
            assert_eq!(t.section_len(s), d.len() as u64);
            assert_eq!(&t.decode_section(s).unwrap(), d);
            for i in (0..d.len()).step_by(97).chain(d.len().checked_sub(1)) {
                assert_eq!(t.get(s, i as u64).unwrap(), d[i], "section {s} index {i}");
            }
        }

        // u8, same shapes.
        let data8: Vec<Vec<u8>> = data
            .iter()
            .map(|s| s.iter().map(|&x| x as u8).collect())
            .collect();
        let path = dir.join(&format!("u8-{vpb}.wdl"));
        write_u8(&path, &data8, &opts);
        let t = TableFile::open(&path).unwrap();
        assert_eq!(t.value_width(), 1);
        t.verify_checksums().unwrap();
        for (s, d) in data8.iter().enumerate() {
            assert_eq!(&t.decode_section_u8(s).unwrap(), d);
            let wide: Vec<u16> = d.iter().map(|&x| u16::from(x)).collect();
            assert_eq!(t.decode_section(s).unwrap(), wide);
            for i in (0..d.len()).step_by(89) {
                assert_eq!(t.get(s, i as u64).unwrap(), u16::from(d[i]));
            }
        }
        assert!(matches!(
            TableFile::open(&dir.join(&format!("u16-{vpb}.dtz")))
                .unwrap()
                .decode_section_u8(0),
            Err(FormatError::InvalidInput { .. })
        ));
    }
    // Only the final files remain: no temporaries.
    assert!(dir.names().iter().all(|n| !n.contains(".tmp.")));
}

#[test]
fn empty_table_and_no_sections() {
    let dir = TempDir::new("empty");
    let path = dir.join("none.wdl");
    write_table(&path, &meta(Metric::Dtw), Sections::U8(&[]), &small_opts()).unwrap();
    let t = TableFile::open(&path).unwrap();
    assert_eq!((t.section_count(), t.block_count()), (0, 0));
    t.verify_checksums().unwrap();
    assert!(matches!(t.get(0, 0), Err(FormatError::OutOfBounds { .. })));

    let path = dir.join("empty.wdl");
    write_table(
        &path,
        &meta(Metric::Wdl),
        Sections::U8(&[&[], &[]]),
        &small_opts(),
    )
    .unwrap();
    let t = TableFile::open(&path).unwrap();
    assert_eq!((t.section_count(), t.section_len(1)), (2, 0));
    assert_eq!(t.decode_section(1).unwrap(), Vec::<u16>::new());
    assert!(matches!(t.get(1, 0), Err(FormatError::OutOfBounds { .. })));
}

#[test]
fn cache_settings_agree() {
    let dir = TempDir::new("cache");
    let (path, data) = standard_file(&dir);
    for cache_blocks in [0, 1, 2, 3, 5, 8, 64] {
        let t = TableFile::open_with(&path, &ReadOptions { cache_blocks }).unwrap();
        let mut r = Rng(99);
        for _ in 0..3000 {
            let s = (r.next() % 2) as usize;
            let i = (r.next() % data[s].len() as u64) as usize;
            assert_eq!(t.get(s, i as u64).unwrap(), u16::from(data[s][i]));
        }
    }
}

#[test]
fn parallel_probes_agree() {
    use rayon::prelude::*;
    let dir = TempDir::new("par");
    let (path, data) = standard_file(&dir);
    let t = TableFile::open_with(&path, &ReadOptions { cache_blocks: 2 }).unwrap();
    (0..20_000u64).into_par_iter().for_each(|k| {
        let s = (k % 2) as usize;
        let i = (k * 7919) % data[s].len() as u64;
        assert_eq!(t.get(s, i).unwrap(), u16::from(data[s][i as usize]));
    });
}

#[test]
fn identical_bytes_for_any_thread_count() {
    let dir = TempDir::new("det");
    let data: Vec<Vec<u16>> = [50_000usize, 33_333, 7]
        .iter()
        .map(|&n| runs(n, n as u64, 300))
        .collect();
    let refs: Vec<&[u16]> = data.iter().map(|s| s.as_slice()).collect();
    let zstd = WriteOptions {
        compression: Compression::Zstd,
        level: 5,
        values_per_block: 512,
    };
    for opts in [zstd, WriteOptions::pairs()] {
        let mut files = Vec::new();
        for threads in [1, 4, 3] {
            let path = dir.join(&format!("t{threads}.dtz"));
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| write_table(&path, &meta(Metric::Dtz), Sections::U16(&refs), &opts))
                .unwrap();
            files.push(fs::read(&path).unwrap());
        }
        assert_eq!(files[0], files[1], "{:?}", opts.compression);
        assert_eq!(files[0], files[2], "{:?}", opts.compression);
    }
}

#[test]
fn flipped_byte_in_block_names_the_block() {
    let dir = TempDir::new("flip");
    let (path, data) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    let t = TableFile::open(&path).unwrap();
    let target = 3; // block 0 of section 1
    let start = u64_at(&good, (layout_of(&good).offsets_pos + 8 * target) as usize) as usize;
    let len = t.block_compressed_len(target) as usize;
    drop(t);
    // Every byte of the block, flipped in turn: always an error naming block 3, never a panic.
    for k in 0..len {
        let mut bad = good.clone();
        bad[start + k] ^= 0x10;
        fs::write(&path, &bad).unwrap();
        let t = TableFile::open(&path).unwrap(); // the header is intact
        let e = match t.get(1, 5) {
            Err(e) => e,
            Ok(v) => {
                // A bit zstd ignores (the frame header's unused bit): the values are intact, and
                // only the whole-file checksum notices.
                assert_eq!(v, u16::from(data[1][5]), "byte {k}");
                assert!(matches!(
                    t.verify_checksums(),
                    Err(FormatError::BadChecksum {
                        region: Region::File,
                        ..
                    })
                ));
                eprintln!("byte {k} of the block is ignored by zstd");
                continue;
            }
        };
        assert_eq!(e.block(), Some(target), "byte {k}: {e}");
        assert!(
            matches!(
                e,
                FormatError::BadChecksum { .. } | FormatError::Corrupt { block: Some(3), .. }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("t.wdl") && e.to_string().contains("block 3"),
            "{e}"
        );
        assert_eq!(t.verify_checksums().unwrap_err().block(), Some(target));
        assert!(t.decode_section(1).is_err());
        // Other blocks still read.
        assert_eq!(t.get(0, 5).unwrap(), u16::from(data[0][5]));
    }
}

#[test]
fn changed_value_with_valid_zstd_gives_bad_checksum() {
    // Replace block 1 with a valid zstd frame of different values: only the checksum notices.
    let dir = TempDir::new("swap");
    let (path, _) = standard_file(&dir);
    let mut bytes = fs::read(&path).unwrap();
    let l = layout_of(&bytes);
    let off = |i: u64| u64_at(&bytes, (l.offsets_pos + 8 * i) as usize) as usize;
    let (a, b) = (off(1), off(2));
    let frame = zstd::bulk::compress(&[7u8; 1000], 3).unwrap();
    assert!(frame.len() <= b - a);
    // Pad with a zstd skippable frame so the block keeps its length.
    let mut block = frame;
    let pad = b - a - block.len();
    if pad > 0 {
        assert!(pad >= 8, "need room for a skippable frame header");
        block.extend_from_slice(&0x184D_2A50u32.to_le_bytes());
        block.extend_from_slice(&((pad - 8) as u32).to_le_bytes());
        block.resize(b - a, 0);
    }
    bytes[a..b].copy_from_slice(&block);
    fs::write(&path, &bytes).unwrap();
    let t = TableFile::open(&path).unwrap();
    let e = t.get(0, 1500).unwrap_err();
    assert!(
        matches!(
            e,
            FormatError::BadChecksum {
                region: Region::Block(1),
                ..
            }
        ),
        "{e}"
    );
    // The whole-file checksum also disagrees, but verify reports the block first.
    assert_eq!(t.verify_checksums().unwrap_err().block(), Some(1));
}

#[test]
fn whole_file_checksum() {
    let dir = TempDir::new("filesum");
    let (path, _) = standard_file(&dir);
    let mut bytes = fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let t = TableFile::open(&path).unwrap();
    assert!(matches!(
        t.verify_checksums(),
        Err(FormatError::BadChecksum {
            region: Region::File,
            ..
        })
    ));
}

#[test]
fn truncated_file() {
    let dir = TempDir::new("trunc");
    let (path, _) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    let l = layout_of(&good);
    let cuts = [
        0,
        1,
        5,
        12,
        40,
        63,
        64,
        100,
        l.data_start as usize - 1,
        l.data_start as usize,
        l.data_start as usize + 10,
        good.len() - 9,
        good.len() - 1,
    ];
    for cut in cuts {
        fs::write(&path, &good[..cut]).unwrap();
        let e = open_err(&path);
        assert!(
            matches!(e, FormatError::Truncated { actual, .. } if actual == cut as u64),
            "cut at {cut}: {e}"
        );
        assert!(e.to_string().contains("t.wdl"));
    }
    // Extra bytes at the end are also an error.
    let mut long = good.clone();
    long.push(0);
    fs::write(&path, &long).unwrap();
    assert!(matches!(open_err(&path), FormatError::Corrupt { .. }));
}

#[test]
fn bad_magic_and_version() {
    let dir = TempDir::new("magic");
    let (path, _) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    for k in 0..8 {
        let mut bad = good.clone();
        bad[k] ^= 0x20;
        fs::write(&path, &bad).unwrap();
        assert!(matches!(open_err(&path), FormatError::BadMagic { .. }));
    }
    fs::write(&path, b"hello").unwrap();
    assert!(matches!(open_err(&path), FormatError::BadMagic { .. }));
    fs::write(&path, b"").unwrap();
    assert!(matches!(open_err(&path), FormatError::Truncated { .. }));

    // Versions 1 to 3 (older antitb files: other `.dtz` layout, the sparse index) and a future
    // version.
    for v in [1u32, 2, 3, 6] {
        let mut bad = good.clone();
        bad[8..12].copy_from_slice(&v.to_le_bytes());
        fs::write(&path, &bad).unwrap();
        let e = open_err(&path);
        assert!(
            matches!(e, FormatError::UnsupportedVersion { found, .. } if found == v),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("version {v}")), "{e}");
    }
}

#[test]
fn header_damage_is_caught() {
    let dir = TempDir::new("hdr");
    let (path, _) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    let l = layout_of(&good);
    // Any flipped byte of the header after the version: an error, never a panic.
    for k in 12..l.data_start as usize {
        let mut bad = good.clone();
        bad[k] ^= 0x01;
        fs::write(&path, &bad).unwrap();
        let e = open_err(&path);
        assert!(
            matches!(
                e,
                FormatError::BadChecksum {
                    region: Region::Header,
                    ..
                } | FormatError::Truncated { .. }
                    | FormatError::Corrupt { .. }
            ),
            "byte {k}: {e}"
        );
    }
}

#[test]
fn offsets_out_of_range() {
    let dir = TempDir::new("offsets");
    let (path, _) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    let l = layout_of(&good);
    let len = good.len() as u64;
    // Offsets 0..=5 (5 blocks): past the end, before the data, going backwards, huge.
    for (i, value) in [
        (2u64, len + 100),
        (0, l.data_start - 8),
        (0, l.data_start + 1),
        (3, l.data_start),
        (5, len - 9),
        (4, u64::MAX),
    ] {
        let mut bad = good.clone();
        let at = (l.offsets_pos + 8 * i) as usize;
        bad[at..at + 8].copy_from_slice(&value.to_le_bytes());
        // Without fixing the header checksum, the checksum catches it.
        fs::write(&path, &bad).unwrap();
        assert!(matches!(
            open_err(&path),
            FormatError::BadChecksum {
                region: Region::Header,
                ..
            }
        ));
        // With it fixed, the offset check does.
        fix_header_sum(&mut bad);
        fs::write(&path, &bad).unwrap();
        let e = open_err(&path);
        assert!(matches!(e, FormatError::OffsetOutOfRange { offset, .. } if offset == value));
        assert!(e.to_string().contains("offset"), "{e}");
    }
}

#[test]
fn hostile_counts_do_not_panic_or_allocate() {
    let dir = TempDir::new("hostile");
    let (path, _) = standard_file(&dir);
    let good = fs::read(&path).unwrap();
    let fields: [(usize, usize); 8] = [
        (16, 4), // values per block
        (20, 4), // section count
        (24, 8), // block count
        (32, 8), // file length
        (40, 4), // material length
        (44, 4), // index params length
        (48, 4), // encoding length
        (12, 1), // metric
    ];
    for (at, width) in fields {
        for value in [0u64, 1, 2, 3, 255, 1 << 31, u32::MAX.into(), u64::MAX] {
            let mut bad = good.clone();
            bad[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
            fs::write(&path, &bad).unwrap();
            if TableFile::open(&path).is_ok() {
                continue; // The value happened to be the right one.
            }
            // Also with the header checksum recomputed where the layout still fits.
            if let Some(l) = Layout::of(&FixedHeader::decode(&bad))
                && l.data_start <= bad.len() as u64
            {
                fix_header_sum(&mut bad);
                fs::write(&path, &bad).unwrap();
                if let Ok(t) = TableFile::open(&path) {
                    // Structurally consistent after all: probing must still not panic.
                    let _ = t.verify_checksums();
                    for s in 0..t.section_count() {
                        let _ = t.get(s, 0);
                    }
                }
            }
        }
    }
    // Width and compression bytes, with the checksum fixed so the field check is reached.
    for (at, value, what) in [
        (13usize, 3u8, "width"),
        (14, 0, "compression"),
        (12, 9, "metric"),
    ] {
        let mut bad = good.clone();
        bad[at] = value;
        fix_header_sum(&mut bad);
        fs::write(&path, &bad).unwrap();
        let e = open_err(&path);
        assert!(matches!(e, FormatError::Corrupt { .. }), "{what}: {e}");
    }
    assert_eq!(FIXED_LEN, 64);
}

#[test]
fn writes_are_atomic_and_errors_name_the_path() {
    let dir = TempDir::new("atomic");
    let data = [vec![1u8; 10_000]];
    let refs: Vec<&[u8]> = data.iter().map(|s| s.as_slice()).collect();
    let w = |p: &Path| write_table(p, &meta(Metric::Wdl), Sections::U8(&refs), &small_opts());

    // Nonexistent directory.
    let missing = dir.join("no/such/dir/t.wdl");
    let e = w(&missing).unwrap_err();
    assert!(matches!(e, FormatError::Io { .. }), "{e}");
    assert!(e.to_string().contains("no/such/dir"), "{e}");
    assert!(!dir.join("no").exists());

    // A "directory" that is a file (unwritable even for root).
    fs::write(dir.join("plain"), b"x").unwrap();
    let e = w(&dir.join("plain/t.wdl")).unwrap_err();
    assert!(matches!(e, FormatError::Io { .. }), "{e}");
    assert!(e.to_string().contains("plain"), "{e}");

    // Target is a directory: the rename fails, and the temporary file is removed.
    fs::create_dir(dir.join("occupied.wdl")).unwrap();
    let e = w(&dir.join("occupied.wdl")).unwrap_err();
    assert!(
        matches!(
            e,
            FormatError::Io {
                op: "rename into place",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(dir.names(), ["occupied.wdl", "plain"]);

    // Bad options: nothing is created.
    let e = write_table(
        &dir.join("x.wdl"),
        &meta(Metric::Wdl),
        Sections::U8(&refs),
        &WriteOptions {
            compression: Compression::Zstd,
            level: 3,
            values_per_block: 0,
        },
    )
    .unwrap_err();
    assert!(matches!(e, FormatError::InvalidInput { .. }));
    assert_eq!(dir.names(), ["occupied.wdl", "plain"]);

    // Overwriting an existing table replaces it whole.
    let p = dir.join("t.wdl");
    w(&p).unwrap();
    let other = vec![2u8; 77];
    write_table(
        &p,
        &meta(Metric::Wdl),
        Sections::U8(&[&other]),
        &small_opts(),
    )
    .unwrap();
    let t = TableFile::open(&p).unwrap();
    assert_eq!((t.section_len(0), t.get(0, 76).unwrap()), (77, 2));
    assert_eq!(dir.names(), ["occupied.wdl", "plain", "t.wdl"]);
}

#[test]
fn display_is_one_line_naming_file_and_block() {
    let e = FormatError::BadChecksum {
        path: PathBuf::from("tables/KQvK.wdl"),
        region: Region::Block(17),
        stored: 1,
        computed: 2,
    };
    let s = e.to_string();
    assert_eq!(
        s,
        "tables/KQvK.wdl: block 17: checksum mismatch (stored 0000000000000001, computed 0000000000000002)"
    );
    assert!(!s.contains('\n'));
}

/// Random damage anywhere in the file, with and without the header checksum repaired: open,
/// probe, decode and verify must return values or errors, never panic.
#[test]
fn random_damage_never_panics() {
    let dir = TempDir::new("fuzz");
    let path = dir.join("t.dtz");
    let data = [runs(3000, 5, 900), runs(1, 6, 900), runs(2047, 7, 900)];
    let refs: Vec<&[u16]> = data.iter().map(|s| s.as_slice()).collect();
    let opts = WriteOptions {
        compression: Compression::Zstd,
        level: 3,
        values_per_block: 512,
    };
    write_table(&path, &meta(Metric::Dtz), Sections::U16(&refs), &opts).unwrap();
    let good = fs::read(&path).unwrap();
    let mut r = Rng(0xDEAD_BEEF);
    let mut opened = 0;
    for round in 0..800 {
        let mut bad = good.clone();
        for _ in 0..1 + r.next() % 3 {
            let k = (r.next() % bad.len() as u64) as usize;
            bad[k] = r.next() as u8;
        }
        if round % 2 == 1
            && Layout::of(&FixedHeader::decode(&bad))
                .is_some_and(|l| l.data_start <= bad.len() as u64)
        {
            fix_header_sum(&mut bad);
        }
        fs::write(&path, &bad).unwrap();
        let Ok(t) = TableFile::open_with(&path, &ReadOptions { cache_blocks: 2 }) else {
            continue;
        };
        opened += 1;
        let _ = t.verify_checksums();
        for s in 0..t.section_count().min(8) {
            let _ = t.decode_section(s);
            for i in [0, 1, 511, 512, 2999] {
                if i < t.section_len(s) {
                    let _ = t.get(s, i);
                }
            }
        }
    }
    assert!(opened > 50, "only {opened} damaged files opened");
}

// ---- Version 3: the pairs codec -------------------------------------------------------------

/// The header checksum position of a version-5 file, if its descriptors fit.
fn pairs_header_sum_pos(bytes: &[u8]) -> Option<usize> {
    let h = FixedHeader::decode(bytes);
    let meta_len =
        u64::from(h.material_len) + u64::from(h.index_params_len) + u64::from(h.encoding_len);
    let sections_pos = FIXED_LEN + meta_len.next_multiple_of(8);
    super::pairs_file::layout(&h, bytes, sections_pos, h.values_per_block as usize)
        .ok()
        .map(|(_, l, _)| l.header_sum_pos as usize)
}

/// A pairs file of three u16 sections (one empty) and its values.
fn pairs_file(dir: &TempDir) -> (PathBuf, Vec<Vec<u16>>) {
    let path = dir.join("p.dtz");
    let data = vec![runs(40_000, 11, 200), Vec::new(), runs(9_999, 12, 3)];
    let refs: Vec<&[u16]> = data.iter().map(|s| s.as_slice()).collect();
    write_table(
        &path,
        &meta(Metric::Dtz),
        Sections::U16(&refs),
        &WriteOptions::pairs(),
    )
    .unwrap();
    (path, data)
}

#[test]
fn pairs_round_trip_u8_and_u16() {
    let dir = TempDir::new("prt");
    let (path, data) = pairs_file(&dir);
    let t = TableFile::open(&path).unwrap();
    assert_eq!(t.compression(), Compression::Pairs { block_bytes: 128 });
    assert_eq!(t.meta(), &meta(Metric::Dtz));
    assert_eq!((t.section_count(), t.value_width()), (3, 2));
    for (s, d) in data.iter().enumerate() {
        assert_eq!(t.section_len(s), d.len() as u64);
        assert_eq!(&t.decode_section(s).unwrap(), d);
        for (i, &v) in d.iter().enumerate().step_by(7) {
            assert_eq!(t.get(s, i as u64).unwrap(), v, "section {s} value {i}");
        }
        assert!(matches!(
            t.get(s, d.len() as u64),
            Err(FormatError::OutOfBounds { .. })
        ));
    }
    t.verify_checksums().unwrap();
    assert!(t.file_len() < 40_000, "{} bytes", t.file_len());

    let path = dir.join("p.wdl");
    let wdl: Vec<Vec<u8>> = [(70_000, 1), (1, 2)]
        .iter()
        .map(|&(n, seed)| runs(n, seed, 4).into_iter().map(|x| x as u8).collect())
        .collect();
    write_u8(&path, &wdl, &WriteOptions::pairs_with(1024));
    let t = TableFile::open(&path).unwrap();
    for (s, d) in wdl.iter().enumerate() {
        assert_eq!(&t.decode_section_u8(s).unwrap(), d);
        let r: Vec<u16> = d.iter().map(|&x| u16::from(x)).collect();
        assert_eq!(t.decode_section(s).unwrap(), r);
    }
    assert_eq!(FixedHeader::decode(&fs::read(&path).unwrap()).version, 5);
}

#[test]
fn pairs_flipped_data_byte_names_the_chunk() {
    let dir = TempDir::new("pflip");
    let (path, data) = pairs_file(&dir);
    let good = fs::read(&path).unwrap();
    let data_start = pairs_header_sum_pos(&good).unwrap() + 8;
    let data_end = good.len() - 8;
    let mut r = Rng(3);
    for _ in 0..200 {
        let k = data_start + (r.next() % (data_end - data_start) as u64) as usize;
        let chunk = ((k - data_start) / 4096) as u64;
        let mut bad = good.clone();
        bad[k] ^= 1 << (r.next() % 8);
        fs::write(&path, &bad).unwrap();
        let t = TableFile::open(&path).unwrap(); // the header is intact
        let e = t.verify_checksums().unwrap_err();
        assert!(
            matches!(e, FormatError::BadChecksum { region: Region::Block(c), .. } if c == chunk),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("block {chunk}")), "{e}");
        // Decoding a section the chunk covers fails (a chunk may hold blocks of two
        // sections); no decode returns wrong values.
        let t = TableFile::open(&path).unwrap();
        let mut failed = 0;
        for s in [0, 2] {
            match t.decode_section(s) {
                Ok(v) => assert_eq!(v, data[s]),
                Err(e) => {
                    assert!(e.to_string().contains(&format!("block {chunk}")), "{e}");
                    failed += 1;
                }
            }
        }
        assert!(failed >= 1, "byte {k}: no section failed");
    }
}

#[test]
fn pairs_truncated_and_damaged_headers() {
    let dir = TempDir::new("ptrunc");
    let (path, _) = pairs_file(&dir);
    let good = fs::read(&path).unwrap();
    let hs = pairs_header_sum_pos(&good).unwrap();
    for cut in [
        0,
        10,
        63,
        64,
        100,
        200,
        hs,
        hs + 8,
        hs + 100,
        good.len() - 8,
        good.len() - 1,
    ] {
        fs::write(&path, &good[..cut]).unwrap();
        let e = open_err(&path);
        assert!(
            matches!(e, FormatError::Truncated { actual, .. } if actual == cut as u64),
            "cut at {cut}: {e}"
        );
    }
    // Any flipped header byte after the magic: an error at open, never a panic.
    for k in 8..hs + 8 {
        let mut bad = good.clone();
        bad[k] ^= 0x04;
        fs::write(&path, &bad).unwrap();
        assert!(TableFile::open(&path).is_err(), "byte {k}");
    }
    // A version-5 header claiming zstd blocks, checksum repaired.
    let mut bad = good.clone();
    bad[14] = 1;
    let sum = checksum::xxh64(&bad[..hs], 0);
    bad[hs..hs + 8].copy_from_slice(&sum.to_le_bytes());
    fs::write(&path, &bad).unwrap();
    assert!(open_err(&path).to_string().contains("compression method 1"));
}

/// As [`random_damage_never_panics`], for pairs files: damage in the grammar and code tables
/// (with the header checksum repaired) must be refused or decoded without a panic.
#[test]
fn pairs_random_damage_never_panics() {
    let dir = TempDir::new("pfuzz");
    let (path, _) = pairs_file(&dir);
    let good = fs::read(&path).unwrap();
    let hs = pairs_header_sum_pos(&good).unwrap();
    let mut r = Rng(0xFACE);
    let mut opened = 0;
    for round in 0..1500 {
        let mut bad = good.clone();
        for _ in 0..1 + r.next() % 3 {
            // Mostly the tables, where a repaired checksum lets damage through to validation.
            let k = if round % 4 == 3 {
                (r.next() % bad.len() as u64) as usize
            } else {
                64 + (r.next() % (hs as u64 - 64)) as usize
            };
            bad[k] = r.next() as u8;
        }
        if round % 3 != 0
            && let Some(p) = pairs_header_sum_pos(&bad)
        {
            let sum = checksum::xxh64(&bad[..p], 0);
            bad[p..p + 8].copy_from_slice(&sum.to_le_bytes());
        }
        fs::write(&path, &bad).unwrap();
        let Ok(t) = TableFile::open(&path) else {
            continue;
        };
        opened += 1;
        let _ = t.verify_checksums();
        for s in 0..t.section_count().min(8) {
            let _ = t.decode_section(s);
            for i in [0, 1, 511, 512, 9_998, 39_999] {
                if i < t.section_len(s) {
                    let _ = t.get(s, i);
                }
            }
        }
    }
    assert!(opened > 100, "only {opened} damaged files opened");
}

// ---- reseal: checksums recomputed after an edit ---------------------------------------------

/// `reseal` leaves sound files of both versions unchanged, and after an edit to the data it
/// makes every checksum pass again, so only the decoder can notice the edit.
#[test]
fn reseal_restores_every_checksum() {
    let dir = TempDir::new("reseal");
    let (zstd_path, _) = standard_file(&dir);
    let (pairs_path, _) = pairs_file(&dir);
    for path in [zstd_path, pairs_path] {
        let good = fs::read(&path).unwrap();
        let mut same = good.clone();
        reseal(&mut same);
        assert!(
            same == good,
            "{}: reseal changed a sound file",
            path.display()
        );
        let data_start = match pairs_header_sum_pos(&good) {
            Some(pos) => pos + 8,
            None => layout_of(&good).data_start as usize,
        };
        // A bit flipped in the data; the header's metadata edited (a reserved byte).
        let mut r = Rng(7);
        let mut checked = 0;
        for _ in 0..40 {
            let mut bad = good.clone();
            let k = data_start + (r.next() % (bad.len() - 8 - data_start) as u64) as usize;
            bad[k] ^= 1 << (r.next() % 8);
            bad[60] = 1;
            reseal(&mut bad);
            fs::write(&path, &bad).unwrap();
            let t = TableFile::open(&path).unwrap();
            match t.verify_checksums() {
                Ok(()) => checked += 1,
                // A zstd block that no longer decodes keeps its old checksum; the decoder
                // reports it.
                Err(e) => assert!(
                    matches!(e, FormatError::Corrupt { .. }),
                    "{}: {e}",
                    path.display()
                ),
            }
        }
        assert!(
            checked > 0,
            "{}: no edit passed its checksums",
            path.display()
        );
    }
}

#[test]
fn spilled_encodings_write_the_same_bytes_and_leave_no_spool() {
    let dir = TempDir::new("spill");
    let sections: Vec<Vec<u16>> = [(70_000, 1), (0, 2), (33_333, 3), (50_000, 4)]
        .iter()
        .map(|&(n, seed)| runs(n, seed, 300))
        .collect();
    let lens: Vec<u64> = sections.iter().map(|s| s.len() as u64).collect();
    let get = |s: usize, out: &mut Vec<u16>| -> Result<(), FormatError> {
        out.clear();
        out.extend_from_slice(&sections[s]);
        Ok(())
    };
    for opts in [
        small_opts(),
        WriteOptions::pairs_with(128),
        WriteOptions::pairs_with(1024),
    ] {
        let (a, b) = (dir.join("a.dtz"), dir.join("b.dtz"));
        let whole =
            writer::encode_spilling(&a, &meta(Metric::Dtz), &lens, 2, &opts, &get, usize::MAX)
                .unwrap();
        write_encoded(&a, &whole).unwrap();
        let data = whole.file_len() as usize;
        for spill in [0, 100, data / 3, data] {
            let e = writer::encode_spilling(&b, &meta(Metric::Dtz), &lens, 2, &opts, &get, spill)
                .unwrap();
            assert_eq!(e.file_len(), whole.file_len());
            // The data wait in a spool file beside the target once they outgrow `spill`.
            let spooled = dir.names().iter().any(|n| n.starts_with("b.dtz.tmp."));
            assert_eq!(spooled, spill < data / 2, "{opts:?} spill {spill}");
            write_encoded(&b, &e).unwrap();
            drop(e);
            assert_eq!(
                fs::read(&a).unwrap(),
                fs::read(&b).unwrap(),
                "{opts:?} spill {spill}"
            );
            assert_eq!(dir.names(), ["a.dtz", "b.dtz"]);
            // An encoding dropped unwritten takes its spool with it.
            let e = writer::encode_spilling(&b, &meta(Metric::Dtz), &lens, 2, &opts, &get, spill)
                .unwrap();
            drop(e);
            assert_eq!(dir.names(), ["a.dtz", "b.dtz"]);
            TableFile::open(&b).unwrap();
        }
    }
}

#[test]
fn chunk_sums_fed_in_pieces_are_those_of_the_whole() {
    let mut r = Rng(7);
    let data: Vec<u8> = (0..3 * pairs_file::CHUNK_BYTES + 1234)
        .map(|_| r.next() as u8)
        .collect();
    for max_piece in [1, 100, 4095, 4096, 5000, 20_000] {
        let mut sums = writer::ChunkSums::default();
        let mut at = 0;
        while at < data.len() {
            let n = (1 + r.next() as usize % max_piece).min(data.len() - at);
            sums.update(&data[at..at + n]);
            at += n;
        }
        let whole: Vec<u64> = data
            .chunks(pairs_file::CHUNK_BYTES)
            .map(|c| checksum::xxh64(c, 0))
            .collect();
        assert_eq!(sums.finish(), whole, "{max_piece}");
    }
}
