//! The proof parser and checker (`antitb check-proof`), with the tables up to three pieces.
//!
//! Properties: checking never panics; a rejection is one line; a proof the checker accepts has
//! a root that the prover really wins: by the tables where the root has at most three pieces,
//! otherwise by a brute-force search of the rules core (the tables at positions of at most three
//! pieces) to the proof's depth and two plies more (a table leaf with
//! a fourth piece takes a capture to reach a table); a search that runs out of its node budget
//! confirms nothing and is skipped.

#![no_main]

use antitb::prove::check;
use antitb_fuzz::{Forced, Search, tablebase};
use libfuzzer_sys::fuzz_target;

/// Nodes of brute force per accepted proof.
const BUDGET: u64 = 50_000;

fuzz_target!(
    init: {
        // The tables are built (first run) and opened here, outside any input's time limit.
        tablebase();
    },
    |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let checked = match check::check(text, tablebase()) {
        Ok(c) => c,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "rejection is not one line: {e}");
            return;
        }
    };
    let root = checked.root;
    let plies = u32::try_from(checked.depth).unwrap_or(u32::MAX).saturating_add(2);
    let mut search = Search::new(BUDGET);
    let verdict = if root.turn() == checked.prover {
        search.wins(&root, plies)
    } else {
        search.loses(&root, plies)
    };
    assert_ne!(
        verdict,
        Forced::No,
        "accepted proof for {:?} from {root}, which brute force refutes within {plies} plies:\n{text}",
        checked.prover
    );
}
);
