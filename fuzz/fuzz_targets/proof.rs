//! The proof checkers (`antitb check-proof`, text and binary), with the tables up to three
//! pieces.
//!
//! Inputs: text proofs (`FORMAT.md`); a whole binary proof (starting `ATBPROOF`); a store of
//! solved positions (starting `ATBSOLVD`, `solved.rs`: it must never panic, must err in one line
//! and must give keys in strictly increasing order); or, after a
//! first byte 0xB1 (never the start of text), the parts of a binary proof that the harness
//! assembles into a file with a valid checksum, so that the fuzzer reaches the records:
//! `0xB1, prover (0 or 1), FEN length n, n bytes of FEN, records` (uncompressed; the header's
//! node count is the number of node records, counted as the format reads them).
//!
//! Properties: checking never panics; a rejection is one line; the proof library's reader of
//! binary proofs (`Proof::from_binary`) never panics, errs in one line and reads back every
//! binary proof the checker accepts with the same nodes; a proof a checker accepts has
//! a root that the prover really wins: by the tables where the root has at most three pieces,
//! otherwise by a brute-force search of the rules core (the tables at positions of at most three
//! pieces) to the proof's depth and two plies more (a table leaf with
//! a fourth piece takes a capture to reach a table); a search that runs out of its node budget
//! confirms nothing and is skipped.

#![no_main]

use antitb::prove::Proof;
use antitb::prove::{check, check_binary, solved};
use antitb_fuzz::{Forced, Search, tablebase};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use std::io::Cursor;

/// Nodes of brute force per accepted proof.
const BUDGET: u64 = 50_000;

fuzz_target!(
    init: {
        // The tables are built (first run) and opened here, outside any input's time limit.
        tablebase();
    },
    |data: &[u8]| {
    if data.starts_with(solved::MAGIC) {
        match solved::parse(data) {
            Ok(records) => assert!(records.windows(2).all(|w| w[0].0 < w[1].0)),
            Err(e) => assert!(!e.contains('\n'), "store error is not one line: {e}"),
        }
        return;
    }
    let assembled;
    let mut binary: Option<&[u8]> = None;
    let (checked, shown) = if data.starts_with(check_binary::MAGIC) {
        binary = Some(data);
        (check_binary::check(Cursor::new(data), tablebase()), String::from("(binary)"))
    } else if data.first() == Some(&0xB1) {
        let Some(file) = assemble(&data[1..]) else {
            return;
        };
        assembled = file;
        binary = Some(&assembled);
        (check_binary::check(Cursor::new(&assembled), tablebase()), format!("(binary records) {data:?}"))
    } else {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        (check::check(text, tablebase()), text.to_string())
    };
    // The search side's reader of binary proofs (the proof library's): never panics, one-line
    // errors, and it reads back every proof the checker accepts, node for node.
    let read = binary.map(Proof::from_binary);
    if let Some(Err(e)) = &read {
        assert!(!e.contains('\n'), "reader error is not one line: {e}");
    }
    if let (Ok(c), Some(read)) = (&checked, &read) {
        let p = read.as_ref().expect("a binary proof the checker accepts is read back");
        let s = p.stats();
        assert_eq!(
            (s.nodes, s.or_nodes, s.and_nodes, s.end_leaves, s.table_leaves, s.depth),
            (c.nodes, c.or_nodes, c.and_nodes, c.end_leaves, c.table_leaves, c.depth),
            "the proof read back differs from the one checked"
        );
    }
    let checked = match checked {
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
        "accepted proof for {:?} from {root}, which brute force refutes within {plies} plies:\n{shown}",
        checked.prover
    );
}
);

/// A binary proof file from `prover, FEN length, FEN, records` (see the module documentation).
fn assemble(data: &[u8]) -> Option<Vec<u8>> {
    let (&prover, rest) = data.split_first()?;
    let (&n, rest) = rest.split_first()?;
    let n = usize::from(n);
    if rest.len() < n {
        return None;
    }
    let (fen, records) = rest.split_at(n);
    // Node records: every tag but a reference's (kind 0); references and `or` nodes (kinds 0
    // and 1) carry a LEB128 number.
    let mut nodes = 0u64;
    let mut i = 0;
    while i < records.len() {
        let kind = records[i] & 7;
        i += 1;
        if kind != 0 {
            nodes += 1;
        }
        if kind <= 1 {
            while i < records.len() && records[i] & 0x80 != 0 {
                i += 1;
            }
            i += 1;
        }
    }
    let mut file = check_binary::MAGIC.to_vec();
    file.push(check_binary::VERSION);
    file.push(prover);
    file.extend_from_slice(&nodes.to_le_bytes());
    file.extend_from_slice(&(n as u16).to_le_bytes());
    file.extend_from_slice(fen);
    file.extend_from_slice(&0u32.to_le_bytes());
    file.extend(zstd::encode_all(records, 1).ok()?);
    let digest = Sha256::digest(&file);
    file.extend_from_slice(&digest);
    Some(file)
}
