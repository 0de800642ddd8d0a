//! The `antitb perft` command as a user runs it: the built binary, its stdout, stderr and exit
//! code. Expected counts come from shakmaty, not from antitb.

mod common;

use common::cli::{antitb, text};
use shakmaty::fen::Fen;
use shakmaty::variant::Antichess;
use shakmaty::{CastlingMode, Position as _};

fn shak(fen: &str) -> Antichess {
    fen.parse::<Fen>()
        .expect("fen")
        .into_position(CastlingMode::Standard)
        .expect("valid")
}

const MIDDLEGAME: &str = "r1b2k2/pp1p4/n7/2p1p1p1/P5P1/1P5B/3P1K2/1R6 w - c6 0 1";

#[test]
fn perft_prints_node_count() {
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        MIDDLEGAME,
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6",
    ] {
        let out = antitb(&["perft", fen, "3"]);
        assert!(out.status.success(), "{fen}: {}", text(&out.stderr));
        let expected = shakmaty::perft(&shak(fen), 3);
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout.lines().last(),
            Some(format!("nodes {expected}").as_str()),
            "{fen}: {stdout}"
        );
    }
}

#[test]
fn perft_divide_lists_every_legal_move() {
    let out = antitb(&["perft", MIDDLEGAME, "3", "--divide"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines: Vec<&str> = stdout.lines().collect();
    let total = lines.pop().expect("a total line");

    let pos = shak(MIDDLEGAME);
    let mut expected: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            format!(
                "{} {}",
                m.to_uci(CastlingMode::Standard),
                shakmaty::perft(&child, 2)
            )
        })
        .collect();
    expected.sort();
    let mut got: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    got.sort();
    assert_eq!(got, expected);
    assert_eq!(total, format!("nodes {}", shakmaty::perft(&pos, 3)));
}

#[test]
fn bad_fen_is_a_one_line_error() {
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "not a fen",
        "8/8/8/8/8/8/8/9 w - -",
        "P7/8/8/8/8/8/8/8 w - -",
    ] {
        let out = antitb(&["perft", fen, "2"]);
        assert!(!out.status.success(), "{fen} accepted");
        assert!(out.status.code().is_some(), "{fen}: killed by a signal");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{fen}: {stderr}");
        assert!(!stderr.contains("panicked"), "{fen}: {stderr}");
        assert!(stderr.contains("error"), "{fen}: {stderr}");
        assert!(out.stdout.is_empty(), "{fen}: {}", text(&out.stdout));
    }
}

#[test]
fn bad_arguments_fail() {
    for args in [
        &["no-such-command"][..],
        &["perft"][..],
        &["perft", MIDDLEGAME][..],
        &["perft", MIDDLEGAME, "deep"][..],
        &["perft", MIDDLEGAME, "-1"][..],
    ] {
        let out = antitb(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let stderr = text(&out.stderr);
        assert!(
            !stderr.is_empty() && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}
