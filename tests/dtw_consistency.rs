//! DTW (SPEC.md §3) on 4-piece tables, checked position by position against its own
//! definition and against the 50-move-rule value:
//! * a win in `d` has a move to a loss in `d−1` and none to a loss in less;
//! * a loss in `d` has every move leading to a win in at most `d−1`, one in exactly `d−1`;
//! * a draw has no move to a loss and some move to a draw;
//! * DTW says "win" exactly when WDL is +2 or +1.
//!
//! (Every 2- and 3-piece DTW value is also compared with the naive solver in gen_vs_naive.)
//!
//! And the two ways a build reads the side to move a `.dtw` file leaves out, from the side files
//! of its own run or by search, give the same files.

mod common;

use antitb::build::{BuildOptions, SIDES_DIR, build};
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

/// A run reads the sides its own `.dtw` files leave out from side files (`antitb::store::side`)
/// instead of searching them slot by slot; a table built from the files of an earlier run
/// searches them. Both must give the same bytes, and the side files are gone when the run ends.
#[test]
fn side_files_of_a_run_give_the_files_a_search_gives() {
    use common::cli::TempDir;
    let m = Material::parse("KPvKN").unwrap().canonical();
    let base = TempDir::new("antitb-test-", "dtw-sides");
    let options = |dir: &std::path::Path| {
        let mut opts = BuildOptions::new(dir);
        opts.dtw = true;
        opts.check_disk = false;
        opts
    };
    // KPvKN and everything it needs in one run.
    let run = base.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let report = build(&[m], &options(&run), &|_| {}).unwrap();
    // Its promotions reach KQvKN, KRvKN, KBvKN, KNvKN and KKvKN, built before it in the run,
    // each with a side left out of its `.dtw` file (more than three pieces).
    assert_eq!(report.dtw_sides_read, 5, "{report:?}");
    let names: Vec<String> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(SIDES_DIR)),
        "side files left behind: {names:?}"
    );
    // KPvKN alone, from the other tables of that run: no side files, so its DTW solve searches.
    let deps = base.path().join("deps");
    std::fs::create_dir_all(&deps).unwrap();
    for n in names.iter().filter(|n| !n.starts_with(&format!("{m}."))) {
        std::fs::copy(run.join(n), deps.join(n)).unwrap();
    }
    let alone = base.path().join("alone");
    // A killed run's side files (its process no longer runs) are removed.
    let stale = alone.join(format!("{SIDES_DIR}.tmp.999999999"));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("KQvKN.dtw-side"), b"a killed run's side file").unwrap();
    let mut opts = options(&alone);
    opts.extra_dirs = vec![deps];
    let report = build(&[m], &opts, &|_| {}).unwrap();
    assert_eq!(report.built, [m]);
    assert_eq!(report.dtw_sides_read, 0);
    assert_eq!(report.stale_removed, 1);
    assert!(!stale.exists(), "a killed run's side files were kept");
    for ext in ["wdl", "dtz", "dtw"] {
        let name = format!("{m}.{ext}");
        assert!(
            std::fs::read(run.join(&name)).unwrap() == std::fs::read(alone.join(&name)).unwrap(),
            "{name} differs between the run that read side files and the one that searched"
        );
    }
}
