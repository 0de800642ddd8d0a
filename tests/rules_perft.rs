//! Perft suites from `tests/data/*.perft` (shakmaty's format: `id`, `epd`, `perft DEPTH NODES`
//! lines, blank lines between positions). The counts come from python-chess and shakmaty, never
//! from antitb, so every line here can fail.
//!
//! Depths with more than [`MAX_NODES`] leaves are skipped to keep CI fast.

use antitb::rules::{Position, parse_fen, perft};

/// Skip depths whose node count is above this.
const MAX_NODES: u64 = 2_000_000;

struct Case {
    id: String,
    epd: String,
    depths: Vec<(u32, u64)>,
}

fn load(path: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut cases: Vec<Case> = Vec::new();
    let mut current: Option<Case> = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            if line.is_empty() {
                cases.extend(current.take());
            }
            continue;
        }
        let (key, rest) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{path}:{}: bad line", lineno + 1));
        let case = current.get_or_insert_with(|| Case {
            id: String::new(),
            epd: String::new(),
            depths: Vec::new(),
        });
        match key {
            "id" => case.id = rest.to_string(),
            "epd" => case.epd = rest.to_string(),
            "perft" => {
                let mut it = rest
                    .split_whitespace()
                    .map(|s| s.parse::<u64>().expect("number"));
                let (depth, nodes) = (it.next().expect("depth"), it.next().expect("nodes"));
                case.depths.push((depth as u32, nodes));
            }
            _ => panic!("{path}:{}: unknown key {key}", lineno + 1),
        }
    }
    cases.extend(current.take());
    assert!(!cases.is_empty(), "{path} holds no positions");
    cases
}

/// Run every depth up to the node limit; return how many depths ran.
fn run_suite(path: &str) -> usize {
    let mut ran = 0;
    let mut failures = Vec::new();
    for case in load(path) {
        assert_eq!(
            case.epd.split_whitespace().count(),
            4,
            "{}: epd must have 4 fields",
            case.id
        );
        let pos = parse_fen(&case.epd)
            .unwrap_or_else(|e| panic!("{}: bad epd {}: {e}", case.id, case.epd));
        for &(depth, nodes) in &case.depths {
            if nodes > MAX_NODES {
                continue;
            }
            let got = perft(&pos, depth);
            if got != nodes {
                failures.push(format!(
                    "{} ({}) perft {depth}: expected {nodes}, got {got}",
                    case.id, case.epd
                ));
            }
            ran += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "perft mismatches:\n{}",
        failures.join("\n")
    );
    ran
}

#[test]
fn antichess_suite() {
    let ran = run_suite(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/antichess.perft"
    ));
    assert!(ran >= 60, "only {ran} depths ran");
}

#[test]
fn extra_suite() {
    let ran = run_suite(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/extra.perft"
    ));
    assert!(ran >= 150, "only {ran} depths ran");
}

#[test]
fn startpos_perft_4() {
    // Also in antichess.perft; kept separate so it runs whatever the node limit.
    assert_eq!(perft(&Position::startpos(), 4), 153_299);
}

/// Colour-swapped positions have the same move tree: check against the data, not ourselves.
#[test]
fn colour_swapped_suites() {
    for path in ["antichess.perft", "extra.perft"] {
        let path = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
        for case in load(&path) {
            let pos = parse_fen(&case.epd).expect("valid epd").swap_colors();
            for &(depth, nodes) in case.depths.iter().filter(|&&(_, n)| n <= 200_000) {
                assert_eq!(
                    perft(&pos, depth),
                    nodes,
                    "{} colour-swapped ({pos}) perft {depth}",
                    case.id
                );
            }
        }
    }
}

#[test]
fn perft_depth_zero_is_one() {
    assert_eq!(perft(&Position::startpos(), 0), 1);
    // Even a position where the side to move has already won counts itself at depth 0.
    let won = parse_fen("8/8/8/8/8/p7/P7/8 w - -").expect("valid");
    assert_eq!(perft(&won, 0), 1);
    assert_eq!(perft(&won, 1), 0);
}
