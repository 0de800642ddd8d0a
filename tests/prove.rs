//! The prover against the tables and against an independent brute-force search, and every proof
//! it produces through the independent checker (which must also reject damaged proofs).
//!
//! Tables are generated in memory (2 and 3 pieces, a second or two); the prover sees only the
//! 2-piece ones (and 3-piece positions with a capture, which the probe resolves into them), so
//! 3-piece positions must be proven by search and can be compared with the 3-piece tables.

mod common;

use antitb::r#gen::{LookupError, MemoryTables};
use antitb::probe::ProbeError;
use antitb::prove::{
    self, Answer, NoTables, Options, Oracle, Proof, Step, binary, check, check_binary,
};
use antitb::rules::{Board, Color, Piece, Position, Role, Square};
use antitb::table::{Material, Metric};
use common::rng::Rng;
use sha2::{Digest, Sha256};
use std::io::Cursor;
use std::sync::OnceLock;

/// In-memory tables seen as an oracle holding tables up to `max` pieces.
struct Tables {
    mem: &'static MemoryTables,
    max: u32,
}

impl Oracle for Tables {
    fn max_pieces(&self) -> u32 {
        self.max
    }

    fn wdl(&self, pos: &Position) -> Result<Option<i8>, ProbeError> {
        let n = pos.piece_count();
        if n > self.max + 1 || (n > self.max && !pos.has_capture()) {
            return Ok(None);
        }
        match self.mem.probe(pos, Metric::Dtz) {
            Ok(v) => Ok(Some(v.wdl().to_i8())),
            Err(LookupError::MissingTable(material)) => Err(ProbeError::MissingTable {
                material,
                metric: Metric::Wdl,
            }),
            Err(e) => panic!("in-memory tables: {e}"),
        }
    }
}

fn tables() -> &'static MemoryTables {
    static T: OnceLock<MemoryTables> = OnceLock::new();
    T.get_or_init(|| {
        let mut mem = MemoryTables::new();
        mem.generate_up_to(3, Metric::Dtz)
            .expect("3-piece tables generate");
        mem
    })
}

fn opts(max_nodes: u64) -> Options {
    Options {
        max_nodes: Some(max_nodes),
        memory: 16 << 20,
        ..Options::default()
    }
}

fn run(pos: &Position, oracle: &dyn Oracle, max_nodes: u64) -> prove::Report {
    prove::prove(pos, &[], oracle, &opts(max_nodes), &mut |_| {}).expect("prove runs")
}

fn run_threads(
    pos: &Position,
    oracle: &dyn Oracle,
    max_nodes: u64,
    threads: usize,
) -> prove::Report {
    let opts = Options {
        threads,
        ..opts(max_nodes)
    };
    prove::prove(pos, &[], oracle, &opts, &mut |_| {}).expect("prove runs")
}

/// Check a report's proof with the independent checker; return its text.
fn checked(report: &prove::Report, pos: &Position, oracle: &dyn Oracle) -> String {
    let proof = report
        .proof
        .as_ref()
        .expect("win and loss come with a proof");
    let winner = if report.answer == Answer::Win {
        pos.turn()
    } else {
        !pos.turn()
    };
    assert_eq!(proof.prover, winner);
    let text = proof.to_text("test");
    let c = check::check(&text, oracle)
        .unwrap_or_else(|e| panic!("proof of {pos} rejected: {e}\n{text}"));
    let s = proof.stats();
    assert_eq!(
        (c.nodes, c.depth, c.or_nodes, c.and_nodes),
        (s.nodes, s.depth, s.or_nodes, s.and_nodes)
    );
    // The binary format of the same proof: the streaming checker gives the same figures.
    let bin = proof.to_binary("test").expect("a checked proof writes");
    let b = check_binary::check(Cursor::new(&bin), oracle)
        .unwrap_or_else(|e| panic!("binary proof of {pos} rejected: {e}\n{text}"));
    assert_eq!(
        b, c,
        "binary and text checkers differ on the proof of {pos}"
    );
    text
}

fn random_placement(rng: &mut Rng, m: Material, turn: Color) -> Position {
    let mut board = Board::empty();
    for color in Color::ALL {
        for role in Role::ALL {
            for _ in 0..m.count_of(Piece { color, role }) {
                loop {
                    let sq = Square::new(rng.below(64) as u32);
                    if board.occupied().contains(sq)
                        || (role == Role::Pawn && (sq.rank() == 0 || sq.rank() == 7))
                    {
                        continue;
                    }
                    board.put(sq, Piece { color, role });
                    break;
                }
            }
        }
    }
    Position::from_board(board, turn)
}

// ---------------------------------------------------------------------------------------------
// An independent brute-force search (rules core only) for wins forced within a few plies.

/// Can the side to move force a win within `plies` plies (the game ends with it to move and
/// no legal move)?
fn wins_within(pos: &Position, plies: u32) -> bool {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return true;
    }
    plies >= 2 && moves.iter().any(|m| loses_within(&pos.after(m), plies - 1))
}

/// Does every move of the side to move lose within `plies` plies?
fn loses_within(pos: &Position, plies: u32) -> bool {
    let moves = pos.legal_moves();
    !moves.is_empty() && plies >= 1 && moves.iter().all(|m| wins_within(&pos.after(m), plies - 1))
}

/// Positions with 6 to 10 pieces from random games, each with a win for the side to move forced
/// in exactly `plies` plies (or a loss in `plies - 1`), found by brute force.
fn forced_positions(seed: u64, plies: u32, want: usize) -> (Vec<Position>, Vec<Position>) {
    let mut rng = Rng(seed);
    let (mut wins, mut losses) = (Vec::new(), Vec::new());
    for _game in 0..4000 {
        if wins.len() >= want && losses.len() >= want / 2 {
            break;
        }
        let mut pos = Position::startpos();
        loop {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.piece_count() < 6 {
                break;
            }
            if pos.piece_count() <= 10 {
                // Only the ones that need all the plies: no shorter forced result.
                if wins.len() < want && wins_within(&pos, plies) && !wins_within(&pos, plies - 2) {
                    wins.push(pos);
                    break;
                }
                if losses.len() < want / 2
                    && loses_within(&pos, plies - 1)
                    && !loses_within(&pos, plies - 3)
                {
                    losses.push(pos);
                    break;
                }
            }
            let m = moves[rng.below(moves.len())];
            pos.play(&m);
        }
    }
    (wins, losses)
}

#[test]
fn forced_wins_with_6_to_10_pieces_agree_with_brute_force() {
    let t = std::time::Instant::now();
    let (wins, losses) = forced_positions(0xb007_f0ce, 7, 12);
    eprintln!(
        "brute force: {} wins, {} losses in {:.2?}",
        wins.len(),
        losses.len(),
        t.elapsed()
    );
    assert!(
        wins.len() >= 8 && losses.len() >= 3,
        "too few forced positions found"
    );
    for (list, expect) in [(&wins, Answer::Win), (&losses, Answer::Loss)] {
        for pos in list.iter() {
            assert!((6..=10).contains(&pos.piece_count()));
            let r = run(pos, &NoTables, 200_000);
            assert_eq!(
                r.answer,
                expect,
                "{pos}: brute force says {}",
                expect.text()
            );
            let text = checked(&r, pos, &NoTables);
            let depth = r.proof.as_ref().unwrap().stats().depth;
            eprintln!(
                "{pos}: {} in {} nodes, proof {} nodes, depth {depth}",
                expect.text(),
                r.nodes,
                text.lines().count() - 4
            );
        }
    }
}

#[test]
fn three_pieces_agree_with_the_tables() {
    three_pieces_on_threads(1, 70);
}

/// The parallel search decides what the tables say (the same positions on 2 and 3 threads).
#[test]
fn three_pieces_agree_with_the_tables_on_several_threads() {
    three_pieces_on_threads(2, 70);
    three_pieces_on_threads(3, 35);
}

fn three_pieces_on_threads(threads: usize, count: usize) {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let mut rng = Rng(0x5eed_0003);
    let materials = Material::all_with_pieces(3);
    let (mut wins, mut draws, mut losses, mut unknown) = (0, 0, 0, 0);
    for i in 0..count {
        let m = materials[i % materials.len()];
        let turn = if rng.below(2) == 0 {
            Color::White
        } else {
            Color::Black
        };
        let pos = random_placement(&mut rng, m, turn);
        let wdl = mem.probe(&pos, Metric::Dtz).unwrap().wdl().to_i8();
        let r = run_threads(&pos, &two, 150_000, threads);
        let expect = match wdl {
            1 | 2 => Answer::Win,
            0 => Answer::NotAWin,
            _ => Answer::Loss,
        };
        if r.answer == Answer::Unknown {
            // Draws that need a long repetition argument can take millions of nodes.
            unknown += 1;
            eprintln!("unknown: {pos} (table {wdl:+}), {} nodes", r.nodes);
            continue;
        }
        assert_eq!(
            r.answer,
            expect,
            "{pos}: table WDL {wdl:+}, prover says {}",
            r.answer.text()
        );
        match r.answer {
            Answer::Win => wins += 1,
            Answer::Loss => losses += 1,
            _ => {
                assert!(r.disproof_size.is_some_and(|n| n > 0));
                draws += 1
            }
        }
        if r.proof.is_some() {
            checked(&r, &pos, &two);
        }
    }
    eprintln!(
        "3 pieces, {threads} threads: {wins} wins, {draws} not wins, {losses} losses, {unknown} unknown"
    );
    assert!(unknown <= 5, "too many unknown: {unknown}");
    if count >= 70 {
        assert!(wins >= 20 && losses >= 10 && draws >= 4);
    }
}

#[test]
fn the_tables_decide_positions_they_hold() {
    let mem = tables();
    let three = Tables { mem, max: 3 };
    let mut rng = Rng(0x7ab1e);
    for m in Material::all_with_pieces(3).into_iter().step_by(5) {
        let pos = random_placement(&mut rng, m, Color::White);
        let wdl = mem.probe(&pos, Metric::Dtz).unwrap().wdl().to_i8();
        let r = run(&pos, &three, 10);
        assert_eq!(r.nodes, 0, "{pos} is a table leaf");
        let expect = match wdl {
            1 | 2 => Answer::Win,
            0 => Answer::NotAWin,
            _ => Answer::Loss,
        };
        assert_eq!(r.answer, expect, "{pos}");
        if r.proof.is_some() {
            let text = checked(&r, &pos, &three);
            assert!(text.contains(&format!("0 table {wdl:+}")), "{text}");
        }
    }
}

/// Short forced wins from the start position (found by a scan of all 2-ply openings with a
/// budget of 20 000 nodes): Black's second move lets White give away every piece in a forced
/// capture chain, or White's first two plies lose the same way.
#[test]
fn short_opening_wins_from_the_start_position() {
    let mem = tables();
    let three = Tables { mem, max: 3 };
    let lines = [
        ("a2a4 d7d6", Answer::Win),
        ("b1a3 c7c5", Answer::Win),
        ("e2e3 d7d5", Answer::Win),
        ("g1h3 f7f5", Answer::Win),
        ("a2a4 e7e5", Answer::Win),
        ("b1a3 b8c6", Answer::Win),
        ("e2e4 b7b5", Answer::Loss),
        ("d2d4 e7e5", Answer::Loss),
    ];
    for (line, expect) in lines {
        let mut pos = Position::startpos();
        for m in line.split_whitespace() {
            let mv = antitb::rules::notation::parse_uci(&pos, m).unwrap();
            pos.play(&mv);
        }
        let r = run(&pos, &three, 100_000);
        assert_eq!(r.answer, expect, "after {line}");
        // Two threads search a schedule-dependent tree, to the same answer every time. (They once left a
        // line unknown now and then: a helper thread solving the root stopped the main thread,
        // and the certificate and the search for a loss took that for a spent budget.)
        for _ in 0..4 {
            let r2 = run_threads(&pos, &three, 100_000, 2);
            assert_eq!(r2.answer, expect, "after {line}, 2 threads: {:?}", r2.note);
            checked(&r2, &pos, &three);
        }
        let text = checked(&r, &pos, &three);
        let s = r.proof.as_ref().unwrap().stats();
        eprintln!(
            "{line}: {} in {} nodes, {:.3?}; proof {} nodes, depth {} ({} bytes)",
            expect.text(),
            r.nodes,
            r.time,
            s.nodes,
            s.depth,
            text.len()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The checker rejects damaged proofs, naming the node.

/// A proof from a 3-piece position with 2-piece tables that has table leaves and an AND node
/// with several replies.
fn proof_with_table_leaves() -> (Position, String) {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let mut rng = Rng(0xdead_beef);
    let materials = Material::all_with_pieces(3);
    for i in 0..400 {
        let pos = random_placement(&mut rng, materials[i % materials.len()], Color::White);
        let r = run(&pos, &two, 50_000);
        if r.answer != Answer::Win {
            continue;
        }
        let p: &Proof = r.proof.as_ref().unwrap();
        let tables = p.steps.iter().any(|s| matches!(s, Step::Table(_)));
        let wide = p
            .steps
            .iter()
            .any(|s| matches!(s, Step::And(r) if r.len() >= 2));
        if tables && wide && p.size() >= 10 {
            return (pos, checked(&r, &pos, &two));
        }
    }
    panic!("no suitable proof found");
}

fn node_lines(text: &str) -> Vec<(usize, Vec<String>)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| t.parse::<u32>().is_ok())
        })
        .map(|(i, l)| (i, l.split_whitespace().map(str::to_string).collect()))
        .collect()
}

fn with_line(text: &str, at: usize, new: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            if i == at {
                new.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn rejected(text: &str, oracle: &dyn Oracle) -> check::Rejected {
    match check::check(text, oracle) {
        Ok(c) => panic!("damaged proof accepted ({} nodes):\n{text}", c.nodes),
        Err(e) => e,
    }
}

#[test]
fn damaged_proofs_are_rejected_naming_the_node() {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let (_, text) = proof_with_table_leaves();
    let lines = node_lines(&text);

    // One defender reply removed.
    let (at, tok) = lines
        .iter()
        .find(|(_, t)| t[1] == "and" && t.len() >= 6)
        .unwrap();
    let removed = format!("{} and {}", tok[0], tok[4..].join(" "));
    let e = rejected(&with_line(&text, *at, &removed), &two);
    assert_eq!(e.node, Some(tok[0].parse().unwrap()), "{e}");
    assert!(
        e.to_string().contains(&format!("node {}", tok[0])) && e.message.contains(&tok[2]),
        "{e}"
    );
    assert!(e.message.contains("not covered"), "{e}");

    // One table leaf changed.
    let (at, tok) = lines.iter().find(|(_, t)| t[1] == "table").unwrap();
    let other = if tok[2] == "+2" {
        "+1"
    } else if tok[2] == "-2" {
        "-1"
    } else {
        "+2"
    };
    let e = rejected(
        &with_line(&text, *at, &format!("{} table {other}", tok[0])),
        &two,
    );
    assert_eq!(e.node, Some(tok[0].parse().unwrap()), "{e}");
    assert!(e.message.contains("table gives"), "{e}");
    // ... or claimed as the end of the game.
    let e = rejected(&with_line(&text, *at, &format!("{} end", tok[0])), &two);
    assert_eq!(e.node, Some(tok[0].parse().unwrap()), "{e}");
    // ... or checked without the tables.
    let e = rejected(&text, &NoTables);
    assert!(e.message.contains("no table"), "{e}");

    // A prover move replaced by another legal move: the lines below no longer fit.
    let (at, tok) = lines.iter().find(|(_, t)| t[1] == "or").unwrap();
    let _ = rejected(
        &with_line(&text, *at, &format!("{} or a1a1 {}", tok[0], tok[3])),
        &two,
    );

    // A node pointing back at the root: a cycle.
    let e = rejected(
        &with_line(&text, *at, &format!("{} or {} 0", tok[0], tok[2])),
        &two,
    );
    assert_eq!(e.node, Some(tok[0].parse().unwrap()), "{e}");

    // A node missing, or unreachable, or defined twice; a wrong header.
    let last = lines.last().unwrap();
    let e = rejected(&with_line(&text, last.0, "# removed"), &two);
    assert!(e.message.contains("not defined"), "{e}");
    let e = rejected(&format!("{text}\n999 end\n"), &two);
    assert_eq!(e.node, Some(999), "{e}");
    let e = rejected(&format!("{text}\n{}\n", last.1.join(" ")), &two);
    assert!(e.message.contains("defined twice"), "{e}");
    let e = rejected(&text.replacen("prover white", "prover black", 1), &two);
    assert_eq!(e.node, Some(0), "{e}");
    for bad in [
        "",
        "hello",
        "antitb-proof 1\nroot nonsense\nprover white\n0 end",
    ] {
        let _ = rejected(bad, &two);
    }
}

/// The answer the 3-piece tables give the side to move of `pos` (no legal move: it has won).
fn table_answer(mem: &MemoryTables, pos: &Position) -> Answer {
    if pos.legal_moves().is_empty() {
        return Answer::Win;
    }
    match mem.probe(pos, Metric::Dtz).unwrap().wdl().to_i8() {
        1 | 2 => Answer::Win,
        0 => Answer::NotAWin,
        _ => Answer::Loss,
    }
}

/// `prove_line` proves every move of the side to move on its own. On 3-piece positions (the
/// prover sees the 2-piece tables) each move's answer is what the 3-piece tables say of the
/// position after it, the line's answer is what they say of the root, and the proof of a lost
/// line (an AND root over every move, with the positions the moves' proofs share written once)
/// or of a won one (an OR root playing the winning move) passes the checker.
#[test]
fn a_line_proves_every_move_and_merges_their_proofs() {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let mut rng = Rng(0x0011_e5ee);
    let materials = Material::all_with_pieces(3);
    let (mut lines, mut lost, mut won, mut shared, mut unknown) = (0, 0, 0, 0, 0);
    for i in 0..90 {
        let m = materials[i % materials.len()];
        let pos = random_placement(&mut rng, m, Color::Black);
        let moves = pos.legal_moves();
        if moves.len() < 2 {
            continue;
        }
        let line = prove::prove_line(&pos, &[], &two, &opts(150_000), None, &mut |_, _| {})
            .expect("prove runs");
        let listed: Vec<_> = line.replies.iter().map(|r| r.mv).collect();
        assert_eq!(listed, moves.iter().copied().collect::<Vec<_>>(), "{pos}");
        let mut open = false;
        for r in &line.replies {
            let child = pos.after(&r.mv);
            let rep = r.report.as_ref().expect("every move is searched");
            if rep.answer == Answer::Unknown {
                open = true;
                continue;
            }
            assert_eq!(
                rep.answer,
                table_answer(mem, &child),
                "{pos} then {}: {child}",
                r.mv.uci()
            );
        }
        if open {
            unknown += 1;
            continue;
        }
        lines += 1;
        assert_eq!(line.answer, table_answer(mem, &pos), "{pos}");
        let Some(proof) = &line.proof else {
            assert_eq!(
                line.answer,
                Answer::NotAWin,
                "{pos}: a decided line has a proof"
            );
            continue;
        };
        let winner = if line.answer == Answer::Win {
            pos.turn()
        } else {
            !pos.turn()
        };
        assert_eq!((proof.prover, proof.root), (winner, pos));
        let text = proof.to_text("line");
        check::check(&text, &two).unwrap_or_else(|e| panic!("line {pos} rejected: {e}\n{text}"));
        // Read back (as the proof library does), it is the same proof.
        let read = Proof::from_text(&text).unwrap_or_else(|e| panic!("{pos}: {e}"));
        assert_eq!(read.to_text("line"), text, "{pos}");
        if line.answer == Answer::Loss {
            lost += 1;
            let parts: usize = line
                .replies
                .iter()
                .map(|r| r.report.as_ref().unwrap().proof.as_ref().unwrap().size())
                .sum();
            // Each position once: never more nodes than the moves' proofs and the root.
            assert!(proof.size() <= parts + 1, "{pos}");
            shared += line.shared_nodes;
        } else {
            won += 1;
        }
    }
    eprintln!(
        "lines: {lines} decided ({lost} lost, {won} won), {unknown} open; {shared} nodes shared"
    );
    // Draws that need a long repetition argument stay open within the budget (as in
    // `three_pieces_agree_with_the_tables`); a line is open when any of its moves is.
    assert!(
        unknown * 4 <= lines,
        "too many open lines: {unknown} of {}",
        lines + unknown
    );
    assert!(lost >= 5 && won >= 20, "{lost} lost, {won} won");
    assert!(shared > 0, "no lost line's moves shared a position");
}

/// A table far too small for the search still yields a proof: the moves that proved OR nodes
/// are kept apart from the entries, and the extraction searches again where they were lost.
/// Before the moves were kept, both lines were proved at the root but no acyclic proof could be
/// extracted below 4 MB and 1 MB; with them, below 512 KB and 256 KB (64 re-searches allowed);
/// with re-searches bounded by nodes alone, these sizes (a quarter of those) extract.
#[test]
fn proofs_are_extracted_from_a_small_table() {
    let mem = tables();
    let three = Tables { mem, max: 3 };
    for (line, bytes) in [
        ("e2e3 b7b5 f1b5 a7a6", 128 << 10),
        ("e2e3 b7b5 f1b5 b8a6", 64 << 10),
    ] {
        let mut pos = Position::startpos();
        for m in line.split_whitespace() {
            let mv = antitb::rules::notation::parse_uci(&pos, m).unwrap();
            pos.play(&mv);
        }
        for threads in [1, 2] {
            let o = Options {
                memory: bytes,
                threads,
                ..opts(2_000_000)
            };
            let r = prove::prove(&pos, &[], &three, &o, &mut |_| {}).expect("prove runs");
            assert_eq!(
                r.answer,
                Answer::Win,
                "after {line}, {threads} threads: {:?}",
                r.note
            );
            checked(&r, &pos, &three);
            eprintln!(
                "{line}, {} KB, {threads} threads: {} nodes, proof {} nodes, {:.3?}",
                bytes >> 10,
                r.nodes,
                r.proof.as_ref().unwrap().stats().nodes,
                r.time
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binary format (FORMAT.md, "Binary format"): round trips, and damaged files rejected.

/// A binary proof taken apart along FORMAT.md: the header (everything before the zstd frame)
/// and the decompressed records, each a tag byte and, for references and `or` nodes, a number.
struct BinaryParts {
    header: Vec<u8>,
    records: Vec<(u8, Option<u32>)>,
}

fn leb128(bytes: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        v |= u32::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
    }
    panic!("varint too long");
}

fn split_binary(bin: &[u8]) -> BinaryParts {
    assert_eq!(&bin[..8], b"ATBPROOF");
    let fen_len = u16::from_le_bytes([bin[18], bin[19]]) as usize;
    let at = 20 + fen_len;
    let comment_len = u32::from_le_bytes(bin[at..at + 4].try_into().unwrap()) as usize;
    let body_at = at + 4 + comment_len;
    let digest = Sha256::digest(&bin[..bin.len() - 32]);
    assert_eq!(
        digest.as_slice(),
        &bin[bin.len() - 32..],
        "trailer is the SHA-256"
    );
    let raw = zstd::decode_all(&bin[body_at..bin.len() - 32]).expect("the body is one zstd frame");
    let mut records = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let tag = raw[i];
        i += 1;
        let n = matches!(tag & 7, 0 | 1).then(|| leb128(&raw, &mut i));
        records.push((tag, n));
    }
    BinaryParts {
        header: bin[..body_at].to_vec(),
        records,
    }
}

fn join_binary(p: &BinaryParts) -> Vec<u8> {
    let mut raw = Vec::new();
    for &(tag, n) in &p.records {
        raw.push(tag);
        if let Some(mut v) = n {
            while v >= 0x80 {
                raw.push((v as u8 & 0x7f) | 0x80);
                v >>= 7;
            }
            raw.push(v as u8);
        }
    }
    let mut out = p.header.clone();
    out.extend(zstd::encode_all(&raw[..], 3).unwrap());
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

/// The proofs of the committed library (`proofs/`) that have no table leaf (the checkers need
/// no table for them), as text: opening proofs of thousands of nodes, with transpositions.
/// The library holds binary proofs (`.proofb`, each accepted by the binary checker before it
/// is read back) or, written before the binary format, text proofs (`.proof`).
fn library_proofs_without_table_leaves() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("proofs/e3 is in the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "proof" || e == "proofb"))
        .collect();
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| {
            if f.extension().is_some_and(|e| e == "proofb") {
                let bin = std::fs::read(f).unwrap();
                check_binary::check(Cursor::new(&bin), &NoTables).ok()?;
                Some(Proof::from_binary(&bin).unwrap().to_text("library"))
            } else {
                Some(std::fs::read_to_string(f).unwrap())
            }
        })
        .filter(|t| check::check(t, &NoTables).is_ok())
        .collect();
    assert!(
        texts.len() >= 2,
        "proofs/e3 has too few proofs without table leaves"
    );
    texts
}

/// The reader's refusal of a binary proof that does not read.
fn unread(bin: &[u8]) -> String {
    match Proof::from_binary(bin) {
        Ok(p) => panic!("damaged binary proof read ({} nodes)", p.size()),
        Err(e) => e,
    }
}

/// The checker's one-line rejection of a damaged binary proof. The reader is run on it too: it
/// must not panic (it reads, it does not check, so it may accept what only the checker sees).
fn rejected_binary(bin: &[u8], oracle: &dyn Oracle) -> String {
    let _ = Proof::from_binary(bin);
    match check_binary::check(Cursor::new(bin), oracle) {
        Ok(c) => panic!("damaged binary proof accepted ({} nodes)", c.nodes),
        Err(e) => {
            let e = e.to_string();
            assert!(!e.contains('\n'), "rejection is not one line: {e}");
            e
        }
    }
}

#[test]
fn binary_proofs_round_trip_and_give_the_text_checkers_figures() {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let three = Tables { mem, max: 3 };
    let (_, text) = proof_with_table_leaves();
    let mut cases = vec![(text, &two as &dyn Oracle)];
    // Opening proofs, with their transpositions (shared nodes and references).
    for line in ["a2a4 d7d6", "e2e3 d7d5", "e2e4 b7b5"] {
        let mut pos = Position::startpos();
        for m in line.split_whitespace() {
            pos.play(&antitb::rules::notation::parse_uci(&pos, m).unwrap());
        }
        let r = run(&pos, &three, 100_000);
        cases.push((checked(&r, &pos, &three), &three));
    }
    for text in library_proofs_without_table_leaves() {
        cases.push((text, &NoTables));
    }
    let mut references = 0;
    for (text, oracle) in cases {
        let c = check::check(&text, oracle).expect("text proof passes");
        // Text -> proof -> binary: the graph read back from the text, renumbered.
        let proof = Proof::from_text(&text).unwrap();
        let bin = proof.to_binary("round trip").unwrap();
        assert_eq!(
            check_binary::check(Cursor::new(&bin), oracle).unwrap(),
            c,
            "figures differ"
        );
        // Read back: the text checker accepts it with the same figures, and it writes the
        // same bytes (the same graph; the comment is kept).
        let read = binary::read_binary(&bin).unwrap();
        assert_eq!(read.comment, "round trip");
        let back = Proof::from_binary(&bin).unwrap();
        assert_eq!(back.size(), c.nodes, "one step per node");
        assert_eq!(check::check(&back.to_text("back"), oracle).unwrap(), c);
        let st = back.stats();
        assert_eq!(
            (
                st.or_nodes,
                st.and_nodes,
                st.end_leaves,
                st.table_leaves,
                st.depth
            ),
            (
                c.or_nodes,
                c.and_nodes,
                c.end_leaves,
                c.table_leaves,
                c.depth
            )
        );
        assert_eq!(back.to_binary("round trip").unwrap(), bin);
        // Deterministic: the same graph gives the same bytes, however it is numbered.
        assert_eq!(bin, proof.to_binary("round trip").unwrap());
        let again = Proof::from_text(&proof.to_text("again")).unwrap();
        assert_eq!(bin, again.to_binary("round trip").unwrap());
        // One record per node, and a reference for every edge into a node met before.
        let parts = split_binary(&bin);
        let refs = parts.records.iter().filter(|(t, _)| t & 7 == 0).count();
        assert_eq!(parts.records.len() - refs, c.nodes);
        references += refs;
        let shared = parts
            .records
            .iter()
            .filter(|(t, _)| t & 7 != 0 && t & 8 != 0)
            .count();
        let st = check_binary::check_streamed(Cursor::new(&bin), oracle).unwrap();
        assert_eq!((st.shared, st.references), (shared as u64, refs as u64));
        assert!(st.max_kept <= shared, "{st:?}");
        assert_eq!(join_binary(&parts), {
            // Re-compressed at another level: still accepted with the same figures.
            let b = join_binary(&parts);
            assert_eq!(check_binary::check(Cursor::new(&b), oracle).unwrap(), c);
            b
        });
    }
    assert!(references > 0, "no proof had a transposition");
}

#[test]
fn damaged_binary_proofs_are_rejected_with_one_line() {
    let mem = tables();
    let two = Tables { mem, max: 2 };
    let (_, text) = proof_with_table_leaves();
    let bin = Proof::from_text(&text).unwrap().to_binary("").unwrap();
    check_binary::check(Cursor::new(&bin), &two).expect("intact proof passes");

    // Truncated anywhere, or any byte flipped: refused (the checksum, or before it).
    for len in 0..bin.len() {
        rejected_binary(&bin[..len], &two);
        unread(&bin[..len]);
    }
    for i in 0..bin.len() {
        let mut b = bin.clone();
        b[i] ^= 0x10;
        let e = rejected_binary(&b, &two);
        unread(&b);
        if i >= 8 {
            assert!(e.contains("checksum"), "byte {i}: {e}");
        }
    }
    let mut longer = bin.clone();
    longer.push(0);
    rejected_binary(&longer, &two);

    let parts = split_binary(&bin);
    let find = |kind: &dyn Fn(u8) -> bool| {
        parts
            .records
            .iter()
            .position(|(t, _)| kind(*t))
            .expect("the proof has such a record")
    };
    // A move index past the legal moves.
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    let or = find(&|t| t & 7 == 1);
    p.records[or].1 = Some(300);
    let e = rejected_binary(&join_binary(&p), &two);
    assert!(e.contains("move index 300"), "{e}");
    assert!(unread(&join_binary(&p)).contains("move index 300"));
    // Another legal move: the rest no longer fits (the wrong side to move, or a wrong leaf).
    p.records[or].1 = Some(parts.records[or].1.unwrap() ^ 1);
    rejected_binary(&join_binary(&p), &two);
    // A table leaf with another WDL (+2 <-> +1, -2 <-> -1).
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    let table = find(&|t| t & 7 >= 4);
    p.records[table].0 ^= 1;
    let e = rejected_binary(&join_binary(&p), &two);
    assert!(e.contains("the table gives WDL"), "{e}");
    // A record cut off, or one too many.
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    p.records.pop();
    rejected_binary(&join_binary(&p), &two);
    unread(&join_binary(&p));
    p.records = parts.records.clone();
    p.records.push((3, None));
    rejected_binary(&join_binary(&p), &two);
    unread(&join_binary(&p));

    // References, in an opening proof of the library with transpositions.
    let text = library_proofs_without_table_leaves()
        .into_iter()
        .max_by_key(|t| t.len())
        .unwrap();
    let three = &NoTables;
    let bin = Proof::from_text(&text).unwrap().to_binary("").unwrap();
    let parts = split_binary(&bin);
    // The first reference with at least 20 shared nodes defined before it (so that it can be
    // redirected to others, not all of them above it).
    let mut shared = 0;
    let mut first_ref = None;
    for (i, (t, _)) in parts.records.iter().enumerate() {
        if t & 7 == 0 && shared >= 20 {
            first_ref = Some(i);
            break;
        }
        if t & 7 != 0 && t & 8 != 0 {
            shared += 1;
        }
    }
    let first_ref = first_ref.expect("the proof has a reference after 20 shared nodes");
    // To a shared node not defined yet.
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    p.records[first_ref].1 = Some(1_000_000);
    let e = rejected_binary(&join_binary(&p), three);
    assert!(e.contains("not defined yet"), "{e}");
    assert!(unread(&join_binary(&p)).contains("not defined yet"));
    // To a node not completed: the root made shared (#0, the others renumbered), referred to
    // from inside itself (a cycle).
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    p.records[0].0 |= 8;
    for r in p.records.iter_mut().filter(|(t, _)| t & 7 == 0) {
        r.1 = Some(r.1.unwrap() + 1);
    }
    p.records[first_ref].1 = Some(0);
    let e = rejected_binary(&join_binary(&p), three);
    assert!(e.contains("not complete"), "{e}");
    assert!(unread(&join_binary(&p)).contains("not complete"));
    // To another shared node: every one defined before the reference is rejected, and those
    // still kept are rejected as another position.
    let shared_before = parts.records[..first_ref]
        .iter()
        .filter(|(t, _)| t & 7 != 0 && t & 8 != 0)
        .count() as u32;
    let target = parts.records[first_ref].1.unwrap();
    let mut other_position = 0;
    // The most recent ones first: a streamed check keeps only some shared nodes.
    for k in (0..shared_before).rev().filter(|&k| k != target).take(100) {
        let mut p = BinaryParts {
            header: parts.header.clone(),
            records: parts.records.clone(),
        };
        p.records[first_ref].1 = Some(k);
        let e = rejected_binary(&join_binary(&p), three);
        if e.contains("another position") {
            other_position += 1;
        }
    }
    assert!(
        other_position > 0,
        "no reference redirected to another position"
    );
    // The reference replaced by a leaf: the node counts disagree with the header, or the leaf
    // is wrong.
    let mut p = BinaryParts {
        header: parts.header.clone(),
        records: parts.records.clone(),
    };
    p.records[first_ref] = (3, None);
    rejected_binary(&join_binary(&p), three);
}

/// The binary checker, like the text one, names only the rules core, the tables' oracle and
/// the text checker's result types: nothing of the search or of the writer.
#[test]
fn the_binary_checker_is_independent_of_the_search() {
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/prove/check_binary.rs"),
    )
    .unwrap();
    for (n, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap();
        for (prefix, allowed) in [
            ("super::", &["Oracle", "check::", "check"][..]),
            ("crate::", &["rules::", "rules"][..]),
        ] {
            for (at, _) in code.match_indices(prefix) {
                let rest = &code[at + prefix.len()..];
                assert!(
                    allowed.iter().any(|a| rest.starts_with(a)),
                    "check_binary.rs line {}: {line}",
                    n + 1
                );
            }
        }
    }
}
