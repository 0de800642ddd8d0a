//! `antitb probe` as a user runs it: the built binary on a directory of all ≤3-piece tables
//! (built once per process with `antitb::build`). Plain output, `--json`, batch mode from
//! standard input with a bad FEN among good ones, `--line`, and the one-line errors.

mod common;

use antitb::probe::{RankBy, Tablebase};
use antitb::rules::Position;
use common::cli::{antitb_with_input, remove_stale_dirs, temp_path, text};
use common::files::{build_into, up_to};
use serde_json::Value as Json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

const TEMP_PREFIX: &str = "antitb-probe-cli-";

/// A position with a long win: Black (rook) to move wins in 32 plies (tests/data/known.csv).
const KVR: &str = "8/8/8/3K4/8/8/8/5r2 b - - 0 1";
/// White (king and pawn) to move against a lone king: king moves and pawn pushes.
const KPVK: &str = "8/8/8/8/8/8/1P6/k1K5 w - - 0 1";

/// Every table up to 3 pieces, built once per process; removed by a later run.
fn tables3() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        remove_stale_dirs(TEMP_PREFIX);
        let dir = temp_path(TEMP_PREFIX, "tb3");
        build_into(&dir, &up_to(3), &[], false);
        dir
    })
}

fn dir_str() -> &'static str {
    tables3().to_str().expect("utf-8 temp path")
}

fn json_lines(out: &Output) -> Vec<Json> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn tablebase() -> Tablebase {
    Tablebase::open(&[tables3()]).expect("open tables")
}

fn pos(fen: &str) -> Position {
    fen.parse().expect("FEN")
}

/// The library's ranking of `fen`, as UCI strings.
fn ranked_uci(fen: &str) -> Vec<String> {
    tablebase()
        .rank_moves(&pos(fen), RankBy::Dtz)
        .expect("rank")
        .iter()
        .map(|r| r.mv.uci())
        .collect()
}

/// Play `line` (UCI moves) from `fen`, checking each is legal; the final position.
fn replay(fen: &str, line: &[String]) -> Position {
    let mut cur = pos(fen);
    for u in line {
        let mv = *cur
            .legal_moves()
            .iter()
            .find(|m| m.uci() == *u)
            .unwrap_or_else(|| panic!("{u} is not legal in {cur}"));
        cur.play(&mv);
    }
    cur
}

#[test]
fn plain_output_has_verdict_values_and_moves() {
    let out = antitb_with_input(&["probe", "--tables", dir_str(), KVR], None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("Black wins"), "{stdout}");
    assert!(
        stdout.contains("WDL +2") && stdout.contains("DTZ 32"),
        "{stdout}"
    );
    // Every legal move, in the library's order, one line each with its category.
    let ranked = ranked_uci(KVR);
    assert_eq!(ranked.len(), pos(KVR).legal_moves().len());
    let lines: Vec<&str> = stdout.lines().collect();
    let mut at = 0;
    for u in &ranked {
        let i = lines
            .iter()
            .position(|l| l.split_whitespace().nth(1) == Some(u.as_str()))
            .unwrap_or_else(|| panic!("move {u} missing:\n{stdout}"));
        assert!(i > at, "move {u} out of order:\n{stdout}");
        at = i;
    }
    let first = lines
        .iter()
        .find(|l| l.split_whitespace().nth(1) == Some(ranked[0].as_str()))
        .unwrap();
    assert!(
        first.contains("win") && first.contains("32"),
        "best move line: {first}"
    );

    // The losing side, and a draw.
    let out = antitb_with_input(
        &[
            "probe",
            "--tables",
            dir_str(),
            "8/8/8/3K4/8/8/8/5r2 w - - 0 1",
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("White loses"),
        "{stdout}"
    );
    let out = antitb_with_input(
        &[
            "probe",
            "--tables",
            dir_str(),
            "8/4P3/8/8/8/8/8/7b w - - 0 1",
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success() && stdout.contains("Draw"), "{stdout}");
}

#[test]
fn json_has_the_promised_fields() {
    let out = antitb_with_input(&["probe", "--tables", dir_str(), "--json", KVR, KPVK], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let objs = json_lines(&out);
    assert_eq!(objs.len(), 2, "one object per FEN: {}", text(&out.stdout));
    let tb = tablebase();
    for (o, fen) in objs.iter().zip([KVR, KPVK]) {
        let p = pos(fen);
        let v = tb.probe_dtz(&p).expect("probe");
        assert_eq!(o["fen"].as_str().map(pos), Some(p), "{o}");
        assert_eq!(o["wdl"].as_i64(), Some(v.wdl().to_i8() as i64), "{o}");
        assert_eq!(o["dtz"].as_i64(), Some(v.signed() as i64), "{o}");
        let category = ["loss", "blessed-loss", "draw", "cursed-win", "win"][v.wdl().index()];
        assert_eq!(o["category"].as_str(), Some(category), "{o}");
        let moves = o["moves"].as_array().expect("moves array");
        let uci: Vec<String> = moves
            .iter()
            .map(|m| m["uci"].as_str().expect("uci").to_string())
            .collect();
        assert_eq!(uci, ranked_uci(fen), "{o}");
        for m in moves {
            assert!(m["wdl"].is_i64() && m["dtz"].is_i64(), "{m}");
        }
        assert_eq!(moves[0]["dtz"], o["dtz"], "best move keeps the value: {o}");
        assert_eq!(moves[0]["wdl"], o["wdl"], "{o}");
    }
    assert_eq!(objs[0]["wdl"], 2);
    assert_eq!(objs[0]["dtz"], 32);

    // A finished game: Black has no pieces.
    let out = antitb_with_input(
        &[
            "probe",
            "--tables",
            dir_str(),
            "--json",
            "8/8/8/8/8/8/8/K7 b - - 0 1",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let o = &json_lines(&out)[0];
    assert_eq!(
        (o["wdl"].as_i64(), o["dtz"].as_i64()),
        (Some(2), Some(0)),
        "{o}"
    );
    assert_eq!(o["moves"].as_array().map(Vec::len), Some(0), "{o}");
    let out = antitb_with_input(
        &["probe", "--tables", dir_str(), "8/8/8/8/8/8/8/K7 b - - 0 1"],
        None,
    );
    assert!(
        text(&out.stdout).contains("Game over"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn batch_from_stdin_with_a_bad_fen() {
    let input = format!("{KVR}\nthis is not a fen\n\n{KPVK}\n4k3/8/8/8/8/8/8/R3K3 w Q - 0 1\n");
    let out = antitb_with_input(
        &["probe", "--tables", dir_str(), "--json", "-"],
        Some(&input),
    );
    assert!(!out.status.success(), "a bad FEN must fail the run");
    let objs = json_lines(&out);
    assert_eq!(
        objs.len(),
        4,
        "one object per non-empty line:\n{}",
        text(&out.stdout)
    );
    for i in [0, 2] {
        assert!(
            objs[i]["error"].is_null() && objs[i]["wdl"].is_i64(),
            "{}",
            objs[i]
        );
        assert!(objs[i]["moves"].is_array(), "{}", objs[i]);
    }
    assert_eq!(objs[0]["dtz"], 32);
    for i in [1, 3] {
        let e = objs[i]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("no error: {}", objs[i]));
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(objs[i]["wdl"].is_null(), "{}", objs[i]);
    }
    assert!(
        objs[1]["error"]
            .as_str()
            .unwrap()
            .contains("this is not a fen")
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "stderr: {stderr}");

    // Plain mode: the good positions answer on stdout, one line per bad one on stderr.
    let out = antitb_with_input(&["probe", "--tables", dir_str(), "-"], Some(&input));
    assert!(!out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Black wins") && stdout.contains("DTZ 32"),
        "{stdout}"
    );
    assert!(stdout.contains(KPVK), "{stdout}");
    let stderr = text(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("bad FEN")).collect();
    assert_eq!(errors.len(), 2, "stderr: {stderr}");
    assert!(errors[0].contains("this is not a fen"), "{stderr}");

    // FEN arguments and '-' together.
    let out = antitb_with_input(
        &["probe", "--tables", dir_str(), "--json", KPVK, "-"],
        Some(KVR),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_lines(&out).len(), 2);
}

#[test]
fn line_plays_to_the_end_of_the_game() {
    let out = antitb_with_input(
        &["probe", "--tables", dir_str(), "--line", "--json", KVR],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let o = &json_lines(&out)[0];
    let line: Vec<String> = o["line"]
        .as_array()
        .unwrap_or_else(|| panic!("no line: {o}"))
        .iter()
        .map(|m| m.as_str().expect("uci").to_string())
        .collect();
    assert!(line.len() >= 32, "DTZ 32 needs at least 32 plies: {line:?}");
    assert_eq!(
        line.len() % 2,
        0,
        "the side to move wins: its opponent makes the last move"
    );
    let end = replay(KVR, &line);
    assert!(end.is_won_by_side_to_move(), "line ends in {end}");
    assert_eq!(end.turn(), pos(KVR).turn());
    let expected: Vec<String> = tablebase()
        .best_line(&pos(KVR), RankBy::Dtz, 1000)
        .expect("line")
        .iter()
        .map(|m| m.uci())
        .collect();
    assert_eq!(line, expected);

    let out = antitb_with_input(&["probe", "--tables", dir_str(), "--line", KVR], None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("line:"))
        .unwrap_or_else(|| panic!("no line printed:\n{stdout}"));
    assert_eq!(printed.split_whitespace().count(), line.len(), "{printed}");
}

#[test]
fn missing_directory_is_a_one_line_error() {
    let missing = temp_path(TEMP_PREFIX, "no-such-dir");
    let missing = missing.to_str().unwrap();
    let out = antitb_with_input(&["probe", "--tables", missing, KVR], None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(missing), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

#[test]
fn positions_beyond_the_tables_are_one_line_errors() {
    // Five pieces, no capture: more than the ≤3-piece tables hold.
    let five = "r6n/8/8/8/8/8/8/K1B4b w - - 0 1";
    let out = antitb_with_input(&["probe", "--tables", dir_str(), five], None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.lines().count() <= 2 && stderr.contains("pieces"),
        "{stderr}"
    );
    assert!(stderr.lines().next().unwrap().contains('5'), "{stderr}");
    // A table directory without the needed table (but with another 3-piece one).
    let partial = temp_path(TEMP_PREFIX, "partial");
    std::fs::create_dir_all(&partial).expect("mkdir");
    for f in ["KRvN.wdl", "KRvN.dtz"] {
        std::fs::copy(tables3().join(f), partial.join(f)).expect("copy table");
    }
    let out = antitb_with_input(
        &["probe", "--tables", partial.to_str().unwrap(), KPVK],
        None,
    );
    let _ = std::fs::remove_dir_all(&partial);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("KPvK"), "names the material: {stderr}");
}

/// `antitb probe - | head -1`: the reader goes away after one line; antitb stops quietly (no
/// panic message), as Unix tools do.
#[test]
fn a_closed_output_pipe_is_not_a_panic() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_antitb"))
        .args(["probe", "--tables", dir_str(), "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run antitb");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // Far more output than a pipe buffer holds; errors once antitb has stopped reading.
        for _ in 0..20_000 {
            if stdin
                .write_all(b"8/8/8/8/3n4/8/8/R3K3 w - - 0 1\n")
                .is_err()
            {
                break;
            }
        }
    });
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    out.read_line(&mut first).expect("read a line");
    assert!(first.contains("8/8/8/8/3n4/8/8/R3K3"), "{first}");
    drop(out);
    let output = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    let stderr = text(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
