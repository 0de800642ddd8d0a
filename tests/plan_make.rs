//! `antitb plan`: the JSON plan is a valid build order with estimates, the Makefile builds
//! the 3-piece set from scratch with `make -j2`, byte for byte as a direct `generate` does, and
//! the Slurm script's `--dry-run` submits the graph of the JSON plan (tests/slurm.rs runs it on a
//! real Slurm).

mod common;

use common::cli::{TempDir, antitb, contents, text};
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet, HashSet};
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
        // The peak's parts: the solver with the tables it reads, and the writer after them.
        let part = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k}: {t}"));
        assert!(part("solver_bytes") > 0 && part("writer_bytes") > 0, "{t}");
        let parts = (part("solver_bytes") + part("sources_bytes")).max(part("writer_bytes"));
        assert!(parts < part("memory_bytes"), "{t}");
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

/// The `sbatch` lines of a Slurm script's `--dry-run`: each submission's tables, the tables its
/// jobs wait for, and its options. Job ids are `dryN` (N-th submission) and `dryN_I` (task I).
#[test]
fn slurm_script_dry_run_submits_the_json_graph() {
    let dir = TempDir::new(TEMP_PREFIX, "plan-slurm");
    let tables = dir.0.to_str().unwrap();
    // The 2-piece tables are present: not submitted, and nobody waits for them.
    let out = antitb(&[
        "generate",
        "--max-pieces",
        "2",
        "--tables",
        tables,
        "--metrics",
        "wdl,dtz",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = |format: &str| {
        antitb(&[
            "plan",
            "--max-pieces",
            "3",
            "--metrics",
            "wdl,dtz",
            "--format",
            format,
            "--tables",
            tables,
            "--threads",
            "2",
        ])
    };
    let out = plan("slurm");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("126 tables to build (21 already present)"),
        "{}",
        text(&out.stderr)
    );
    let script = dir.0.join("submit.sh");
    std::fs::write(&script, &out.stdout).unwrap();
    let json: Json = serde_json::from_slice(&plan("json").stdout).unwrap();
    let deps: BTreeMap<String, Vec<String>> = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let d = t["deps"].as_array().unwrap();
            let d = d.iter().map(|x| x.as_str().unwrap().to_string());
            (t["material"].as_str().unwrap().to_string(), d.collect())
        })
        .collect();
    let memory: BTreeMap<&str, u64> = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["material"].as_str().unwrap(),
                t["memory_bytes"].as_u64().unwrap(),
            )
        })
        .collect();

    let dry = Command::new("bash")
        .arg(&script)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let mut table_of = BTreeMap::new();
    let mut waits = BTreeMap::new();
    let lines: Vec<String> = text(&dry.stdout)
        .lines()
        .filter(|l| l.starts_with("sbatch "))
        .map(String::from)
        .collect();
    for (n, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split(' ').collect();
        let opt = |name: &str| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(&format!("--{name}=")))
                .map(String::from)
        };
        let script_at = words
            .iter()
            .position(|w| w.ends_with("antitb-job.sh"))
            .unwrap();
        let tables = &words[script_at + 1..];
        assert_eq!(opt("kill-on-invalid-dep").as_deref(), Some("yes"), "{line}");
        assert_eq!(opt("cpus-per-task").as_deref(), Some("2"), "{line}");
        let mem: u64 = opt("mem").unwrap().trim_end_matches('M').parse().unwrap();
        let ids = opt("dependency").map_or(Vec::new(), |d| {
            d.strip_prefix("afterok:")
                .unwrap()
                .split(':')
                .map(String::from)
                .collect()
        });
        if tables.len() == 1 {
            assert_eq!(opt("job-name").as_deref(), Some(tables[0]), "{line}");
        } else {
            assert_eq!(
                opt("array"),
                Some(format!("0-{}", tables.len() - 1)),
                "{line}"
            );
        }
        for (i, t) in tables.iter().enumerate() {
            assert!(
                mem << 20 >= memory[t],
                "{t}: --mem={mem}M under its estimate"
            );
            let id = if tables.len() == 1 {
                format!("dry{}", n + 1)
            } else {
                format!("dry{}_{i}", n + 1)
            };
            assert!(table_of.insert(id, t.to_string()).is_none());
            waits.insert(t.to_string(), ids.clone());
        }
    }
    assert_eq!(waits.len(), 126, "one job per 3-piece table");
    for (t, ids) in &waits {
        let got: BTreeSet<&str> = ids
            .iter()
            .map(|id| {
                table_of
                    .get(id)
                    .unwrap_or_else(|| panic!("{t} waits for {id}, no earlier job"))
                    .as_str()
            })
            .collect();
        let want: BTreeSet<&str> = deps[t]
            .iter()
            .filter(|d| d.len() > 3)
            .map(String::as_str)
            .collect();
        assert_eq!(got, want, "{t}: afterok");
    }
    // A submit limit: it stops before the submission that would pass it, and says so.
    let limited = Command::new("bash")
        .arg(&script)
        .args(["--dry-run", "--max-jobs", "10"])
        .output()
        .unwrap();
    assert_eq!(limited.status.code(), Some(3), "{}", text(&limited.stderr));
    let submitted: usize = text(&limited.stdout)
        .lines()
        .filter(|l| l.starts_with("sbatch "))
        .map(|l| {
            l.split(' ')
                .skip_while(|w| !w.ends_with("antitb-job.sh"))
                .count()
                - 1
        })
        .sum();
    assert!(
        (1..=10).contains(&submitted),
        "{submitted} jobs under --max-jobs 10"
    );
    assert!(text(&limited.stdout).contains("stopping at --max-jobs 10"));
}
