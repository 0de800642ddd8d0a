//! `antitb stats` on tables built into a temporary directory: the JSON parses, its counts add up
//! to the stored positions (counted here independently through the library's index), the
//! longest wins are what a probe says, and nothing is ever generated.

mod common;

use antitb::probe::Tablebase;
use antitb::table::{Index, Material};
use common::cli::{TempDir, antitb, text};
use serde_json::Value as Json;

const TEMP_PREFIX: &str = "antitb-test-";

fn sum_pairs(v: &Json) -> u64 {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_u64().unwrap())
        .sum()
}

fn hist_total(h: &Json) -> u64 {
    sum_pairs(&h["wins"]) + sum_pairs(&h["losses"]) + h["draws"].as_u64().unwrap()
}

fn wdl_total(w: &Json) -> u64 {
    ["win", "cursed_win", "draw", "blessed_loss", "loss"]
        .iter()
        .map(|k| w[k].as_u64().unwrap())
        .sum()
}

#[test]
fn stats_json_adds_up() {
    let dir = TempDir::new(TEMP_PREFIX, "stats");
    let d = dir.0.to_str().unwrap();
    let out = antitb(&["generate", "KPvK", "KRvN", "--tables", d, "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tb = Tablebase::open(&[&dir.0]).unwrap();
    for name in ["KPvK", "KRvN"] {
        let files_before = std::fs::read_dir(&dir.0).unwrap().count();
        let out = antitb(&["stats", name, "--tables", d, "--json", "--resolve-captures"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(
            std::fs::read_dir(&dir.0).unwrap().count(),
            files_before,
            "stats wrote files"
        );
        let j: Json = serde_json::from_slice(&out.stdout).expect("stats --json is JSON");
        assert_eq!(j["material"], name);
        assert!(
            j["counted"].as_str().unwrap().contains("capture"),
            "says what it counts"
        );
        // Independent count of stored positions: valid slots without a capture.
        let m = Material::parse(name).unwrap();
        let index = Index::new(m);
        assert_eq!(j["slots_per_side"].as_u64().unwrap(), index.size());
        for (side, s) in j["sides"].as_array().unwrap().iter().enumerate() {
            let (mut stored, mut captures) = (0, 0);
            for idx in 0..index.size() {
                if let Some(p) = index.decode(side, idx) {
                    if p.has_capture() {
                        captures += 1
                    } else {
                        stored += 1
                    }
                }
            }
            assert_eq!(s["stored"].as_u64().unwrap(), stored, "{name} side {side}");
            assert_eq!(
                s["captures"].as_u64().unwrap(),
                captures,
                "{name} side {side}"
            );
            assert_eq!(
                wdl_total(&s["wdl"]),
                stored,
                "{name} side {side}: WDL counts"
            );
            assert_eq!(
                wdl_total(&s["captures_wdl"]),
                captures,
                "{name} side {side}: resolved captures"
            );
            assert_eq!(
                hist_total(&s["dtz"]),
                stored,
                "{name} side {side}: DTZ histogram"
            );
            assert_eq!(
                hist_total(&s["dtw"]),
                stored,
                "{name} side {side}: DTW histogram"
            );
            assert_eq!(s["dtz"]["draws"], s["wdl"]["draw"]);
            // The longest win is what a probe of its example position says.
            for (metric, h) in [("dtz", &s["dtz"]), ("dtw", &s["dtw"])] {
                let l = &h["longest_win"];
                if l.is_null() {
                    continue;
                }
                let pos = l["fen"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .expect("example FEN parses");
                let v = if metric == "dtz" {
                    tb.probe_dtz(&pos).unwrap().value()
                } else {
                    tb.probe_dtw(&pos).unwrap().value()
                };
                assert!(v.is_win(), "{name} {metric} {l}");
                assert_eq!(
                    u64::from(v.distance()),
                    l["plies"].as_u64().unwrap(),
                    "{name} {metric} {l}"
                );
                let longest = h["wins"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p[0].as_u64().unwrap())
                    .max()
                    .unwrap();
                assert_eq!(longest, l["plies"].as_u64().unwrap());
            }
        }
    }
    // The text form names what it counts and both sides.
    let out = antitb(&["stats", "KRvN", "--tables", d]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(
        t.contains("White to move") && t.contains("Black to move") && t.contains("DTW longest win"),
        "{t}"
    );
}

#[test]
fn stats_refuses_bad_or_missing_tables() {
    let dir = TempDir::new(TEMP_PREFIX, "stats-missing");
    let d = dir.0.to_str().unwrap();
    for (args, want) in [
        (vec!["stats", "KQvK", "--tables", d], "missing table file"),
        (
            vec!["stats", "KZvK", "--tables", d],
            "unknown piece letter 'Z'",
        ),
        (
            vec!["stats", "Kv", "--tables", d],
            "has a side without pieces",
        ),
    ] {
        let out = antitb(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert_eq!(
        std::fs::read_dir(&dir.0).unwrap().count(),
        0,
        "stats generated something"
    );
}
