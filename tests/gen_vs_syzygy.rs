//! The generator against de Man's independent Syzygy antichess tables (../shared/reference):
//! every position of every 2- and 3-piece table, and a fixed sample of 4-piece tables, both
//! sides to move. WDL must be equal; DTZ must equal Syzygy's probe or differ only in the ways
//! SYZYGY_NOTES.md §5/§8 documents (counted per class by `tests/common/syzygy.rs`). The naive
//! solver (tests/gen_vs_naive.rs), not Syzygy, is the authority on exact DTZ.
//!
//! `full_4_piece_comparison` (ignored by default; run it explicitly) compares every table up
//! to 4 pieces from files in `$ANTITB_TABLES` (default `tables/`), every `$ANTITB_STRIDE`-th
//! position (default 1: all).

mod common;

use antitb::r#gen::MemoryTables;
use antitb::probe::Tablebase;
use antitb::rules::Position;
use antitb::table::{Index, Material, Metric, Value};
use common::syzygy::{DtzTally, Reference, SKIPPED};
use common::to_shakmaty::to_shakmaty;
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use std::sync::Mutex;

struct Outcome {
    positions: u64,
    wdl_mismatches: u64,
    tally: DtzTally,
}

/// Compare every `stride`-th valid slot of `material` (both sides) with the reference.
fn compare(
    r: &Reference,
    tb: &shakmaty_syzygy::Tablebase<Antichess>,
    material: Material,
    stride: u64,
    ours: &(dyn Fn(&Position) -> Value + Sync),
) -> Outcome {
    let index = Index::new(material);
    let out = Mutex::new(Outcome {
        positions: 0,
        wdl_mismatches: 0,
        tally: DtzTally::default(),
    });
    let chunk = 1 << 14;
    (0..index.size().div_ceil(chunk))
        .into_par_iter()
        .for_each(|c| {
            let mut local = Outcome {
                positions: 0,
                wdl_mismatches: 0,
                tally: DtzTally::default(),
            };
            for idx in (c * chunk..((c + 1) * chunk).min(index.size())).filter(|i| i % stride == 0)
            {
                for side in 0..2 {
                    let Some(pos) = index.decode(side, idx) else {
                        continue;
                    };
                    let v = ours(&pos);
                    let v_wdl = v.wdl().to_i8();
                    let sp = to_shakmaty(&pos).expect("table positions are legal antichess positions");
                    let wdl = tb.probe_wdl_after_zeroing(&sp).expect("reference probe") as i8;
                    local.positions += 1;
                    if wdl != v_wdl {
                        local.wdl_mismatches += 1;
                        if local.wdl_mismatches <= 5 {
                            eprintln!(
                                "WDL mismatch {material} {pos}: ours {v:?} (wdl {v_wdl}), syzygy {wdl}"
                            );
                        }
                        continue;
                    }
                    if v_wdl == 0 {
                        continue;
                    }
                    let p = tb
                        .probe_dtz(&sp)
                        .expect("reference probe")
                        .ignore_rounding()
                        .0;
                    let class = r
                        .classify(v.signed(), v_wdl, p, &pos)
                        .expect("reference probe");
                    local.tally.add(class, &pos, v_wdl, v.signed(), p);
                }
            }
            let mut o = out.lock().unwrap();
            o.positions += local.positions;
            o.wdl_mismatches += local.wdl_mismatches;
            o.tally.merge(local.tally);
        });
    out.into_inner().unwrap()
}

fn reference_tb() -> Option<(Reference, shakmaty_syzygy::Tablebase<Antichess>)> {
    let r = Reference::open()?;
    let mut tb = shakmaty_syzygy::Tablebase::<Antichess>::new();
    tb.add_directory(common::syzygy::reference_dir()?).ok()?;
    Some((r, tb))
}

fn run(materials: &[Material], stride: u64, ours: &(dyn Fn(&Position) -> Value + Sync)) {
    let Some((r, tb)) = reference_tb() else {
        println!("{SKIPPED}");
        return;
    };
    let mut total = Outcome {
        positions: 0,
        wdl_mismatches: 0,
        tally: DtzTally::default(),
    };
    for &m in materials {
        let o = compare(&r, &tb, m, stride, ours);
        total.positions += o.positions;
        total.wdl_mismatches += o.wdl_mismatches;
        total.tally.merge(o.tally);
    }
    println!(
        "{} tables, {} positions (every {stride}th slot), WDL mismatches {}",
        materials.len(),
        total.positions,
        total.wdl_mismatches
    );
    println!("DTZ classes of decisive positions:\n{}", total.tally);
    assert_eq!(total.wdl_mismatches, 0);
    assert_eq!(
        total.tally.failures(),
        0,
        "DTZ disagreements beyond the documented ones"
    );
}

/// The 4-piece tables checked in every test run: pawnless and pawnful, unique and repeated
/// pieces, long and short tables; chosen so that their dependency closure stays small.
const SAMPLE_4: [&str; 4] = ["KRvKN", "BBvNN", "KQvRB", "RNPvK"];

#[test]
fn every_position_up_to_3_pieces_and_a_4_piece_sample() {
    let mut mem = MemoryTables::new();
    mem.generate_up_to(3, Metric::Dtz).unwrap();
    let small: Vec<Material> = (2..=3).flat_map(Material::all_with_pieces).collect();
    run(&small, 1, &|p| mem.probe(p, Metric::Dtz).unwrap());
    let sample: Vec<Material> = SAMPLE_4
        .iter()
        .map(|s| Material::parse(s).unwrap())
        .collect();
    mem.generate_closure(&sample, Metric::Dtz).unwrap();
    run(&sample, 13, &|p| mem.probe(p, Metric::Dtz).unwrap());
}

#[test]
#[ignore = "long: every table up to 4 pieces; run explicitly after `antitb generate`"]
fn full_4_piece_comparison() {
    let dir = std::env::var("ANTITB_TABLES").unwrap_or_else(|_| "tables".to_string());
    let stride = std::env::var("ANTITB_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let tb = Tablebase::open(&[dir]).expect("table directory");
    let all: Vec<Material> = (2..=4).flat_map(Material::all_with_pieces).collect();
    run(&all, stride, &|p| tb.probe_dtz(p).unwrap().value());
}
