//! DTW (SPEC.md §3) on 4-piece tables, checked position by position against its own
//! definition and against the 50-move-rule value:
//! * a win in `d` has a move to a loss in `d−1` and none to a loss in less;
//! * a loss in `d` has every move leading to a win in at most `d−1`, one in exactly `d−1`;
//! * a draw has no move to a loss and some move to a draw;
//! * DTW says "win" exactly when WDL is +2 or +1.
//!
//! (Every 2- and 3-piece DTW value is also compared with the naive solver in gen_vs_naive.)

use antitb::r#gen::MemoryTables;
use antitb::rules::Position;
use antitb::table::{Index, Material, Metric, Value};

fn check(mem: &MemoryTables, m: Material) -> (u64, u64) {
    let index = Index::new(m);
    let (mut checked, mut bad) = (0u64, 0u64);
    let mut fail = |pos: &Position, what: String| {
        bad += 1;
        if bad <= 10 {
            eprintln!("{m} {pos}: {what}");
        }
    };
    for side in 0..2 {
        for idx in 0..index.size() {
            let Some(pos) = index.decode(side, idx) else {
                continue;
            };
            checked += 1;
            let v = mem.probe(&pos, Metric::Dtw).unwrap();
            let z = mem.probe(&pos, Metric::Dtz).unwrap();
            if v.is_win() != z.wdl().is_win() || v.is_loss() != z.wdl().is_loss() {
                fail(&pos, format!("DTW {v:?} but WDL {:?}", z.wdl()));
            }
            let moves = pos.legal_moves();
            if moves.is_empty() {
                if v != Value::win(0) {
                    fail(&pos, format!("no legal move but DTW {v:?}"));
                }
                continue;
            }
            let children: Vec<Value> = moves
                .iter()
                .map(|m| mem.probe(&pos.after(m), Metric::Dtw).unwrap())
                .collect();
            let d = u32::from(v.distance());
            if v.is_win() {
                let best = children
                    .iter()
                    .filter(|c| c.is_loss())
                    .map(|c| u32::from(c.distance()))
                    .min();
                if best != Some(d - 1) {
                    fail(
                        &pos,
                        format!("win in {d}, shortest move to a loss: {best:?}"),
                    );
                }
            } else if v.is_loss() {
                let all_win = children
                    .iter()
                    .all(|c| c.is_win() && u32::from(c.distance()) < d);
                let exact = children
                    .iter()
                    .any(|c| c.is_win() && u32::from(c.distance()) == d - 1);
                if !all_win || !exact {
                    fail(&pos, format!("loss in {d}, children {children:?}"));
                }
            } else if children.iter().any(|c| c.is_loss()) || !children.iter().any(|c| c.is_draw())
            {
                fail(&pos, format!("draw, children {children:?}"));
            }
        }
    }
    (checked, bad)
}

#[test]
fn dtw_is_consistent_on_4_piece_tables() {
    let sample: Vec<Material> = ["KRvKN", "KPvKN"]
        .iter()
        .map(|s| Material::parse(s).unwrap().canonical())
        .collect();
    let mut mem = MemoryTables::new();
    mem.generate_closure(&sample, Metric::Dtz).unwrap();
    mem.generate_closure(&sample, Metric::Dtw).unwrap();
    let (mut checked, mut bad) = (0, 0);
    for &m in &sample {
        let (c, b) = check(&mem, m);
        checked += c;
        bad += b;
    }
    println!(
        "{checked} positions of {} 4-piece tables checked, {bad} inconsistencies",
        sample.len()
    );
    assert!(checked > 1_000_000);
    assert_eq!(bad, 0);
}
