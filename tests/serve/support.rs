//! Tables for the serve tests, and the real server: the built binary on a loopback port, read
//! with a real HTTP client (reqwest).

use antitb::build::{BuildOptions, build, estimate};
use antitb::table::Material;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::common::cli;

const TEMP_PREFIX: &str = "antitb-serve-";

pub fn temp_path(name: &str) -> PathBuf {
    cli::temp_path(TEMP_PREFIX, name)
}

/// A fresh empty directory, kept for the life of the process (the tables are shared by every
/// test; a later run removes it with [`cli::remove_stale_dirs`]).
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = temp_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

pub fn m(name: &str) -> Material {
    Material::parse(name).expect("material")
}

/// Every table up to 3 pieces with WDL, DTZ and DTW, built once per process.
pub fn tables3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        cli::remove_stale_dirs(TEMP_PREFIX);
        let dir = fresh_dir("tb3");
        let mut opts = BuildOptions::new(&dir);
        opts.check_disk = false;
        opts.dtw = true;
        let all: Vec<Material> = (2..=3).flat_map(Material::all_with_pieces).collect();
        build(&all, &opts, &|_| {}).expect("build the ≤3-piece tables");
        dir
    })
}

/// A directory of symbolic links to the files of `dirs` whose extension is in `kinds` (the
/// first directory holding a file wins), so that a server can be shown a subset.
pub fn link_dir(
    name: &str,
    dirs: &[&Path],
    kinds: &[&str],
    skip: impl Fn(&str) -> bool,
) -> PathBuf {
    let out = fresh_dir(name);
    for d in dirs {
        for e in std::fs::read_dir(d).expect("read table dir").flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            let ext = file.rsplit('.').next().unwrap_or("");
            let target = out.join(&file);
            if kinds.contains(&ext) && !skip(&file) && !target.exists() {
                std::os::unix::fs::symlink(e.path(), target).expect("symlink");
            }
        }
    }
    out
}

/// The materials whose `.wdl` and `.dtz` files are in `dir`.
pub fn materials_in(dir: &Path) -> BTreeSet<Material> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(dir).expect("read table dir").flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = file.strip_suffix(".wdl")
            && dir.join(format!("{stem}.dtz")).exists()
            && let Ok(mat) = Material::parse(stem)
        {
            out.insert(mat.canonical());
        }
    }
    out
}

/// Tables for the lila comparison: WDL and DTZ only (lila's answers were made without DTW, and
/// DTW takes part in the move order), and whether they are complete up to 4 pieces.
pub struct FixtureTables {
    pub dir: PathBuf,
    pub present: BTreeSet<Material>,
    /// Every ≤4-piece table is there, so every fixture position must be compared.
    pub complete: bool,
}

/// Environment variable naming a directory with every table up to 4 pieces; then every
/// fixture position is compared. Without it, the test builds the tables of as many fixture
/// positions as [`BUILD_BUDGET`] allows and says how many it left out.
pub const TABLES_ENV: &str = "ANTITB_TEST_TABLES";
/// Slot visits ([`antitb::build::Estimate::work`]) the test may spend building 4-piece tables:
/// about 40 s of one core.
pub const BUILD_BUDGET: u64 = 120_000_000;

/// The ≤4-piece tables the positions' answers need: the closure of their materials (for more
/// than 4 pieces, of the tables their captures reach).
pub fn needed(materials: &[Material]) -> BTreeSet<Material> {
    let mut roots = Vec::new();
    for &mat in materials {
        if mat.count() <= 4 {
            roots.push(mat);
        } else {
            roots.extend(mat.dependencies().into_iter().filter(|d| d.count() <= 4));
        }
    }
    Material::closure(&roots).into_iter().collect()
}

/// Build (or find, with [`TABLES_ENV`]) the fixture's tables. `wanted` lists each position's
/// needed tables, in the order they should be chosen under the budget.
pub fn fixture_tables(wanted: &[BTreeSet<Material>]) -> &'static FixtureTables {
    static T: OnceLock<FixtureTables> = OnceLock::new();
    T.get_or_init(|| {
        if let Some(dir) = std::env::var_os(TABLES_ENV) {
            let dir = PathBuf::from(dir);
            let served = link_dir("fixture-env", &[&dir], &["wdl", "dtz"], |_| false);
            let present = materials_in(&served);
            let missing = (2..=4)
                .flat_map(Material::all_with_pieces)
                .filter(|m| !present.contains(&m.canonical()))
                .count();
            println!(
                "{TABLES_ENV}={}: {} tables, {missing} of the ≤4-piece tables missing",
                dir.display(),
                present.len()
            );
            return FixtureTables {
                dir: served,
                present,
                complete: missing == 0,
            };
        }
        let base = tables3();
        let mut chosen: BTreeSet<Material> = materials_in(base);
        let mut spent = 0;
        for need in wanted {
            let cost: u64 = need
                .difference(&chosen)
                .map(|&mat| estimate(mat, false).work)
                .sum();
            if spent + cost <= BUILD_BUDGET {
                spent += cost;
                chosen.extend(need.iter().copied());
            }
        }
        let dir4 = fresh_dir("tb4");
        let mut opts = BuildOptions::new(&dir4);
        opts.check_disk = false;
        opts.extra_dirs = vec![base.to_path_buf()];
        let targets: Vec<Material> = chosen.iter().copied().filter(|m| m.count() == 4).collect();
        let start = Instant::now();
        build(&targets, &opts, &|_| {}).expect("build the fixture's 4-piece tables");
        println!(
            "built {} 4-piece tables for the fixture in {:.1} s ({spent} slot visits)",
            targets.len(),
            start.elapsed().as_secs_f64()
        );
        let served = link_dir("fixture", &[base, &dir4], &["wdl", "dtz"], |_| false);
        FixtureTables {
            present: materials_in(&served),
            dir: served,
            complete: false,
        }
    })
}

/// `antitb serve` on a free loopback port, stopped when dropped.
pub struct Server {
    child: Option<Child>,
    pub base: String,
    log: Arc<Mutex<Vec<String>>>,
    client: reqwest::blocking::Client,
}

/// An answer: status, content type, CORS header, body.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub cors: Option<String>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8 body")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

impl Server {
    pub fn start(tables: &[&Path], extra: &[&str]) -> Server {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_antitb"));
        cmd.arg("serve").args(["--bind", "127.0.0.1:0"]);
        for t in tables {
            cmd.arg("--tables").arg(t);
        }
        let mut child = cmd
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start antitb serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                lines.lock().expect("log lock").push(line);
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "antitb serve did not start: {:?}",
                    log.lock().expect("log lock")
                );
            }
        };
        Server {
            child: Some(child),
            base: format!("http://{addr}"),
            log,
            client: client(),
        }
    }

    /// `GET` a path with its query (already encoded), with an optional `Accept` header.
    pub fn get_with(&self, path: &str, accept: Option<&str>) -> Answer {
        get(&self.client, &format!("{}{path}", self.base), accept)
    }

    pub fn get(&self, path: &str) -> Answer {
        self.get_with(path, None)
    }

    pub fn log(&self) -> String {
        self.log.lock().expect("log lock").join("\n")
    }

    /// The log once it contains `needle`, or as it is after 10 s: the server may answer before
    /// its log line has come through the pipe and the reader thread.
    pub fn log_with(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if log.contains(needle) || start.elapsed() > Duration::from_secs(10) {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Send `signal` and wait (at most 20 s) for the process to exit.
    pub fn stop(mut self, signal: i32) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        // SAFETY: sending a signal to our own child process, which has not been reaped yet.
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("antitb serve did not stop within 20 s of signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A keep-alive client that never waits more than 60 s for an answer.
pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("HTTP client")
}

pub fn get(client: &reqwest::blocking::Client, url: &str, accept: Option<&str>) -> Answer {
    let mut req = client.get(url);
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let res = req.send().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type").unwrap_or_default();
    let cors = header("access-control-allow-origin");
    let status = res.status().as_u16();
    let body = res.bytes().expect("body").to_vec();
    Answer {
        status,
        content_type,
        cors,
        body,
    }
}

/// A FEN as a query value: spaces as `_` (lila's convention), nothing else needs escaping
/// except `+`, `&`, `#` and `%`, which FENs do not contain.
pub fn q(fen: &str) -> String {
    fen.replace(' ', "_")
}
