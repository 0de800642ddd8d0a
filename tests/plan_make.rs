//! `antitb plan`: the JSON plan is a valid build order with estimates, and the Makefile builds
//! the 3-piece set from scratch with `make -j2`, byte for byte as a direct `generate` does.

mod common;

use common::cli::{TempDir, antitb, contents, text};
use serde_json::Value as Json;
use std::collections::HashSet;
use std::process::Command;

const TEMP_PREFIX: &str = "antitb-test-";

#[test]
fn json_plan_is_a_build_order_with_estimates() {
    let out = antitb(&["plan", "--max-pieces", "4", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let j: Json = serde_json::from_slice(&out.stdout).expect("plan JSON");
    let tables = j["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 21 + 126 + 567);
    let mut seen = HashSet::new();
    for t in tables {
        for d in t["deps"].as_array().unwrap() {
            assert!(
                seen.contains(d.as_str().unwrap()),
                "{} comes before its dependency {d}",
                t["material"]
            );
        }
        assert!(t["memory_bytes"].as_u64().unwrap() > 0 && t["disk_bytes"].as_u64().unwrap() > 0);
        assert!(t["cpu_seconds"].as_f64().unwrap() >= 0.0);
        assert_eq!(t["command"][1], "generate");
        seen.insert(t["material"].as_str().unwrap().to_string());
    }
    // A single 5-piece target plans its whole closure, the target last.
    let out = antitb(&["plan", "KQRvBN", "--format", "json"]);
    let j: Json = serde_json::from_slice(&out.stdout).unwrap();
    let tables = j["tables"].as_array().unwrap();
    assert_eq!(tables.last().unwrap()["material"], "KQRvBN");
    assert!(tables.iter().any(|t| t["material"] == "KvB"));
    // Bad input: one line, exit 2.
    let out = antitb(&["plan", "KQvX"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown piece letter 'X'"));
}

#[test]
fn makefile_builds_the_three_piece_set() {
    if Command::new("make").arg("--version").output().is_err() {
        eprintln!("SKIPPED makefile_builds_the_three_piece_set: make is not installed");
        return;
    }
    let dir = TempDir::new(TEMP_PREFIX, "plan-make");
    let out = antitb(&["plan", "--max-pieces", "3", "--format", "make"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(dir.0.join("Makefile"), &out.stdout).unwrap();
    let make = Command::new("make")
        .args([
            "-j2",
            "-s",
            &format!("ANTITB={}", env!("CARGO_BIN_EXE_antitb")),
            "TABLES=tables",
        ])
        .current_dir(&dir.0)
        .output()
        .expect("run make");
    assert!(
        make.status.success(),
        "make failed: {}{}",
        text(&make.stdout),
        text(&make.stderr)
    );
    // A second make has nothing to do.
    let again = Command::new("make")
        .args([
            "-j2",
            "-q",
            &format!("ANTITB={}", env!("CARGO_BIN_EXE_antitb")),
            "TABLES=tables",
        ])
        .current_dir(&dir.0)
        .status()
        .unwrap();
    assert!(
        again.success(),
        "make -q: targets are not up to date after a build"
    );

    let direct = dir.0.join("direct");
    let out = antitb(&[
        "generate",
        "--max-pieces",
        "3",
        "--tables",
        direct.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (a, b) = (contents(&dir.0.join("tables")), contents(&direct));
    assert_eq!(a.len(), 3 * 147);
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &b {
        assert!(
            a[name] == *bytes,
            "{name}: the Makefile build differs from a direct generate"
        );
    }
}
