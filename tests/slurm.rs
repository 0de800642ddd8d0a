//! The table graph through a real Slurm: every table up to 3 pieces built by the jobs that
//! `antitb plan --format slurm` submits, on the one-node cluster of `scripts/slurm-cluster.sh`.
//!
//! Ignored by a plain `cargo test` (it needs root and the Slurm daemons); `scripts/slurm-test.sh`
//! (run by `.ci/run`) starts the cluster and runs it with `--ignored`. Run any other way, without
//! a cluster, it fails and says why. It checks:
//!
//! 1. the jobs, submitted held, carry `afterok` on exactly the jobs of their dependencies in the
//!    JSON plan (read back with `scontrol show job`), their material as name, `--mem` at least
//!    the plan's estimate, `--cpus-per-task`; a second run of the script while they are queued
//!    submits nothing;
//! 2. released, they all complete, and the files are byte-identical to a direct
//!    `antitb generate --max-pieces 3` and to the SHA-256 list `tables/CHECKSUMS`;
//! 3. with one table and everything above it deleted and one of its dependencies corrupted after
//!    submission, that table's job fails with a one-line error naming the file, and its
//!    dependants are cancelled (`DependencyNeverSatisfied`) without ever running; once the file
//!    is repaired, the script written again submits exactly the missing tables, which complete.

mod common;

use common::cli::TempDir;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const ANTITB: &str = env!("CARGO_BIN_EXE_antitb");
const TEMP_PREFIX: &str = "antitb-slurm-";

/// Run a command; panic with its output unless it succeeds; return its stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn antitb(args: &[&str]) -> String {
    run(Command::new(ANTITB).args(args))
}

/// The table files of a directory with their bytes.
fn table_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().into_string().expect("utf-8 name"))
        .filter(|n| [".wdl", ".dtz", ".dtw"].iter().any(|x| n.ends_with(x)))
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).expect("read file");
            (n, bytes)
        })
        .collect()
}

/// One job record of `scontrol show job --oneliner`: `Key=value` fields (a value with spaces,
/// as `Command=script ARGS`, keeps its words).
type Record = HashMap<String, String>;

fn jobs() -> Vec<Record> {
    let out = run(Command::new("scontrol").args(["show", "job", "--oneliner"]));
    out.lines()
        .filter(|l| l.starts_with("JobId="))
        .map(|line| {
            let mut rec = Record::new();
            let mut last = String::new();
            for word in line.split_whitespace() {
                match word.split_once('=') {
                    Some((k, v)) if !k.is_empty() && !k.starts_with('/') => {
                        rec.insert(k.to_string(), v.to_string());
                        last = k.to_string();
                    }
                    _ => {
                        if let Some(v) = rec.get_mut(&last) {
                            v.push(' ');
                            v.push_str(word);
                        }
                    }
                }
            }
            rec
        })
        .collect()
}

/// Does the array task list `0-14`, `3,5-7` or `2-9%4` hold `task`?
fn tasks_hold(list: &str, task: u32) -> bool {
    list.split('%').next().unwrap_or("").split(',').any(|r| {
        let (a, b) = r.split_once('-').unwrap_or((r, r));
        matches!((a.parse::<u32>(), b.parse::<u32>()), (Ok(a), Ok(b)) if (a..=b).contains(&task))
    })
}

/// The record of job `id` (`123`, or `123_4` for a task of an array).
fn record<'a>(recs: &'a [Record], id: &str) -> &'a Record {
    let found = match id.split_once('_') {
        Some((array, task)) => {
            let task: u32 = task.parse().expect("task index");
            recs.iter().find(|r| {
                r.get("ArrayJobId").map(String::as_str) == Some(array)
                    && r.get("ArrayTaskId").is_some_and(|l| tasks_hold(l, task))
            })
        }
        None => recs
            .iter()
            .find(|r| r["JobId"] == id && !r.contains_key("ArrayJobId")),
    };
    found.unwrap_or_else(|| panic!("no record of job {id} in scontrol show job"))
}

/// The job ids of `Dependency=afterok:1_1(unfulfilled),afterok:2(unfulfilled)`.
fn afterok(dep: &str) -> BTreeSet<String> {
    if dep == "(null)" {
        return BTreeSet::new();
    }
    dep.split(',')
        .flat_map(|d| {
            let d = d.split('(').next().unwrap_or("");
            let ids = d
                .strip_prefix("afterok:")
                .unwrap_or_else(|| panic!("not an afterok dependency: {dep}"));
            ids.split(':').map(str::to_string).collect::<Vec<_>>()
        })
        .collect()
}

/// `256M`, `2G` → MiB.
fn mib(s: &str) -> u64 {
    let (n, unit) = s.split_at(s.len() - 1);
    let n: u64 = n.parse().unwrap_or_else(|_| panic!("memory {s}"));
    match unit {
        "M" => n,
        "G" => n << 10,
        "T" => n << 20,
        _ => panic!("memory {s}"),
    }
}

/// `MATERIAL JOBID` lines of the jobs file, last one per material.
fn job_list(logs: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(logs.join("jobs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(m, id)| (m.to_string(), id.to_string()))
        .collect()
}

fn lines_of(logs: &Path) -> usize {
    std::fs::read_to_string(logs.join("jobs"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// Write the submission script for every table up to 3 pieces into `tables` and run it.
fn submit(tables: &str, name: &str, hold: bool) -> String {
    let script = Path::new(tables).join(name);
    let text = antitb(&[
        "plan",
        "--max-pieces",
        "3",
        "--format",
        "slurm",
        "--tables",
        tables,
        "--threads",
        "1",
    ]);
    std::fs::write(&script, text).expect("write script");
    let mut cmd = Command::new("bash");
    cmd.arg(&script);
    if hold {
        cmd.arg("--hold");
    }
    run(&mut cmd)
}

/// Release every held job of `ids` (array ids once).
fn release(ids: &BTreeMap<String, String>) {
    let mut base: Vec<&str> = ids
        .values()
        .map(|id| id.split('_').next().unwrap())
        .collect();
    base.sort();
    base.dedup();
    run(Command::new("scontrol").arg("release").arg(base.join(",")));
}

/// Wait until the queue is empty (every job finished, failed or cancelled).
fn wait_for_queue(limit: Duration) {
    let start = Instant::now();
    loop {
        let q = run(Command::new("squeue").args(["--noheader", "--format", "%i %T %r"]));
        if q.trim().is_empty() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "jobs still queued after {limit:?}:\n{q}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// A table of the JSON plan: its direct dependencies and memory estimate (bytes).
struct Planned {
    deps: Vec<String>,
    memory: u64,
}

fn json_plan() -> BTreeMap<String, Planned> {
    let j: Json = serde_json::from_str(&antitb(&["plan", "--max-pieces", "3", "--format", "json"]))
        .expect("plan JSON");
    j["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .map(|t| {
            let deps = t["deps"].as_array().expect("deps").iter();
            let planned = Planned {
                deps: deps.map(|d| d.as_str().unwrap().to_string()).collect(),
                memory: t["memory_bytes"].as_u64().expect("memory_bytes"),
            };
            (t["material"].as_str().unwrap().to_string(), planned)
        })
        .collect()
}

/// Check the held jobs of `submitted` against the plan: afterok on exactly the jobs of the
/// dependencies that were submitted too, name, memory, threads. Prints one line per job.
fn check_held_jobs(
    submitted: &BTreeMap<String, String>,
    plan: &BTreeMap<String, Planned>,
    all_jobs: &BTreeMap<String, String>,
) {
    let recs = jobs();
    let material_of: HashMap<&str, &str> = all_jobs
        .iter()
        .map(|(m, id)| (id.as_str(), m.as_str()))
        .collect();
    for (m, id) in submitted {
        let r = record(&recs, id);
        assert_eq!(r["JobState"], "PENDING", "{m} ({id})");
        assert_eq!(r["Reason"], "JobHeldUser", "{m} ({id}) is not held");
        let got: BTreeSet<String> = afterok(&r["Dependency"])
            .iter()
            .map(|d| {
                material_of
                    .get(d.as_str())
                    .unwrap_or_else(|| panic!("{m} waits for job {d}, which is no table's"))
                    .to_string()
            })
            .collect();
        let want: BTreeSet<String> = plan[m]
            .deps
            .iter()
            .filter(|d| submitted.contains_key(*d))
            .cloned()
            .collect();
        assert_eq!(got, want, "{m} ({id}): afterok list {}", r["Dependency"]);
        if id.contains('_') {
            assert!(
                r["JobName"].starts_with(&format!("{}+", r["Command"].split(' ').nth(1).unwrap())),
                "array name {}",
                r["JobName"]
            );
        } else {
            assert_eq!(&r["JobName"], m, "job name of {id}");
        }
        let mem = mib(&r["MinMemoryNode"]);
        assert!(
            mem << 20 >= plan[m].memory,
            "{m}: --mem {mem} MiB under the estimate {}",
            plan[m].memory
        );
        assert_eq!(r["CPUs/Task"], "1", "{m}: --cpus-per-task");
        println!(
            "  {m:<5} job {id:<7} --mem={mem}M --time={} afterok: {}",
            r["TimeLimit"],
            if got.is_empty() {
                "-".to_string()
            } else {
                got.iter()
                    .map(|d| format!("{d}({})", all_jobs[d]))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        );
    }
}

/// Every table file of `dir` has the SHA-256 that `tables/CHECKSUMS` lists for it.
fn check_against_published(files: &BTreeMap<String, Vec<u8>>) {
    let list = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tables/CHECKSUMS"))
        .expect("tables/CHECKSUMS");
    let published: HashMap<&str, &str> = list
        .lines()
        .filter_map(|l| l.split_once("  "))
        .map(|(h, n)| (n, h))
        .collect();
    for (name, bytes) in files {
        let hash: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let want = published
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{name} is not in tables/CHECKSUMS"));
        assert_eq!(&hash, want, "{name} differs from tables/CHECKSUMS");
    }
}

/// Tables of `plan` that need `root`, directly or not (with `root`).
fn dependants(root: &str, plan: &BTreeMap<String, Planned>) -> BTreeSet<String> {
    let mut out = BTreeSet::from([root.to_string()]);
    loop {
        let more: Vec<String> = plan
            .iter()
            .filter(|(m, p)| !out.contains(*m) && p.deps.iter().any(|d| out.contains(d)))
            .map(|(m, _)| m.clone())
            .collect();
        if more.is_empty() {
            return out;
        }
        out.extend(more);
    }
}

#[test]
#[ignore = "needs a Slurm cluster: run scripts/slurm-test.sh (as root)"]
fn slurm_builds_the_three_piece_set() {
    assert!(
        std::env::var_os("SLURM_CONF").is_some()
            && Command::new("sinfo")
                .output()
                .is_ok_and(|o| o.status.success()),
        "FAIL: no Slurm cluster to submit to (SLURM_CONF unset or sinfo failing): run scripts/slurm-test.sh"
    );
    let plan = json_plan();
    assert_eq!(plan.len(), 147);

    // The reference: a direct run on the whole machine.
    let direct = TempDir::new(TEMP_PREFIX, "direct");
    let t = Instant::now();
    antitb(&[
        "generate",
        "--max-pieces",
        "3",
        "--tables",
        direct.str(),
        "--quiet",
        "--no-checksums",
    ]);
    let direct_time = t.elapsed();
    let reference = table_files(&direct.0);
    assert_eq!(reference.len(), 3 * 147);
    check_against_published(&reference);

    // 1. Submitted held: read the jobs back.
    let dir = TempDir::new(TEMP_PREFIX, "tables");
    let logs = dir.0.join("slurm");
    let t = Instant::now();
    let out = submit(dir.str(), "submit.sh", true);
    let submit_time = t.elapsed();
    print!("{out}");
    let first = job_list(&logs);
    assert_eq!(first.len(), 147, "a job per table");
    let arrays: BTreeSet<&str> = first
        .values()
        .filter_map(|id| id.split_once('_').map(|(a, _)| a))
        .collect();
    println!(
        "submitted {} jobs ({} of them in {} arrays), held; afterok lists read back:",
        first.len(),
        first.values().filter(|id| id.contains('_')).count(),
        arrays.len()
    );
    check_held_jobs(&first, &plan, &first);
    println!(
        "all {} afterok lists equal the plan's dependencies",
        first.len()
    );
    let again = submit(dir.str(), "submit.sh", true);
    assert!(again.contains("submit: 0 tables"), "{again}");
    assert_eq!(lines_of(&logs), 147, "a second run submitted jobs");
    println!("a second run while they are queued submits nothing");

    // 2. Released: they all complete, to the same bytes.
    let t = Instant::now();
    release(&first);
    wait_for_queue(Duration::from_secs(1200));
    let slurm_time = t.elapsed();
    let recs = jobs();
    for (m, id) in &first {
        let r = record(&recs, id);
        assert_eq!(
            (r["JobState"].as_str(), r["ExitCode"].as_str()),
            ("COMPLETED", "0:0"),
            "{m} ({id})"
        );
        assert!(logs.join(format!("{m}.log")).is_file(), "no log for {m}");
    }
    let built = table_files(&dir.0);
    assert!(
        built == reference,
        "the Slurm build differs from the direct one"
    );
    check_against_published(&built);
    println!(
        "147 jobs completed in {:.1} s (released to empty queue; submission {:.1} s); direct generate: {:.1} s \
         ({:.1}x); {} files byte-identical to the direct run and to tables/CHECKSUMS",
        slurm_time.as_secs_f64(),
        submit_time.as_secs_f64(),
        direct_time.as_secs_f64(),
        slurm_time.as_secs_f64() / direct_time.as_secs_f64(),
        built.len()
    );

    // 3. A failing job: KQvK and everything above it deleted, its dependency corrupted once the
    //    jobs are queued.
    let victim = "KQvK";
    let missing = dependants(victim, &plan);
    for m in &missing {
        for ext in ["wdl", "dtz", "dtw"] {
            std::fs::remove_file(dir.0.join(format!("{m}.{ext}"))).expect("delete table");
        }
    }
    let bad_dep = plan[victim]
        .deps
        .first()
        .expect("KQvK has dependencies")
        .clone();
    let before = lines_of(&logs);
    let out = submit(dir.str(), "submit-2.sh", true);
    print!("{out}");
    let all = job_list(&logs);
    let second: BTreeMap<String, String> = missing
        .iter()
        .map(|m| (m.clone(), all[m].clone()))
        .collect();
    assert_eq!(
        lines_of(&logs) - before,
        missing.len(),
        "submitted other tables than the missing ones"
    );
    println!(
        "deleted {} ({} tables: {victim} and those that need it); resubmitted exactly them, held:",
        missing.iter().cloned().collect::<Vec<_>>().join(" "),
        missing.len()
    );
    check_held_jobs(&second, &plan, &all);
    let dep_file = dir.0.join(format!("{bad_dep}.wdl"));
    let good = std::fs::read(&dep_file).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    std::fs::write(&dep_file, &bad).unwrap();
    release(&second);
    wait_for_queue(Duration::from_secs(600));
    let recs = jobs();
    let failed = record(&recs, &second[victim]);
    assert_eq!(
        (failed["JobState"].as_str(), failed["ExitCode"].as_str()),
        ("FAILED", "2:0"),
        "{victim}'s job"
    );
    let log = std::fs::read_to_string(logs.join(format!("{victim}.log"))).expect("victim log");
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {log}");
    assert!(
        errors[0].contains(&format!("{bad_dep}.wdl")) && errors[0].contains("checksum mismatch"),
        "{}",
        errors[0]
    );
    println!(
        "{bad_dep}.wdl corrupted after submission: {victim} (job {}) FAILED, exit 2: {}",
        second[victim], errors[0]
    );
    for m in missing.iter().filter(|m| *m != victim) {
        let r = record(&recs, &second[m]);
        assert_eq!(
            (r["JobState"].as_str(), r["Reason"].as_str()),
            ("CANCELLED", "DependencyNeverSatisfied"),
            "{m} ({})",
            second[m]
        );
        assert!(
            !logs.join(format!("{m}.log")).exists() && !dir.0.join(format!("{m}.wdl")).exists(),
            "{m} ran"
        );
        println!(
            "  {m} (job {}) CANCELLED (DependencyNeverSatisfied), never ran: no log, no files",
            second[m]
        );
    }

    // Repaired: the script written again submits exactly the missing tables.
    std::fs::write(&dep_file, &good).unwrap();
    let before = lines_of(&logs);
    let out = submit(dir.str(), "submit-3.sh", false);
    print!("{out}");
    let third_all = job_list(&logs);
    let resubmitted: BTreeSet<String> = std::fs::read_to_string(logs.join("jobs"))
        .unwrap()
        .lines()
        .skip(before)
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(resubmitted, missing, "resubmitted after the repair");
    assert_eq!(lines_of(&logs) - before, missing.len());
    wait_for_queue(Duration::from_secs(600));
    let recs = jobs();
    for m in &missing {
        let r = record(&recs, &third_all[m]);
        assert_eq!(r["JobState"], "COMPLETED", "{m} ({})", third_all[m]);
    }
    let built = table_files(&dir.0);
    assert!(built == reference, "the repaired build differs");
    println!(
        "{bad_dep} repaired: resubmitted exactly {} ({}), all completed; files byte-identical again",
        resubmitted.iter().cloned().collect::<Vec<_>>().join(" "),
        resubmitted.len()
    );
    let out = submit(dir.str(), "submit-4.sh", false);
    assert!(out.contains("submit: 0 tables"), "{out}");
    println!("with every table present, the script submits nothing");
}
