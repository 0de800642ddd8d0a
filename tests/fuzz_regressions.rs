//! Inputs the fuzzers (`fuzz/`, fuzz/README.md) found to go wrong, each checked against the rules
//! of SPEC.md worked out here with the rules core, never against the code that went wrong.

mod common;

use antitb::rules::Position;
use antitb::{Tablebase, Wdl};
use common::cli::{TempDir, remove_stale_dirs};
use common::files::{build_into, up_to};

const TEMP_PREFIX: &str = "antitb-fuzzreg";

/// fuzz target `fen`, input `K7/8/8/8/8/8/8/7K w - - 98 200`: White to move while Black has no
/// pieces. Black has already won (SPEC.md §1), so White has lost; the probe answered "missing
/// table KKv", a table that cannot exist. By the rules: every White move hands the turn to Black
/// without pieces (a win for Black, W(0)), so White's value is L(1); with no legal move White
/// would have won, W(0).
#[test]
fn probe_with_the_opponent_out_of_pieces_is_a_loss() {
    remove_stale_dirs(TEMP_PREFIX);
    let dir = TempDir::new(TEMP_PREFIX, "kvk");
    build_into(dir.path(), &up_to(2), &[], false);
    let tb = Tablebase::open(&[dir.path()]).expect("open tables");
    for fen in [
        "K7/8/8/8/8/8/8/7K w - - 98 200",
        "8/8/8/8/8/8/8/K7 w - - 0 1",
        "8/8/8/2k5/8/8/8/8 b - - 0 1",
        "8/8/8/8/8/8/8/r7 b - - 0 1",
    ] {
        let pos: Position = fen.parse().unwrap();
        assert!(pos.them().is_empty() && !pos.us().is_empty(), "{fen}");
        let moves = pos.legal_moves();
        assert!(!moves.is_empty(), "{fen}");
        // Each move leaves the opponent to move without pieces: it has won.
        assert!(moves.iter().all(|m| pos.after(m).us().is_empty()), "{fen}");
        let p = tb.probe(&pos).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(p.wdl, Wdl::Loss, "{fen}");
        assert_eq!(p.dtz.signed(), -1, "{fen}");
        assert_eq!(tb.probe_wdl(&pos).unwrap(), Wdl::Loss, "{fen}");
        let ranked = tb.rank_moves(&pos, antitb::RankBy::Dtz).unwrap();
        assert_eq!(ranked.len(), moves.len(), "{fen}");
        assert!(ranked.iter().all(|r| r.dtz.wdl() == Wdl::Loss), "{fen}");
    }
}

/// fuzz target `material`, input `"1\x01\nv v"`: the error echoed the name with its line feed,
/// a two-line message (bad input must give a one-line error). Control characters are now
/// escaped; ordinary names are shown as given.
#[test]
fn material_errors_are_one_line() {
    use antitb::table::Material;
    for (name, shown) in [
        ("1\u{1}\nv v", "1\\u{1}\\nv v"),
        ("K\nvK\r\nvQ", "K\\nvK\\r\\nvQ"),
        ("K\tQ\nv", "'\\t'"),
        ("KQRBNvKQRBN\n", "KQRBNvKQRBN\\n"),
        ("KQvX\n", ""),
        ("KQvRN", ""),
    ] {
        match Material::parse(name) {
            Ok(m) => assert_eq!((name, m.to_string().as_str()), ("KQvRN", "KQvRN")),
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains(['\n', '\r', '\u{1}', '\t']), "{msg:?}");
                assert!(msg.contains(shown), "{msg:?} should show {shown:?}");
            }
        }
    }
    // Ordinary names appear as given.
    let e = Material::parse("KQvRvN").unwrap_err().to_string();
    assert!(e.contains("'KQvRvN'"), "{e}");
}
