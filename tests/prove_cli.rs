//! `antitb prove` and `antitb check-proof` as a user runs them: answers, proof files that the
//! checker accepts, damaged files and bad input rejected with one line and a non-zero exit.

mod common;

use common::cli::{antitb, text};
use std::path::{Path, PathBuf};
use std::process::Output;

fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("antitb-prove-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `check-proof FILE ARGS...`: accepted as a White win; its output.
fn checked_white_win(proof: &Path, args: &[&str]) -> String {
    let mut all = vec!["check-proof", s(proof)];
    all.extend_from_slice(args);
    let o = antitb(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("proof OK: White wins"), "{out}");
    out
}

/// The proof files of a directory (a library also holds its store of solved positions,
/// `solved.atbs`), sorted.
fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "proof" || e == "proofb"))
        .collect();
    files.sort();
    files
}

/// A binary proof without its comment (FORMAT.md: the header's comment, which holds the
/// search's time and node count) and checksum: the proof's graph, byte for byte.
fn binary_without_comment(bytes: &[u8]) -> Vec<u8> {
    assert!(bytes.starts_with(b"ATBPROOF"), "not a binary proof");
    let le = |b: &[u8]| {
        b.iter()
            .rev()
            .fold(0usize, |a, &x| (a << 8) | usize::from(x))
    };
    // Magic, version, prover, nodes; then the FEN and the comment with their lengths.
    let fen_end = 20 + le(&bytes[18..20]);
    let comment_len = le(&bytes[fen_end..fen_end + 4]);
    let mut out = bytes[..fen_end].to_vec();
    out.extend_from_slice(&bytes[fen_end + 4 + comment_len..bytes.len() - 32]);
    out
}

/// Whether a file is named and starts as a binary proof (FORMAT.md: the magic `ATBPROOF`).
fn is_binary_proof(f: &Path) -> bool {
    let bytes = std::fs::read(f).unwrap();
    f.extension().is_some_and(|e| e == "proofb") && bytes.starts_with(b"ATBPROOF")
}

#[test]
fn prove_writes_a_proof_that_check_proof_accepts() {
    let dir = scratch("opening");
    let proof = dir.join("a4d6.proof");
    let o = antitb(&[
        "prove",
        "--moves",
        "a2a4 d7d6",
        "--memory",
        "8",
        "-q",
        "--proof",
        s(&proof),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().next(), Some("win"), "{out}");
    assert!(out.contains("proof 33 nodes"), "{out}");
    assert!(out.contains("winning move"), "{out}");
    let text = std::fs::read_to_string(&proof).unwrap();
    assert!(text.starts_with("antitb-proof 1\n"), "{text}");

    let out = checked_white_win(&proof, &["--tables", s(&dir)]);
    assert!(out.contains("depth 32 plies"), "{out}");

    // The same with SAN and move numbers, and on two threads.
    let o = antitb(&["prove", "--moves", "1. a4 d6", "--memory", "8", "-q"]);
    assert_eq!(stdout(&o).lines().next(), Some("win"));
    let o = antitb(&[
        "prove",
        "--moves",
        "a2a4 d7d6",
        "--memory",
        "8",
        "--threads",
        "2",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().next(), Some("win"), "{}", stdout(&o));

    // Remove the defender's only reply at node 1: rejected, naming node 1.
    let damaged = text
        .lines()
        .map(|l| if l.starts_with("1 and ") { "1 and" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&proof, damaged).unwrap();
    let o = antitb(&["check-proof", s(&proof), "--tables", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("node 1") && err.contains("not covered"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loss_and_table_leaves_through_the_command_line() {
    let dir = scratch("tables");
    let tables = dir.join("tables");
    let o = antitb(&[
        "generate",
        "--max-pieces",
        "2",
        "--tables",
        s(&tables),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));

    // 1.e4 b5: White to move loses.
    let proof = dir.join("e4b5.proof");
    let o = antitb(&[
        "prove",
        "--moves",
        "e2e4 b7b5",
        "--tables",
        s(&tables),
        "-q",
        "--proof",
        s(&proof),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().next(), Some("loss"), "{}", stdout(&o));
    let o = antitb(&["check-proof", s(&proof), "--tables", s(&tables)]);
    assert!(
        stdout(&o).starts_with("proof OK: Black wins"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );

    // A 3-piece position proven through 2-piece table leaves; the checker needs the tables.
    let fen = "8/8/8/3b4/8/8/8/KB6 w - - 0 1";
    let o = antitb(&[
        "prove",
        fen,
        "--tables",
        s(&tables),
        "-q",
        "--proof",
        s(&proof),
    ]);
    assert_eq!(stdout(&o).lines().next(), Some("win"), "{}", stdout(&o));
    let o = antitb(&["check-proof", s(&proof), "--tables", s(&tables)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 table"), "{}", stdout(&o));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = antitb(&["check-proof", s(&proof), "--tables", s(&empty)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no table holds this position"),
        "{}",
        stderr(&o)
    );

    // A draw: not a win, and no proof file.
    let o = antitb(&[
        "prove",
        "8/8/8/3b4/8/8/8/K1B5 w - - 0 1",
        "--tables",
        s(&tables),
        "-q",
    ]);
    assert_eq!(
        stdout(&o).lines().next(),
        Some("not a win"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn budgets_and_bad_input() {
    // A long win does not fit in 200 nodes: unknown, with what is known of each move.
    let o = antitb(&[
        "prove",
        "--moves",
        "e2e3 b7b5",
        "--max-nodes",
        "200",
        "--memory",
        "8",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().next(), Some("unknown"), "{out}");
    assert!(out.contains("f1b5 open"), "{out}");

    for args in [
        vec!["prove", "not a fen"],
        vec!["prove", "--moves", "e2e5"],
        vec!["prove"],
        vec!["prove", "--moves", "e2e4", "--time=-1"],
        vec!["prove", "--moves", "e2e4", "--time", "0"],
        vec!["prove", "--moves", "e2e4", "--memory", "0"],
        vec!["prove", "--moves", "e2e4", "--memory", "100000000000", "-q"],
        vec!["prove", "--moves", "e2e4", "--threads", "0"],
        vec!["prove", "--moves", "e2e4", "--threads", "65"],
        vec![
            "prove",
            "--moves",
            "e2e4",
            "--tables",
            "/nonexistent/antitb",
        ],
        vec!["check-proof", "/nonexistent/antitb.proof"],
    ] {
        let o = antitb(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("antitb: error: "), "{args:?}: {err}");
    }
}

/// `prove --all`: every Black reply after 1.e3 b5 2.Bxb5 a6 3.Bxa6 proven on its own (each
/// a White win), reported move by move, and one proof of the line that `check-proof` accepts
/// (an AND root over the three captures). The proof file is written whole or not at all.
#[test]
fn all_replies_of_a_line_are_proven_and_written_as_one_proof() {
    let dir = scratch("line");
    let proof = dir.join("line.proof");
    let line = "e2e3 b7b5 f1b5 a7a6 b5a6";
    let prove_line = |to: &Path| {
        antitb(&[
            "prove",
            "--all",
            "--moves",
            line,
            "--memory",
            "8",
            "-q",
            "--proof",
            s(to),
        ])
    };
    let o = prove_line(&proof);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().next(), Some("loss"), "{out}");
    let replies: Vec<&str> = out.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(replies.len(), 3, "{out}");
    for r in &replies {
        assert!(r.contains("White wins") && r.contains("proof"), "{out}");
    }
    assert!(out.contains("proof of the line"), "{out}");
    let o = antitb(&["check-proof", s(&proof)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let checked = stdout(&o);
    assert!(
        checked.starts_with("proof OK: White wins from"),
        "{checked}"
    );
    let text = std::fs::read_to_string(&proof).unwrap();
    let root_line = text.lines().find(|l| l.starts_with("0 ")).unwrap();
    assert!(
        root_line.starts_with("0 and ") && root_line.split(' ').count() == 8,
        "{text}"
    );

    // An unwritable proof path: one line naming it, no file and no temporary left behind.
    let missing = dir.join("no-such-dir").join("line.proof");
    let o = prove_line(&missing);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no-such-dir"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(left.len(), 1, "only line.proof: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prove --all --library DIR`: each move's proof is kept in the library; a second run searches
/// nothing and writes the same line; a damaged or misplaced library file is reported, proven
/// again and replaced; an unwritable library is refused before any search.
#[test]
fn a_proof_library_keeps_the_moves_of_a_line_between_runs() {
    let dir = scratch("library");
    let lib = dir.join("lib");
    let line = "e2e3 b7b5 f1b5 a7a6 b5a6";
    let run = |proof: &Path| {
        let o = antitb(&[
            "prove",
            "--all",
            "--moves",
            line,
            "--memory",
            "8",
            "-q",
            "--library",
            s(&lib),
            "--proof",
            s(proof),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let first = run(&dir.join("first.proofb"));
    assert_eq!(first.lines().next(), Some("loss"), "{first}");
    let files = sorted_files(&lib);
    assert_eq!(files.len(), 3, "one proof per move: {files:?}");
    assert!(
        lib.join("solved.atbs").exists(),
        "no store of solved positions"
    );
    assert!(
        first.contains(&format!(" in {} after saving", s(&lib.join("solved.atbs")))),
        "{first}"
    );
    for f in &files {
        assert!(is_binary_proof(f), "{}", f.display());
        let o = antitb(&["check-proof", s(f)]);
        assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
        assert!(stdout(&o).contains("(binary)"), "{}", stdout(&o));
    }

    let second = run(&dir.join("second.proofb"));
    assert_eq!(second.lines().next(), Some("loss"), "{second}");
    let stored = second
        .lines()
        .filter(|l| l.contains("from the proof library"));
    assert_eq!(stored.count(), 3, "{second}");
    assert!(second.contains("nodes 0 expanded"), "{second}");
    // The line's proofs are the same graph: the same binary file but for the comment.
    let body = |p: &str| binary_without_comment(&std::fs::read(dir.join(p)).unwrap());
    assert_eq!(body("first.proofb"), body("second.proofb"));

    // The position before the line (White to move, 2 legal moves): its search finds the line's
    // replies proved in the store, and the extraction takes their proofs whole from the library.
    let parent = dir.join("parent.proof");
    let o = antitb(&[
        "prove",
        "--moves",
        "e2e3 b7b5 f1b5 a7a6",
        "--memory",
        "8",
        "-q",
        "--library",
        s(&lib),
        "--proof",
        s(&parent),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(out.lines().next(), Some("win"), "{out}");
    assert!(
        out.contains("note: the proof takes 3 proofs whole from the proof library"),
        "{out}"
    );
    assert!(out.contains("winning move b5a6"), "{out}");
    checked_white_win(&parent, &[]);

    // One file truncated, another replaced by a proof of a different position.
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 2]).unwrap();
    std::fs::copy(&files[2], &files[1]).unwrap();
    let third = run(&dir.join("third.proofb"));
    assert_eq!(third.lines().next(), Some("loss"), "{third}");
    let notes: Vec<&str> = third
        .lines()
        .filter(|l| l.contains("library file not used"))
        .collect();
    assert_eq!(notes.len(), 2, "{third}");
    assert!(notes.iter().any(|l| l.contains("rejected")), "{third}");
    assert!(
        notes.iter().any(|l| l.contains("another position")),
        "{third}"
    );
    assert!(
        notes.iter().any(|l| l.contains("checksum mismatch")),
        "{third}"
    );
    assert_eq!(body("first.proofb"), body("third.proofb"));
    for f in &files {
        assert!(is_binary_proof(f), "{}", f.display());
        let o = antitb(&["check-proof", s(f)]);
        assert!(
            o.status.success(),
            "replaced {}: {}",
            f.display(),
            stderr(&o)
        );
    }

    // A library written before the binary format: the same proofs as text files
    // (`check-proof --write-text`), served as they are.
    let old = dir.join("old");
    std::fs::create_dir_all(&old).unwrap();
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        let text = old.join(format!("{name}.proof"));
        let o = antitb(&["check-proof", s(f), "--write-text", s(&text)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("text proof written"), "{}", stdout(&o));
        assert!(!is_binary_proof(&text));
        let o = antitb(&["check-proof", s(&text)]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("(text)"), "{}", stdout(&o));
    }
    std::fs::remove_dir_all(&lib).unwrap();
    std::fs::rename(&old, &lib).unwrap();
    let texts = sorted_files(&lib);
    let fourth = run(&dir.join("fourth.proofb"));
    let stored = fourth
        .lines()
        .filter(|l| l.contains("from the proof library"));
    assert_eq!(stored.count(), 3, "{fourth}");
    assert!(fourth.contains("nodes 0 expanded"), "{fourth}");
    assert_eq!(body("first.proofb"), body("fourth.proofb"));
    assert_eq!(sorted_files(&lib), texts, "served, not rewritten");
    // A damaged text file: reported, proven again, replaced by a binary file.
    let text = std::fs::read_to_string(&texts[1]).unwrap();
    std::fs::write(&texts[1], &text[..text.len() / 2]).unwrap();
    let fifth = run(&dir.join("fifth.proofb"));
    assert_eq!(
        fifth
            .lines()
            .filter(|l| l.contains("library file not used") && l.contains("rejected"))
            .count(),
        1,
        "{fifth}"
    );
    assert_eq!(body("first.proofb"), body("fifth.proofb"));
    let now = sorted_files(&lib);
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(
        !now.contains(&texts[1]),
        "the text file is removed: {now:?}"
    );
    assert!(now.contains(&texts[1].with_extension("proofb")), "{now:?}");
    let o = antitb(&["check-proof", s(&texts[1].with_extension("proofb"))]);
    assert!(o.status.success(), "{}", stderr(&o));

    // A library that cannot be created: one line, before any search.
    let blocker = dir.join("file");
    std::fs::write(&blocker, "").unwrap();
    let o = antitb(&[
        "prove",
        "--all",
        "--moves",
        line,
        "-q",
        "--library",
        &format!("{}/lib", s(&blocker)),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("proof library"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_proof_library_serves_one_position_and_the_lines_through_it() {
    let dir = scratch("library-one");
    let lib = dir.join("lib");
    let prove_one = || {
        let o = antitb(&[
            "prove",
            "--moves",
            "e2e3 b7b5 f1b5 a7a6",
            "--memory",
            "8",
            "-q",
            "--library",
            s(&lib),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let first = prove_one();
    assert_eq!(first.lines().next(), Some("win"), "{first}");
    assert!(!first.contains("from the proof library"), "{first}");
    let files = sorted_files(&lib);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(is_binary_proof(&files[0]), "{}", files[0].display());
    let o = antitb(&["check-proof", s(&files[0])]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("White wins from"),
        "the stored proof is White's win: {}",
        stdout(&o)
    );

    let second = prove_one();
    assert_eq!(second.lines().next(), Some("win"), "{second}");
    assert!(second.contains("from the proof library"), "{second}");
    assert!(second.contains("nodes 0 expanded"), "{second}");

    // The same file serves the line through that position: its reply a7a6 is not searched.
    let o = antitb(&[
        "prove",
        "--all",
        "--moves",
        "e2e3 b7b5 f1b5",
        "--memory",
        "8",
        "--max-nodes",
        "1000",
        "-q",
        "--library",
        s(&lib),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = stdout(&o);
    assert!(
        line.lines()
            .any(|l| l.contains("a7a6") && l.contains("from the proof library")),
        "{line}"
    );

    // A damaged file is reported, the position proven again and the file replaced.
    let bytes = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &bytes[..bytes.len() / 3]).unwrap();
    let third = prove_one();
    assert_eq!(third.lines().next(), Some("win"), "{third}");
    assert!(third.contains("library file not used"), "{third}");
    assert!(third.contains("checksum mismatch"), "{third}");
    let o = antitb(&["check-proof", s(&files[0])]);
    assert!(o.status.success(), "replaced: {}", stderr(&o));
    // One byte of the body changed (the file's length kept): reported and replaced too.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let at = bytes.len() - 40;
    bytes[at] ^= 0x01;
    std::fs::write(&files[0], &bytes).unwrap();
    let fourth = prove_one();
    assert!(fourth.contains("library file not used"), "{fourth}");
    assert!(!fourth.contains("from the proof library"), "{fourth}");
    let o = antitb(&["check-proof", s(&files[0])]);
    assert!(o.status.success(), "replaced: {}", stderr(&o));
    assert!(
        sorted_files(&lib).iter().all(|f| is_binary_proof(f)),
        "no temporary file left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The figures line of `check-proof` ("nodes ... depth ... plies"), without the time.
fn figures(out: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.starts_with("nodes "))
        .unwrap_or_else(|| panic!("no figures in {out}"));
    line[..line.find(", checked in").unwrap()].to_string()
}

#[test]
fn binary_proofs_through_the_command_line() {
    let dir = scratch("binary");
    // `prove --proof X.proofb` writes the binary format.
    let bin = dir.join("a4d6.proofb");
    let o = antitb(&[
        "prove",
        "--moves",
        "a2a4 d7d6",
        "--memory",
        "8",
        "-q",
        "--proof",
        s(&bin),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("proof 33 nodes"), "{}", stdout(&o));
    let bytes = std::fs::read(&bin).unwrap();
    assert!(bytes.starts_with(b"ATBPROOF"), "not binary");
    let out = checked_white_win(&bin, &["--tables", s(&dir)]);
    assert!(out.contains("(binary)"), "{out}");
    let binary_figures = figures(&out);
    assert!(binary_figures.starts_with("nodes 33 ("), "{out}");

    // The same proof as text, converted by check-proof --write-binary: the same figures.
    let text = dir.join("a4d6.proof");
    let o = antitb(&[
        "prove",
        "--moves",
        "a2a4 d7d6",
        "--memory",
        "8",
        "-q",
        "--proof",
        s(&text),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let converted = dir.join("converted.proofb");
    let o = antitb(&[
        "check-proof",
        s(&text),
        "--tables",
        s(&dir),
        "--write-binary",
        s(&converted),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(figures(&stdout(&o)), binary_figures);
    let o = antitb(&["check-proof", s(&converted), "--tables", s(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(figures(&stdout(&o)), binary_figures);
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");

    // Back to text with --write-text: the text checker gives the same figures, and the
    // text converts again to the same bytes (the comment kept).
    let back = dir.join("back.proof");
    let o = antitb(&[
        "check-proof",
        s(&converted),
        "--tables",
        s(&dir),
        "--write-text",
        s(&back),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(figures(&stdout(&o)), binary_figures);
    let o = antitb(&["check-proof", s(&back), "--tables", s(&dir)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(text)"), "{}", stdout(&o));
    assert_eq!(figures(&stdout(&o)), binary_figures);
    let again = dir.join("again.proofb");
    let o = antitb(&[
        "check-proof",
        s(&back),
        "--tables",
        s(&dir),
        "--write-binary",
        s(&again),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&converted).unwrap()
    );

    // A binary proof is not converted again, nor a text one to text; a truncated one is
    // refused with one line.
    let o = antitb(&[
        "check-proof",
        s(&bin),
        "--tables",
        s(&dir),
        "--write-binary",
        s(&converted),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = antitb(&[
        "check-proof",
        s(&back),
        "--tables",
        s(&dir),
        "--write-text",
        s(&dir.join("x.proof")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    std::fs::write(&bin, &bytes[..bytes.len() - 1]).unwrap();
    let o = antitb(&["check-proof", s(&bin), "--tables", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("checksum"), "{err}");
    let o = antitb(&[
        "check-proof",
        s(&bin),
        "--tables",
        s(&dir),
        "--write-text",
        s(&dir.join("x.proof")),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "the truncated file is not converted"
    );
    assert!(!dir.join("x.proof").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The figure after `label` in a report line ("nodes 123 expanded" -> 123).
fn figure_after(out: &str, label: &str) -> u64 {
    let rest = &out[out
        .find(label)
        .unwrap_or_else(|| panic!("no '{label}' in {out}"))
        + label.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// `prove --solved FILE`: the positions a search proved are kept on disk and reused. A finished
/// search's store lets the next run prove the same position in a few thousand nodes (the proof
/// is extracted from the stored moves, searching again only where one is missing); a search
/// killed (SIGKILL, no chance to clean up) after a save resumes from the store and proves the
/// position, with a proof `check-proof` accepts. A damaged store is reported in one line, the
/// search runs without it, and the file is replaced.
#[test]
fn the_store_of_solved_positions_serves_later_runs_and_survives_a_kill() {
    let dir = scratch("solved");
    let line = "e2e3 b7b5 f1b5 g8f6";
    let base = ["prove", "--moves", line, "--memory", "16", "-q"];
    let with = |extra: &[&str]| -> Output {
        let mut args: Vec<&str> = base.to_vec();
        args.extend_from_slice(extra);
        antitb(&args)
    };
    let proved = |o: &Output, proof: &Path| -> String {
        let out = stdout(o);
        assert!(o.status.success(), "{}", stderr(o));
        assert_eq!(out.lines().next(), Some("win"), "{out}");
        checked_white_win(proof, &[]);
        out
    };

    // A finished search, then the same position again with its store.
    let store = dir.join("finished.atbs");
    let proof = dir.join("first.proofb");
    let first = proved(
        &with(&["--solved", s(&store), "--proof", s(&proof)]),
        &proof,
    );
    let first_nodes = figure_after(&first, "nodes ");
    assert!(
        figure_after(&first, "solved positions: 0 loaded, ") > 0,
        "{first}"
    );
    let proof = dir.join("again.proofb");
    let again = proved(
        &with(&["--solved", s(&store), "--proof", s(&proof)]),
        &proof,
    );
    let again_nodes = figure_after(&again, "nodes ");
    assert!(figure_after(&again, "solved positions: ") > 0, "{again}");
    assert!(
        again_nodes * 20 < first_nodes,
        "{again_nodes} nodes with the store, {first_nodes} without: {again}"
    );
    eprintln!("{first_nodes} nodes from nothing, {again_nodes} with the store");

    // Killed once the store is on disk, then resumed.
    let store = dir.join("killed.atbs");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_antitb"))
        .args(base)
        .args(["--solved", s(&store), "--save-every", "0.1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !store.exists() && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the search ended before it could be killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(store.exists(), "no store saved within 60 s");
    let proof = dir.join("resumed.proofb");
    let resumed = proved(
        &with(&["--solved", s(&store), "--proof", s(&proof)]),
        &proof,
    );
    assert!(
        figure_after(&resumed, "solved positions: ") > 0,
        "{resumed}"
    );

    // A damaged store: one line, the search goes on without it, the file is replaced.
    std::fs::write(&store, b"ATBSOLVD junk").unwrap();
    let proof = dir.join("damaged.proofb");
    let out = proved(
        &with(&["--solved", s(&store), "--proof", s(&proof)]),
        &proof,
    );
    let note = out
        .lines()
        .find(|l| l.contains("solved positions not loaded"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(note.contains(s(&store)), "{note}");
    assert_eq!(figure_after(&out, "nodes "), first_nodes, "{out}");
    let o = with(&["--solved", s(&store), "--max-nodes", "1"]);
    assert!(
        figure_after(&stdout(&o), "solved positions: ") > 0,
        "{}",
        stdout(&o)
    );
    let o = with(&["--save-every", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--save-every must be a positive number"));
    let _ = std::fs::remove_dir_all(&dir);
}
