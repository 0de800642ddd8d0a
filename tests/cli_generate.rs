//! `antitb generate` as a user runs it: the built binary into temporary directories. A default-
//! style run (up to 3 pieces to stay short), resuming after a deleted table and after SIGKILL,
//! identical bytes for every thread count, the checksum comparison, and every bad input with its
//! one-line message and exit code.

mod common;

use common::cli::{TempDir, antitb, contents, text};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const TEMP_PREFIX: &str = "antitb-test-";

/// Tables up to 3 pieces: 21 + 126.
const TABLES_3: usize = 147;

/// The 3-piece set built once, uninterrupted, on one thread: the reference for the others.
fn reference() -> &'static BTreeMap<String, Vec<u8>> {
    static REF: OnceLock<BTreeMap<String, Vec<u8>>> = OnceLock::new();
    REF.get_or_init(|| {
        let dir = TempDir::new(TEMP_PREFIX, "reference");
        let out = antitb(&[
            "generate",
            "--max-pieces",
            "3",
            "--tables",
            dir.str(),
            "--threads",
            "1",
            "--quiet",
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            out.stdout.is_empty() && out.stderr.is_empty(),
            "--quiet printed something"
        );
        let files = contents(dir.path());
        assert_eq!(
            files.len(),
            3 * TABLES_3,
            "a .wdl, a .dtz and a .dtw file per table"
        );
        files
    })
}

fn assert_same_as_reference(dir: &Path) {
    let got = contents(dir);
    let want = reference();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "file names"
    );
    for (name, bytes) in want {
        assert!(
            got[name] == *bytes,
            "{name} differs from the uninterrupted one-thread build"
        );
    }
}

#[test]
fn default_style_run_then_resume_after_deleting_a_table() {
    let dir = TempDir::new(TEMP_PREFIX, "resume");
    let out = antitb(&["generate", "--max-pieces", "3", "--tables", dir.str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("147 built, 0 already present"),
        "summary: {stdout}"
    );
    assert!(
        stdout.lines().count() <= 12,
        "the summary fits on a screen: {stdout}"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("147 tables to build") && stderr.contains("[147/147]"),
        "progress lines: {stderr}"
    );
    assert_same_as_reference(dir.path());

    // Delete one table: only it is rebuilt, the other files are not touched.
    let victim = dir.path().join("KQvR.dtz");
    let mtimes = |d: &Path| -> BTreeMap<String, std::time::SystemTime> {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    e.metadata().unwrap().modified().unwrap(),
                )
            })
            .collect()
    };
    std::fs::remove_file(&victim).unwrap();
    let before = mtimes(dir.path());
    let out = antitb(&["generate", "--max-pieces", "3", "--tables", dir.str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("1 built, 146 already present"),
        "summary: {stdout}"
    );
    assert!(
        text(&out.stderr).contains("[1/1] KQvR"),
        "{}",
        text(&out.stderr)
    );
    let after = mtimes(dir.path());
    for (name, t) in &before {
        if name != "KQvR.wdl" {
            assert_eq!(after[name], *t, "{name} was rewritten");
        }
    }
    assert_same_as_reference(dir.path());

    // A corrupt file is not "present": it is rebuilt.
    let wdl = dir.path().join("KRvB.wdl");
    let mut bytes = std::fs::read(&wdl).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&wdl, bytes).unwrap();
    let out = antitb(&["generate", "KRvB", "--tables", dir.str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 built"),
        "{}",
        text(&out.stdout)
    );
    assert_same_as_reference(dir.path());
}

#[test]
fn killed_generation_resumes_to_identical_files() {
    let dir = TempDir::new(TEMP_PREFIX, "killed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_antitb"))
        .args(["generate", "--max-pieces", "3", "--tables", dir.str()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn antitb");
    // Wait until some tables are done, then SIGKILL in the middle of the build.
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut done = 0;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line.starts_with('[') {
            done += 1;
            if done == 40 {
                break;
            }
        }
    }
    assert_eq!(
        done, 40,
        "the build printed fewer table lines than expected"
    );
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().expect("SIGKILL");
    let status = child.wait().unwrap();
    assert!(!status.success(), "the build finished before it was killed");
    let partial = contents(dir.path());
    assert!(
        partial.len() < 3 * TABLES_3,
        "killed after the build was complete"
    );

    let out = antitb(&["generate", "--max-pieces", "3", "--tables", dir.str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        !stdout.contains(" 0 built"),
        "the rerun built nothing: {stdout}"
    );
    // No temporary file is left (a killed writer's one is cleaned up), and the bytes are those of
    // an uninterrupted run.
    assert!(
        contents(dir.path()).keys().all(|n| !n.contains(".tmp.")),
        "temporary files left"
    );
    assert_same_as_reference(dir.path());
}

#[test]
fn output_is_the_same_for_any_threads_and_tables_at_once() {
    // Two threads building two tables at once (the default), and one thread with four tables
    // in flight: the same bytes as the one-thread, one-table reference.
    for (threads, jobs) in [("2", None), ("1", Some("4"))] {
        let dir = TempDir::new(TEMP_PREFIX, &format!("threads{threads}"));
        let mut args = vec![
            "generate",
            "--max-pieces",
            "3",
            "--tables",
            dir.str(),
            "--threads",
            threads,
            "--quiet",
        ];
        if let Some(j) = jobs {
            args.extend(["--jobs", j]);
        }
        let out = antitb(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_same_as_reference(dir.path());
    }
    let dir = TempDir::new(TEMP_PREFIX, "jobs0");
    let out = antitb(&[
        "generate",
        "--max-pieces",
        "2",
        "--tables",
        dir.str(),
        "--jobs",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn checksums_are_compared_at_the_end() {
    let dir = TempDir::new(TEMP_PREFIX, "checksums");
    let out = antitb(&["generate", "KRvK", "--tables", dir.str(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list = antitb(&["checksums", "--tables", dir.str()]);
    assert!(list.status.success());
    let list = text(&list.stdout);
    assert_eq!(list.lines().count(), 9, "{list}");
    // The list agrees with sha256sum where it exists.
    if let Ok(o) = Command::new("sha256sum")
        .arg("KRvK.dtz")
        .current_dir(dir.path())
        .output()
    {
        let line = text(&o.stdout);
        assert!(
            list.contains(line.trim()),
            "sha256sum says {line}, antitb says {list}"
        );
    }
    std::fs::write(dir.path().join("CHECKSUMS"), &list).unwrap();
    let out = antitb(&["generate", "KRvK", "--tables", dir.str()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("checksums  9 files match"),
        "{}",
        text(&out.stdout)
    );

    let ok = antitb(&[
        "checksums",
        "--tables",
        dir.str(),
        "--against",
        dir.path().join("CHECKSUMS").to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(
        text(&ok.stdout).contains("9 files match"),
        "{}",
        text(&ok.stdout)
    );

    // One wrong line: generate and checksums --against both fail, naming the file.
    let wrong = list.replacen(&list[..64], &"0".repeat(64), 1);
    let first = list
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    std::fs::write(dir.path().join("CHECKSUMS"), wrong).unwrap();
    let out = antitb(&["generate", "KRvK", "--tables", dir.str()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("1 of 9 files differ") && err.contains(&first),
        "{err}"
    );
    let out = antitb(&[
        "checksums",
        "--tables",
        dir.str(),
        "--against",
        dir.path().join("CHECKSUMS").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains(&format!("DIFFERS  {first}")),
        "{}",
        text(&out.stdout)
    );
    // --no-checksums skips the comparison.
    let out = antitb(&["generate", "KRvK", "--tables", dir.str(), "--no-checksums"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// Run a failing command: exit code 2, one line on stderr containing `want`, nothing written.
fn assert_refused(args: &[&str], want: &str) {
    let out = antitb(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: expected '{want}' in: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: the error is one line: {err}"
    );
    assert!(err.starts_with("antitb: error: "), "{err}");
}

#[test]
fn bad_input_gets_a_one_line_error() {
    let dir = TempDir::new(TEMP_PREFIX, "bad");
    let d = dir.str();
    assert_refused(
        &["generate", "KXvK", "--tables", d],
        "unknown piece letter 'X'",
    );
    assert_refused(
        &["generate", "vK", "--tables", d],
        "has a side without pieces",
    );
    assert_refused(&["generate", "KQ", "--tables", d], "needs exactly one 'v'");
    assert_refused(
        &["generate", "KQRBvKQR", "--tables", d],
        "generate supports at most 6",
    );
    assert_refused(
        &["generate", "KQRBNvKQR", "--tables", d],
        "at most 7 are supported",
    );
    assert_refused(
        &["generate", "--max-pieces", "9", "--tables", d],
        "--max-pieces must be between 2 and 6",
    );
    assert_refused(
        &["generate", "KRvK", "--tables", d, "--memory-limit", "lots"],
        "bad size 'lots'",
    );
    assert_refused(
        &["generate", "KRvK", "--tables", d, "--threads", "0"],
        "--threads must be at least 1",
    );
    // Memory over the limit: the number is in the message, and nothing is built.
    assert_refused(
        &["generate", "KRvK", "--tables", d, "--memory-limit", "1M"],
        "(1048576 bytes)",
    );
    assert_refused(
        &["generate", "KRvK", "--tables", d, "--memory-limit", "1M"],
        "of memory, over the limit",
    );
    assert!(
        contents(dir.path()).is_empty(),
        "a refused build wrote files"
    );
    // A directory that cannot be created: a path under a regular file.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let under = file.join("tables");
    assert_refused(
        &["generate", "KRvK", "--tables", under.to_str().unwrap()],
        "table directory",
    );
    // stats must not generate: a missing table is an error.
    assert_refused(&["stats", "KRvK", "--tables", d], "missing table file");
    assert_eq!(contents(dir.path()).len(), 1, "stats wrote files");
}

/// A small tmpfs, unmounted when dropped. `None` where mounting is not allowed.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(name: &str, size: &str) -> Option<SmallFs> {
        let p = std::env::temp_dir().join(format!("antitb-test-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&p).ok()?;
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                p.to_str()?,
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            Some(SmallFs(p))
        } else {
            let _ = std::fs::remove_dir(&p);
            None
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn full_disk_is_refused_or_fails_cleanly() {
    let Some(fs) = SmallFs::mount("fulldisk", "48k") else {
        eprintln!(
            "SKIPPED full_disk_is_refused_or_fails_cleanly: cannot mount a tmpfs here (needs root)"
        );
        return;
    };
    let d = fs.0.to_str().unwrap();
    // The estimate of the files exceeds the free space: refused before any work, with numbers.
    assert_refused(
        &["generate", "--max-pieces", "3", "--tables", d],
        "of disk, but only",
    );
    assert!(contents(&fs.0).is_empty(), "a refused build wrote files");
    // Without the check the disk really fills: the error names it, and no half-written file
    // (temporary or final) is left; every file that is there is complete.
    let out = antitb(&[
        "generate",
        "--max-pieces",
        "3",
        "--tables",
        d,
        "--no-disk-check",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(
        err.trim_end()
            .lines()
            .filter(|l| l.starts_with("antitb: error"))
            .count(),
        1,
        "{err}"
    );
    let files = contents(&fs.0);
    assert!(
        !files.is_empty(),
        "nothing fitted: make the file system larger"
    );
    for (name, bytes) in &files {
        assert!(!name.contains(".tmp."), "temporary file {name} left behind");
        assert!(reference()[name] == *bytes, "{name} is not complete");
    }
}

#[test]
fn published_checksums_hold_for_the_three_piece_set() {
    // tables/CHECKSUMS lists every file up to 4 pieces (scripts/checksums.sh); the ≤3-piece files
    // of a fresh build must match it: a change of generator output shows up here.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables/CHECKSUMS");
    let list = antitb::build::checksums::parse_list(&path).expect("tables/CHECKSUMS is readable");
    assert!(
        list.len() >= 3 * (TABLES_3 + 567),
        "tables/CHECKSUMS lists the ≤4-piece set: {}",
        list.len()
    );
    for (name, bytes) in reference() {
        let want = list
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in tables/CHECKSUMS"));
        assert_eq!(
            &antitb::build::checksums::sha256_hex(bytes),
            want,
            "{name} differs from tables/CHECKSUMS: rerun scripts/checksums.sh if the change of output is intended"
        );
    }
}

/// Write the reference files into `dir`, but for the tables named in `except`.
fn copy_reference_except(dir: &Path, except: &[&str]) {
    for (name, bytes) in reference() {
        let stem = name.split('.').next().expect("file stem");
        if !except.contains(&stem) {
            std::fs::write(dir.join(name), bytes).expect("write reference file");
        }
    }
}

/// `--no-deps` (one job of a cluster plan): builds the named table and nothing else, refuses
/// with one line when a table it reads is missing or fails its checksums, and leaves other
/// tables' temporary files alone (on a shared file system their writers may run elsewhere).
#[test]
fn no_deps_builds_only_the_named_tables() {
    let dir = TempDir::new(TEMP_PREFIX, "no-deps");
    copy_reference_except(dir.path(), &["KQvK", "KPvK"]);
    let before = contents(dir.path());
    let tables = dir.str();
    let run = |m: &'static str| ["generate", "--no-deps", m, "--tables", tables, "--quiet"];
    // KPvK promotes into KQvK, which is missing: refused, nothing written.
    assert_refused(&run("KPvK"), "KPvK needs KQvK, which is missing or corrupt");
    assert_eq!(contents(dir.path()), before, "a refused run wrote files");
    // KQvK reads only present tables: exactly its three files appear, as in a full build.
    let stale_other = dir.path().join("KvN.wdl.tmp.999999999");
    let stale_own = dir.path().join("KQvK.dtz.tmp.999999999");
    // A killed writer's spool of compressed data (`NAME.tmp.PID.N`).
    let stale_spool = dir.path().join("KQvK.dtw.tmp.999999999.3");
    std::fs::write(&stale_other, b"another machine's writer").unwrap();
    std::fs::write(&stale_own, b"a killed writer of this table").unwrap();
    std::fs::write(&stale_spool, b"a killed writer's spool").unwrap();
    let out = antitb(&run("KQvK"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stale_other.exists(),
        "removed another table's temporary file"
    );
    assert!(!stale_own.exists(), "kept its own table's stale temporary");
    assert!(!stale_spool.exists(), "kept its own table's stale spool");
    std::fs::remove_file(&stale_other).unwrap();
    let after = contents(dir.path());
    let added: Vec<&String> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert_eq!(added, ["KQvK.dtw", "KQvK.dtz", "KQvK.wdl"]);
    for name in added {
        assert!(after[name] == reference()[name], "{name} differs");
    }
    // A corrupt dependency (one byte in the middle of KvK.wdl) is named, with its checksum.
    let kvk = dir.path().join("KvK.wdl");
    let good = std::fs::read(&kvk).unwrap();
    let mut bad = good.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    std::fs::write(&kvk, &bad).unwrap();
    assert_refused(&run("KPvK"), "KvK.wdl");
    assert_refused(&run("KPvK"), "checksum mismatch");
    assert!(!dir.path().join("KPvK.wdl").exists());
    // Repaired, it builds; the set is then the full one, byte for byte.
    std::fs::write(&kvk, &good).unwrap();
    let out = antitb(&run("KPvK"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_as_reference(dir.path());
    // Present and valid: nothing to do.
    let out = antitb(&run("KPvK"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_same_as_reference(dir.path());
}

/// `--report` writes one JSON line per table built, whose figures agree with the files on disk
/// and with the run (a table present is not reported again).
#[test]
fn report_lists_each_table_built_with_measured_and_estimated_resources() {
    let dir = TempDir::new(TEMP_PREFIX, "report");
    let report = dir.path().join("report.jsonl");
    let run = || {
        antitb(&[
            "generate",
            "KNvK",
            "--tables",
            dir.str(),
            "--quiet",
            "--report",
            report.to_str().unwrap(),
        ])
    };
    let out = run();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let built: Vec<&str> = lines
        .iter()
        .map(|v| v["material"].as_str().unwrap())
        .collect();
    // KNvK's closure: the 2-piece tables it reaches, then itself, each once.
    assert_eq!(built.last(), Some(&"KNvK"), "{built:?}");
    let mut unique = built.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), built.len(), "{built:?}");
    for v in &lines {
        let m = v["material"].as_str().unwrap();
        let on_disk: u64 = ["wdl", "dtz", "dtw"]
            .iter()
            .map(|k| {
                std::fs::metadata(dir.path().join(format!("{m}.{k}")))
                    .unwrap()
                    .len()
            })
            .sum();
        assert_eq!(v["bytes_written"].as_u64(), Some(on_disk), "{v}");
        assert!(v["cpu_seconds"].as_f64().is_some(), "{v}");
        assert!(v["wall_seconds"].as_f64().unwrap() >= 0.0, "{v}");
        // The resident set of a running program: more than nothing, less than the machine.
        let rss = v["peak_rss_bytes"].as_u64().expect("Linux reports VmHWM");
        assert!(rss > 1 << 20 && rss < 1 << 40, "{v}");
        assert!(v["estimated_memory_bytes"].as_u64().unwrap() > 0, "{v}");
        // Each metric's solve and write, in order, measured on their own: their CPU times add
        // up to at most the whole's (each rounded to 1 ms), their peaks to at most its peak.
        let phases = v["phases"].as_array().expect("phases");
        let steps: Vec<String> = phases
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p["metric"].as_str().unwrap(),
                    p["step"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(
            steps,
            ["dtz solve", "dtz write", "dtw solve", "dtw write"],
            "{v}"
        );
        let cpu: f64 = phases
            .iter()
            .map(|p| p["cpu_seconds"].as_f64().unwrap())
            .sum();
        assert!(cpu <= v["cpu_seconds"].as_f64().unwrap() + 0.003, "{v}");
        for p in phases {
            // A solve's first passes are part of it (each rounded to 1 ms); a write has none.
            let init = p["init_cpu_seconds"].as_f64();
            if p["step"] == "solve" {
                let init = init.expect("getrusage reports CPU time");
                assert!(init <= p["cpu_seconds"].as_f64().unwrap() + 0.002, "{v}");
            } else {
                assert_eq!(init, None, "{v}");
            }
            let peak = p["peak_rss_bytes"].as_u64().expect("Linux reports VmHWM");
            assert!(peak > 1 << 20 && peak <= rss, "{v}");
            let start = p["start_rss_bytes"].as_u64().expect("Linux reports VmRSS");
            assert!(start > 1 << 20 && start < 1 << 40, "{v}");
        }
        // The estimate's parts: the solver with its sources, or the writer (which does not
        // hold them), whichever is larger, within it.
        let part = |k: &str| v[k].as_u64().unwrap();
        let (solver, writer) = (
            part("estimated_solver_bytes"),
            part("estimated_writer_bytes"),
        );
        assert!(
            (solver + part("estimated_sources_bytes")).max(writer) < part("estimated_memory_bytes"),
            "{v}"
        );
    }
    // Everything present: nothing built, nothing appended.
    let out = run();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let again = std::fs::read_to_string(&report).unwrap().lines().count();
    assert_eq!(again, lines.len());
    // An unwritable report path is a one-line error before anything is built.
    assert_refused(
        &[
            "generate",
            "KQvK",
            "--tables",
            dir.str(),
            "--report",
            "/nonexistent-dir/report.jsonl",
        ],
        "--report /nonexistent-dir/report.jsonl",
    );
    assert!(!dir.path().join("KQvK.wdl").exists());
}
