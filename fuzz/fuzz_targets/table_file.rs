//! The table file reader, for every format version it accepts (4: zstd blocks, 5: pairs).
//!
//! Input: one byte of options, then the file. Unless bit 0 of the options is set, the harness
//! recomputes the file's block or chunk checksums, header checksum and file checksum
//! ([`antitb::format::reseal`]) so that mutations reach the field checks and the decoders
//! instead of stopping at a checksum; bits 1-2 choose the block cache size. The seeds are real
//! files with up to three pieces (`fuzz/README.md`).
//!
//! Properties: opening and reading never panic; every error names the file; every value read
//! is one the file allows: a byte for 1-byte files, and through the store layer (which checks the
//! header against the table it names) a WDL for `.wdl` files and a distance of the file's value
//! map for `.dtz`/`.dtw` files; a value read alone equals the same value decoded with its
//! section.

#![no_main]

use antitb::format::{ReadOptions, TableFile, reseal};
use antitb::store::StoredTable;
use antitb::table::{Material, Metric};
use antitb_fuzz::{MAX_PIECES, one_thread};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Sections longer than this are not decoded whole by the harness (a hostile header can claim
/// billions of values in a few blocks; the store layer refuses such files before decoding).
const MAX_DECODE: u64 = 1 << 22;

fn scratch() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let shm = PathBuf::from("/dev/shm");
        let base = if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("antitb-fuzz-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir.join("fuzzed.tbl")
    })
}

fn named(e: &dyn std::fmt::Display) {
    let path = scratch().display().to_string();
    let msg = e.to_string();
    assert!(msg.contains(&path), "error does not name the file: {msg}");
    assert!(!msg.contains('\n'), "error is not one line: {msg}");
}

/// A few indices spread over `0..len`.
fn probes(len: u64) -> impl Iterator<Item = u64> {
    [
        0,
        1,
        len / 3,
        len / 2,
        len.saturating_sub(2),
        len.saturating_sub(1),
    ]
    .into_iter()
    .filter(move |&i| i < len)
}

fn raw(path: &PathBuf, cache_blocks: usize) {
    let t = match TableFile::open_with(path, &ReadOptions { cache_blocks }) {
        Ok(t) => t,
        Err(e) => return named(&e),
    };
    for s in 0..t.section_count().min(64) {
        let len = t.section_len(s);
        if len > MAX_DECODE {
            continue;
        }
        let whole = match t.decode_section(s) {
            Ok(v) => v,
            Err(e) => {
                named(&e);
                continue;
            }
        };
        assert_eq!(whole.len() as u64, len);
        if t.value_width() == 1 {
            assert!(whole.iter().all(|&v| v <= 255), "over 255 in a 1-byte file");
            match t.decode_section_u8(s) {
                Ok(narrow) => assert!(narrow.iter().zip(&whole).all(|(&a, &b)| u16::from(a) == b)),
                Err(e) => panic!("decode_section_u8 fails where decode_section did not: {e}"),
            }
        }
        for i in probes(len) {
            match t.get(s, i) {
                Ok(v) => assert_eq!(v, whole[i as usize], "section {s} index {i}"),
                Err(e) => panic!("get({s}, {i}) fails where the section decoded: {e}"),
            }
        }
    }
    if let Err(e) = t.verify_checksums() {
        named(&e);
    }
}

fn stored(path: &PathBuf, cache_blocks: usize) {
    let Ok(t) = TableFile::open(path) else {
        return;
    };
    let meta = t.meta().clone();
    drop(t);
    let Ok(material) = Material::parse(&meta.material) else {
        return;
    };
    if material.count() > MAX_PIECES || !material.is_table() {
        return;
    }
    let st = match StoredTable::open(path, material, meta.metric, &ReadOptions { cache_blocks }) {
        Ok(st) => st,
        Err(e) => return named(&e),
    };
    // The value map: a side mask, then one u16 distance per symbol (store/mod.rs).
    let allowed: Vec<u16> = meta
        .encoding
        .get(1..)
        .unwrap_or_default()
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    for side in 0..2 {
        if !st.stores_side(side) {
            continue;
        }
        let values = match st.decode_side(side) {
            Ok(v) => v,
            Err(e) => {
                named(&e);
                continue;
            }
        };
        assert_eq!(values.len() as u64, st.index.size());
        match meta.metric {
            Metric::Wdl => {
                // WDL + 2.
                assert!(values.iter().all(|&v| v <= 4), "WDL symbol out of range");
                if let Ok(wdl) = st.decode_wdl(side) {
                    assert!(
                        wdl.iter()
                            .zip(&values)
                            .all(|(w, &v)| i16::from(w.to_i8()) + 2 == v as i16)
                    );
                }
            }
            _ => assert!(
                values.iter().all(|v| allowed.contains(v)),
                "a distance outside the value map"
            ),
        }
        for i in probes(values.len() as u64) {
            let v = match meta.metric {
                Metric::Wdl => st.wdl(side, i).map(|w| (i16::from(w.to_i8()) + 2) as u16),
                _ => st.distance(side, i),
            };
            match v {
                Ok(v) => assert_eq!(v, values[i as usize], "side {side} slot {i}"),
                Err(e) => panic!("slot {i} fails where the side decoded: {e}"),
            }
        }
    }
}

fuzz_target!(
    init: {
        one_thread();
    },
    |data: &[u8]| {
    one_thread();
    let Some((&options, file)) = data.split_first() else {
        return;
    };
    let mut bytes = file.to_vec();
    if options & 1 == 0 {
        reseal(&mut bytes);
    }
    let cache_blocks = [0, 1, 2, 8][usize::from(options >> 1 & 3)];
    let path = scratch();
    std::fs::write(path, &bytes).expect("write the scratch file");
    raw(path, cache_blocks);
    stored(path, cache_blocks);
}
);
