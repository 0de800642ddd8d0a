//! `antitb serve` end to end: the built binary on a loopback port, talked to with a real HTTP
//! client (reqwest). The lila compatibility fixture is in serve/lila.rs; below, the server's own
//! behaviour on the ≤3-piece tables (with DTW):
//!
//! - categories under the halfmove clock, at the 100-ply edge, from a known DTZ (known.csv);
//! - DTW: the sign of every `dtw` against its category, the root's DTW against its moves (the
//!   DTW recurrence), lila's DTW order inside each category, and `mainline?by=dtw` playing
//!   exactly |DTW| plies to a win for the right side; lila's DTZ main line likewise;
//! - CBOR bodies decode to the same value as the JSON ones;
//! - errors: bad FEN (400, one line), more pieces than the tables (`unknown` / 404), a missing
//!   table (every value still given equals the full tables', and unknowns are 404 on
//!   `/mainline`), a truncated and a garbage table file (500, the file named in the log only,
//!   and the server keeps answering);
//! - many concurrent keep-alive clients get exactly the answers a single client gets;
//! - SIGTERM and SIGINT stop the server cleanly;
//! - random and mangled query strings through [`Service::handle`] never panic.

mod common;

mod serve {
    pub mod lila;
    pub mod support;
}

use antitb::rules::notation::parse_uci;
use antitb::rules::{Board, Color, Piece, Position, Role, Square};
use antitb::serve::{Endpoint, Format, Service};
use serde_json::Value as Json;
use serve::support::{Server, client, get, link_dir, m, q, tables3};

/// Black (a rook) to move wins in 32 plies (tests/data/known.csv).
const KVR: &str = "8/8/8/3K4/8/8/8/5r2 b - - 0 1";

fn with_clock(fen: &str, clock: u32) -> String {
    let f: Vec<&str> = fen.split(' ').collect();
    format!("{} {} {} {} {clock} {}", f[0], f[1], f[2], f[3], f[5])
}

#[test]
fn categories_follow_the_halfmove_clock() {
    let server = Server::start(&[tables3()], &[]);
    for (clock, root, best) in [
        (0, "win", "loss"),
        (68, "win", "loss"),
        (69, "cursed-win", "blessed-loss"),
        (99, "cursed-win", "blessed-loss"),
        (100, "cursed-win", "blessed-loss"),
    ] {
        let fen = with_clock(KVR, clock);
        let a = server.get(&format!("/antichess?fen={}", q(&fen))).json();
        assert_eq!(a["dtz"], 32, "{fen}");
        assert_eq!(a["category"], root, "{fen}");
        assert_eq!(a["moves"][0]["dtz"], -31, "{fen}");
        assert_eq!(a["moves"][0]["category"], best, "{fen}: {}", a["moves"][0]);
    }
}

/// Random positions of `material` (both colours to move), from a fixed seed.
fn random_positions(material: &str, n: usize, seed: u64) -> Vec<Position> {
    let mat = m(material);
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut board = Board::empty();
        let mut ok = true;
        for color in [Color::White, Color::Black] {
            for role in Role::ALL {
                for _ in 0..mat.count_of(Piece { color, role }) {
                    let sq = Square::new(rng.below(64) as u32);
                    if board.piece_at(sq).is_some()
                        || (role == Role::Pawn && (sq.rank() == 0 || sq.rank() == 7))
                    {
                        ok = false;
                    } else {
                        board.put(sq, Piece { color, role });
                    }
                }
            }
        }
        let turn = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        if ok {
            out.push(Position::from_board(board, turn));
        }
    }
    out
}

/// xorshift64*: deterministic test data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn sign(v: &Json) -> i64 {
    v.as_i64().expect("a number").signum()
}

#[test]
fn dtw_values_order_and_lines() {
    let server = Server::start(&[tables3()], &[]);
    let mut fens: Vec<String> = vec![KVR.to_string()];
    for mat in ["KvR", "RvN", "KPvK", "BvP", "KQvK", "PvP"] {
        fens.extend(random_positions(mat, 12, 7).iter().map(|p| p.to_string()));
    }
    let (mut decisive, mut draws) = (0, 0);
    for fen in &fens {
        let a = server.get(&format!("/antichess?fen={}", q(fen))).json();
        let pos: Position = fen.parse().expect("FEN");
        let root_dtw = &a["dtw"];
        assert!(
            root_dtw.is_i64(),
            "{fen}: DTW files exist, dtw must be a number: {a}"
        );
        let moves = a["moves"].as_array().expect("moves");
        // Signs: a win has a positive DTW, a loss a negative one, a draw 0 (ignoring the
        // 50-move rule, a cursed win is still a DTW win).
        for v in std::iter::once(&a).chain(moves) {
            let expected = match v["category"].as_str().unwrap() {
                "win" | "cursed-win" => 1,
                "loss" | "blessed-loss" => -1,
                _ => 0,
            };
            if v["variant_win"] == true {
                assert_eq!(v["dtw"], 0, "{fen}: a finished game has DTW 0: {v}");
            } else {
                assert_eq!(sign(&v["dtw"]), expected, "{fen}: {v}");
            }
        }
        if moves.is_empty() {
            continue;
        }
        // The DTW recurrence: the root's DTW is the best of its moves' (SPEC.md §3). A move's
        // value for the mover: into a position won in d plies (d = 0: the game is over), a loss
        // in d + 1; into a position lost in d plies, a win in d + 1; into a draw, a draw.
        let mover = |mv: &Json| -> i64 {
            let d = mv["dtw"].as_i64().unwrap();
            if d > 0 || mv["variant_win"] == true {
                -(d + 1)
            } else if d < 0 {
                -d + 1
            } else {
                0
            }
        };
        let rank = |v: i64| match v.signum() {
            1 => 10_000 - v,
            -1 => -10_000 - v,
            _ => 0,
        };
        let expected = moves.iter().map(mover).max_by_key(|&v| rank(v)).unwrap();
        assert_eq!(
            root_dtw.as_i64().unwrap(),
            expected,
            "{fen}: root DTW against its moves"
        );
        // lila's order inside a category: DTW first (the quickest win, the slowest loss).
        for w in moves.windows(2) {
            if w[0]["category"] == w[1]["category"] && w[0]["variant_win"] == w[1]["variant_win"] {
                let key = |d: i64| match d.signum() {
                    -1 => (0, -d),
                    1 => (2, -d),
                    _ => (1, 0),
                };
                assert!(
                    key(w[0]["dtw"].as_i64().unwrap()) <= key(w[1]["dtw"].as_i64().unwrap()),
                    "{fen}: {} before {}",
                    w[0],
                    w[1]
                );
            }
        }
        // The DTW line: exactly |DTW| plies, ending in a win for the side that was winning.
        let line = server
            .get(&format!("/antichess/mainline?fen={}&by=dtw", q(fen)))
            .json();
        let dtw = root_dtw.as_i64().unwrap();
        assert_eq!(line["dtw"], dtw, "{fen}");
        let steps = line["mainline"].as_array().unwrap();
        if dtw == 0 {
            draws += 1;
            assert!(steps.is_empty(), "{fen}: a drawn position has no DTW line");
            continue;
        }
        decisive += 1;
        assert_eq!(steps.len() as i64, dtw.abs(), "{fen}: {line}");
        let winner = if dtw > 0 { pos.turn() } else { !pos.turn() };
        assert_eq!(line["winner"], winner.char().to_string(), "{fen}");
        let mut cur = pos;
        for (i, s) in steps.iter().enumerate() {
            cur.play(&parse_uci(&cur, s["uci"].as_str().unwrap()).expect("legal"));
            let left = dtw.abs() - i as i64 - 1;
            assert_eq!(s["dtw"].as_i64().unwrap().abs(), left, "{fen} step {i}");
        }
        assert!(
            cur.is_won_by_side_to_move(),
            "{fen}: the DTW line ends the game"
        );
        // lila's DTZ line (clock 0): it also ends the game, won by the side DTZ says.
        let dtz_line = server
            .get(&format!("/antichess/mainline?fen={}", q(fen)))
            .json();
        assert_eq!(dtz_line["dtz"], a["dtz"], "{fen}");
        if a["category"] == "win" || a["category"] == "loss" {
            assert_eq!(
                dtz_line["winner"],
                winner.char().to_string(),
                "{fen}: {dtz_line}"
            );
        }
    }
    println!(
        "DTW checked on {} positions ({decisive} decisive, {draws} drawn)",
        fens.len()
    );
    assert!(
        decisive > 20 && draws > 0,
        "{decisive} decisive, {draws} drawn"
    );
}

#[test]
fn cbor_and_headers() {
    let server = Server::start(&[tables3()], &[]);
    for path in [
        format!("/antichess?fen={}", q(KVR)),
        format!("/antichess/mainline?fen={}", q(KVR)),
        format!("/antichess/mainline?fen={}&by=dtw", q(KVR)),
        "/health".to_string(),
    ] {
        let json = server.get(&path);
        assert_eq!(json.status, 200, "{path}");
        assert_eq!(json.content_type, "application/json", "{path}");
        assert_eq!(json.cors.as_deref(), Some("*"), "{path}");
        for accept in [
            "application/cbor",
            "application/json;q=0.5, application/cbor",
        ] {
            let cbor = server.get_with(&path, Some(accept));
            assert_eq!(cbor.content_type, "application/cbor", "{path} {accept}");
            let decoded: Json = ciborium::from_reader(&cbor.body[..]).expect("valid CBOR");
            assert_eq!(decoded, json.json(), "{path}: CBOR and JSON differ");
        }
        let prefer_json = server.get_with(&path, Some("application/cbor;q=0.5, */*"));
        assert_eq!(prefer_json.content_type, "application/json", "{path}");
    }
    let health = server.get("/health").json();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["max_pieces"], 3);
    assert_eq!(health["dtw"], true);
    let unknown_path = server.get("/standard?fen=8/8/8/8/8/8/8/K6k_w_-_-_0_1");
    assert_eq!(unknown_path.status, 404);
    assert_eq!(unknown_path.cors.as_deref(), Some("*"));
}

#[test]
fn bad_requests_and_too_many_pieces() {
    let server = Server::start(&[tables3()], &[]);
    for (path, status, says) in [
        ("/antichess?fen=garbage", 400, "invalid fen"),
        ("/antichess", 400, "missing query parameter: fen"),
        (
            "/antichess?fen=8/8/8/8/8/8/8/8_w_-_-_0_1",
            400,
            "empty board",
        ),
        (
            "/antichess?fen=8/8/8/8/8/8/8/KP5k_w_-_-_0_1",
            400,
            "pawn on back rank",
        ),
        (
            "/antichess/mainline?fen=8/8/8/8/8/8/8/K6k_x",
            400,
            "side to move",
        ),
        ("/antichess?fen=%FF", 400, "UTF-8"),
        (
            "/antichess/mainline?fen=8/8/8/3K4/8/8/8/5r2_b&by=dtm",
            400,
            "by",
        ),
    ] {
        let a = server.get(path);
        assert_eq!(a.status, status, "{path}: {}", a.text());
        let text = a.text();
        assert!(text.contains(says), "{path}: {text}");
        assert!(!text.contains('\n'), "{path}: not one line: {text:?}");
        assert_eq!(a.cors.as_deref(), Some("*"), "{path}");
    }
    // Seven pieces, with tables up to 3: unknown values, and no main line.
    let seven = "1k6/8/8/8/8/8/8/2RNBQRK w - - 0 1";
    let a = server.get(&format!("/antichess?fen={}", q(seven)));
    assert_eq!(a.status, 200);
    let a = a.json();
    assert_eq!(a["category"], "unknown", "{a}");
    assert!(a["dtz"].is_null() && a["dtw"].is_null(), "{a}");
    let line = server.get(&format!("/antichess/mainline?fen={}", q(seven)));
    assert_eq!(line.status, 404, "{}", line.text());
    assert!(line.text().contains("too many pieces"), "{}", line.text());
}

#[test]
fn missing_table_gives_only_values_it_can_prove() {
    let full = Server::start(&[tables3()], &[]);
    let dir = link_dir("missing-kqvk", &[tables3()], &["wdl", "dtz", "dtw"], |f| {
        f.starts_with("KQvK.")
    });
    let partial = Server::start(&[&dir], &[]);
    let (mut known, mut unknown) = (0, 0);
    for pos in random_positions("KQvK", 40, 11) {
        let fen = pos.to_string();
        let path = format!("/antichess?fen={}", q(&fen));
        let (f, p) = (full.get(&path).json(), partial.get(&path));
        assert_eq!(p.status, 200, "{fen}");
        let p = p.json();
        if p["dtz"].is_null() {
            unknown += 1;
            let line = partial.get(&format!("/antichess/mainline?fen={}", q(&fen)));
            assert_eq!(line.status, 404, "{fen}");
            assert!(
                line.text().contains("KQvK"),
                "names the table: {}",
                line.text()
            );
        } else {
            known += 1;
            assert_eq!(
                p["dtz"], f["dtz"],
                "{fen}: a value found without KQvK is wrong"
            );
            assert_eq!(p["category"], f["category"], "{fen}");
        }
        for (pm, fm) in p["moves"]
            .as_array()
            .unwrap()
            .iter()
            .zip(f["moves"].as_array().unwrap())
        {
            if !pm["dtz"].is_null() {
                let fm = f["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["uci"] == pm["uci"])
                    .unwrap_or(fm);
                assert_eq!(pm["dtz"], fm["dtz"], "{fen} {}", pm["uci"]);
            }
        }
    }
    println!("without KQvK: {known} positions still known (by search), {unknown} unknown");
    assert!(unknown > 0, "no position needed the missing table");
}

#[test]
fn unreadable_table_files_are_500_named_in_the_log_only() {
    let dir = link_dir("corrupt", &[tables3()], &["wdl", "dtz", "dtw"], |f| {
        f == "KRvK.dtz" || f == "KNvK.wdl"
    });
    let dtz = std::fs::read(tables3().join("KRvK.dtz")).expect("read");
    std::fs::write(dir.join("KRvK.dtz"), &dtz[..dtz.len() / 2]).expect("write truncated");
    let mut rng = Rng(5);
    let garbage: Vec<u8> = (0..4000).map(|_| rng.next() as u8).collect();
    std::fs::write(dir.join("KNvK.wdl"), garbage).expect("write garbage");
    let server = Server::start(&[&dir], &[]);
    for (fen, file) in [
        ("8/8/8/8/8/2K5/R7/7k w - - 0 1", "KRvK.dtz"),
        ("8/8/8/8/8/2K5/8/N6k w - - 0 1", "KNvK.wdl"),
    ] {
        for endpoint in ["/antichess", "/antichess/mainline"] {
            let a = server.get(&format!("{endpoint}?fen={}", q(fen)));
            assert_eq!(a.status, 500, "{endpoint} {fen}: {}", a.text());
            assert!(
                !a.text().contains(file),
                "the client is not told the file: {}",
                a.text()
            );
            assert!(!a.text().contains('\n'));
        }
        let path = dir.join(file);
        let log = server.log_with(&path.to_string_lossy());
        assert!(
            log.contains(&*path.to_string_lossy()),
            "the log names {}: {log}",
            path.display()
        );
    }
    // The server keeps answering.
    let a = server.get(&format!("/antichess?fen={}", q(KVR)));
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["dtz"], 32);
}

#[test]
fn many_concurrent_clients_get_the_single_client_answers() {
    let server = Server::start(&[tables3()], &["--threads", "2"]);
    let mut paths = Vec::new();
    for mat in ["KvR", "KPvK", "BvN", "PvP", "KQvK"] {
        for pos in random_positions(mat, 4, 3) {
            paths.push(format!("/antichess?fen={}", q(&pos.to_string())));
            paths.push(format!("/antichess/mainline?fen={}", q(&pos.to_string())));
        }
    }
    paths.push("/antichess?fen=garbage".to_string());
    paths.push("/health".to_string());
    let expected: Vec<(u16, Vec<u8>)> = paths
        .iter()
        .map(|p| {
            let a = server.get(p);
            (a.status, a.body)
        })
        .collect();
    let clients = 16;
    std::thread::scope(|s| {
        for c in 0..clients {
            let (paths, expected, base) = (&paths, &expected, &server.base);
            s.spawn(move || {
                let http = client();
                for round in 0..3 {
                    for i in 0..paths.len() {
                        let j = (i * 7 + c * 13 + round) % paths.len();
                        let a = get(&http, &format!("{base}{}", paths[j]), None);
                        assert_eq!(
                            (a.status, &a.body),
                            (expected[j].0, &expected[j].1),
                            "{}",
                            paths[j]
                        );
                    }
                }
            });
        }
    });
    println!(
        "{clients} clients × {} requests each: all answers identical",
        3 * paths.len()
    );
}

#[test]
fn sigterm_and_sigint_stop_the_server() {
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let server = Server::start(&[tables3()], &[]);
        let http = client();
        let url = format!("{}/antichess?fen={}", server.base, q(KVR));
        assert_eq!(get(&http, &url, None).status, 200);
        let base = server.base.clone();
        let log_before = server.log();
        let status = server.stop(signal);
        assert!(status.success(), "signal {signal}: exit status {status}");
        assert!(log_before.contains("listening"), "{log_before}");
        // Nothing listens any more.
        let err = reqwest::blocking::get(format!("{base}/health"));
        assert!(err.is_err(), "still answering after signal {signal}");
    }
}

/// Mangled query strings straight into the service (no server): never a panic, and every
/// answer is 200 with JSON or an error with a one-line reason.
#[test]
fn mangled_queries_never_panic() {
    let service = Service::open(&[tables3()]).expect("open tables");
    let seeds = [
        KVR,
        "8/8/8/8/8/8/1P6/k1K5 w - - 0 1",
        "8/8/8/pP6/8/8/8/K7 w - a6 0 1",
        "1k6/8/8/8/8/8/8/2RNBQRK w - - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ];
    let alphabet = b"KQRBNPkqrbnp12345678/ _-wbaeh%+=&0x";
    let mut rng = Rng(99);
    let mut statuses = std::collections::BTreeMap::new();
    for i in 0..3000 {
        let seed = seeds[i % seeds.len()].as_bytes();
        let mut bytes: Vec<u8> = format!("fen={}", String::from_utf8_lossy(seed)).into_bytes();
        for _ in 0..=rng.below(4) {
            let at = rng.below(bytes.len() as u64 + 1) as usize;
            match rng.below(4) {
                0 if at < bytes.len() => {
                    bytes.remove(at);
                }
                1 => bytes.insert(at, alphabet[rng.below(alphabet.len() as u64) as usize]),
                2 if at < bytes.len() => bytes[at] = rng.next() as u8,
                _ => bytes.truncate(at),
            }
        }
        let query = String::from_utf8_lossy(&bytes).into_owned();
        for endpoint in [Endpoint::Probe, Endpoint::Mainline] {
            let r = service.handle(endpoint, &query, Format::Json);
            *statuses.entry(r.status).or_insert(0) += 1;
            match r.status {
                200 => {
                    serde_json::from_slice::<Json>(&r.body).expect("200 is JSON");
                }
                400 | 404 => {
                    let text = String::from_utf8(r.body).expect("UTF-8");
                    assert!(
                        !text.is_empty() && !text.contains('\n'),
                        "{query}: {text:?}"
                    );
                }
                s => panic!("{query}: status {s}"),
            }
        }
    }
    println!("mangled queries: {statuses:?}");
    assert!(statuses.len() >= 3, "{statuses:?}");
}

#[test]
fn startup_errors_are_one_line() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_antitb"))
            .arg("serve")
            .args(args)
            .output()
            .expect("run antitb serve");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        err
    };
    let missing = serve::support::temp_path("no-such-dir");
    let err = run(&[
        "--tables",
        missing.to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
    ]);
    assert!(err.contains("no-such-dir"), "{err}");
    let server = Server::start(&[tables3()], &[]);
    let taken = server.base.trim_start_matches("http://").to_string();
    let err = run(&["--tables", tables3().to_str().unwrap(), "--bind", &taken]);
    assert!(err.contains("cannot listen"), "{err}");
    let err = run(&["--tables", tables3().to_str().unwrap(), "--threads", "0"]);
    assert!(err.contains("threads"), "{err}");
}
