//! `antitb prove` (proof-number search with table leaves) and `antitb check-proof` (the
//! independent checker of its proof files).

use antitb::probe::Tablebase;
use antitb::prove::binary::{read_binary, write_binary_proof};
use antitb::prove::library::{ProofLibrary, write_proof};
use antitb::prove::{
    self, Answer, LineReport, MoveStatus, NoTables, Options, Oracle, Progress, Proof, check,
    check_binary,
};
use antitb::rules::Move;
use antitb::rules::notation::{parse_san, parse_uci};
use antitb::rules::{Color, Position};
use clap::Args;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct ProveArgs {
    /// Position in FEN (default: the start position, with --moves)
    fen: Option<String>,
    /// Moves played first, UCI or SAN ("e2e3 b7b5 f1b5")
    #[arg(long)]
    moves: Option<String>,
    /// Table directory (repeatable; default: ./tables if it exists)
    #[arg(long)]
    tables: Vec<PathBuf>,
    /// Stop after this many expanded nodes
    #[arg(long)]
    max_nodes: Option<u64>,
    /// Stop after this many seconds
    #[arg(long)]
    time: Option<f64>,
    /// Transposition table size in MB
    #[arg(long = "memory", value_name = "MEMORY", default_value_t = 256)]
    memory_mb: u64,
    /// Threads searching together over one transposition table (1 to 64; the answer is the
    /// same for any number, node counts and proofs may differ)
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Write the proof (win or loss) to this file: binary when its name ends in `.proofb`,
    /// text otherwise (formats: src/prove/FORMAT.md)
    #[arg(long)]
    proof: Option<PathBuf>,
    /// Prove every move of the side to move, one after the other, each with the budgets above
    /// (a defender's replies: --all --moves e2e3); report each and write one proof of the line
    #[arg(long)]
    all: bool,
    /// A directory of proofs kept between runs: a position with a proof there (checked
    /// first) is not searched again, and each new proof is added as soon as it is found
    /// (with --all: one per move)
    #[arg(long)]
    library: Option<PathBuf>,
    /// A store of the positions searches proved, loaded first and saved (merged) every 10
    /// minutes and at the end, so a long search resumes where a killed one left off and other
    /// lines reuse it (default with --library: DIR/solved.atbs)
    #[arg(long, value_name = "FILE")]
    solved: Option<PathBuf>,
    /// Seconds between saves of the store of solved positions during a search
    #[arg(long, value_name = "SECONDS", default_value_t = 600.0)]
    save_every: f64,
    /// No progress output
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
pub struct CheckProofArgs {
    /// The proof file, text or binary (told apart by its first bytes)
    file: PathBuf,
    /// Table directory for table leaves (repeatable; default: ./tables if it exists)
    #[arg(long)]
    tables: Vec<PathBuf>,
    /// Once a text proof is accepted, write it in the binary format to this file
    #[arg(long, value_name = "OUT", conflicts_with = "write_text")]
    write_binary: Option<PathBuf>,
    /// Once a binary proof is accepted, write it in the text format to this file (to read it)
    #[arg(long, value_name = "OUT")]
    write_text: Option<PathBuf>,
}

fn color_name(c: Color) -> &'static str {
    if c.is_white() { "White" } else { "Black" }
}

/// The tables to use: the given directories, else `tables` if it exists, else none.
fn open_tables(dirs: &[PathBuf]) -> Result<Option<Tablebase>, String> {
    if dirs.is_empty() {
        let default = Path::new("tables");
        if !default.is_dir() {
            return Ok(None);
        }
        return Tablebase::open(&[default])
            .map(Some)
            .map_err(|e| e.to_string());
    }
    Tablebase::open(dirs).map(Some).map_err(|e| e.to_string())
}

/// The root position and the positions before it that may repeat (those since the last zeroing
/// move of `moves`).
fn root_and_history(
    fen: Option<&str>,
    moves: Option<&str>,
) -> Result<(Position, Vec<Position>), String> {
    let mut pos = match fen {
        Some(f) => super::parse_position(f)?,
        None => Position::startpos(),
    };
    let mut history = Vec::new();
    for tok in moves
        .unwrap_or("")
        .split(|c: char| c.is_whitespace() || c == ',')
    {
        // Move numbers ("1.", "12...") are skipped.
        let tok = tok
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches('.');
        if tok.is_empty() {
            continue;
        }
        let m = parse_uci(&pos, tok)
            .or_else(|_| parse_san(&pos, tok))
            .map_err(|_| format!("illegal or unreadable move '{tok}' in {pos}"))?;
        if m.is_zeroing() {
            history.clear();
        } else {
            history.push(pos);
        }
        pos.play(&m);
    }
    Ok((pos, history))
}

fn status_text(s: MoveStatus) -> String {
    match s {
        MoveStatus::Wins => "wins".to_string(),
        MoveStatus::Fails => "does not win".to_string(),
        MoveStatus::Open { pn, dn } => format!("open (pn {pn}, dn {dn})"),
        MoveStatus::Unseen => "not searched".to_string(),
    }
}

fn rate(nodes: u64, t: Duration) -> f64 {
    nodes as f64 / t.as_secs_f64().max(1e-9)
}

pub fn run_prove(args: ProveArgs) -> Result<(), String> {
    if args.fen.is_none() && args.moves.is_none() {
        return Err("give a FEN or --moves".to_string());
    }
    let (root, history) = root_and_history(args.fen.as_deref(), args.moves.as_deref())?;
    if args.memory_mb == 0 {
        return Err("--memory must be at least 1 (MB)".to_string());
    }
    let time = match args.time {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(format!(
                "--time must be a positive number of seconds, not {t}"
            ));
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    if !(args.save_every.is_finite() && args.save_every > 0.0 && args.save_every < 1e9) {
        return Err(format!(
            "--save-every must be a positive number of seconds, not {}",
            args.save_every
        ));
    }
    let save_every = Duration::from_secs_f64(args.save_every);
    if !(1..=64).contains(&args.threads) {
        return Err(format!(
            "--threads must be between 1 and 64, not {}",
            args.threads
        ));
    }
    if args.max_nodes == Some(0) {
        return Err("--max-nodes must be at least 1".to_string());
    }
    let tables = open_tables(&args.tables)?;
    let oracle: &dyn Oracle = match &tables {
        Some(tb) => tb,
        None => &NoTables,
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // First Ctrl-C: stop the search and print what is known. Second: leave at once.
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
        })
        .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    }
    let memory = usize::try_from(args.memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    let opts = Options {
        max_nodes: args.max_nodes,
        time,
        memory,
        threads: args.threads,
        stop: Some(stop.clone()),
        solved: args
            .solved
            .clone()
            .or_else(|| args.library.as_ref().map(|d| d.join("solved.atbs"))),
        save_every,
        library: args.library.clone(),
        ..Options::default()
    };
    if !args.quiet {
        eprintln!(
            "proving {} {} to move: {}; tables up to {} pieces; {} MB transposition table; {} thread{}",
            if args.all { "every move of" } else { "for" },
            color_name(root.turn()),
            root,
            oracle.max_pieces(),
            args.memory_mb,
            args.threads,
            if args.threads == 1 { "" } else { "s" }
        );
    }
    if args.all {
        return run_line(&args, &root, &history, oracle, &opts);
    }
    let quiet = args.quiet;
    let mut progress = |p: &Progress| {
        if !quiet {
            eprintln!(
                "  [{} wins?] {} nodes, {:.0} nodes/s, root pn {} dn {}, depth {}, table {:.0}% full",
                color_name(p.prover),
                p.nodes,
                rate(p.nodes, p.elapsed),
                p.root_pn,
                p.root_dn,
                p.depth,
                100.0 * p.tt_used as f64 / p.tt_capacity.max(1) as f64
            );
        }
    };
    let library = args
        .library
        .as_deref()
        .map(ProofLibrary::open)
        .transpose()?;
    let started = Instant::now();
    let found = prove::prove_stored(
        &root,
        &history,
        oracle,
        &opts,
        library.as_ref(),
        &mut progress,
    )
    .map_err(|e| e.to_string())?;
    let interrupted = stop.load(Ordering::Relaxed);
    let rejected = || {
        if let Some(why) = &found.library_rejected {
            println!("library file not used: {why}");
        }
    };
    let Some(report) = &found.report else {
        println!("{}", Answer::Unknown.text());
        rejected();
        println!("interrupted (Ctrl-C) before an answer");
        return Ok(());
    };

    println!("{}", report.answer.text());
    rejected();
    let stm = color_name(root.turn());
    match report.answer {
        Answer::Win => println!("{stm} to move wins"),
        Answer::Loss => println!("{stm} to move loses: every move loses"),
        Answer::NotAWin => println!("{stm} to move cannot force a win"),
        Answer::Unknown if interrupted => println!("interrupted (Ctrl-C) before an answer"),
        Answer::Unknown if report.note.is_some() => println!("no answer"),
        Answer::Unknown => println!("budget exhausted before an answer"),
    }
    if let Some(note) = &report.note {
        println!("note: {note}");
    }
    println!(
        "nodes {} expanded, {} positions evaluated, {} table probes",
        report.nodes, report.evaluated, report.probes
    );
    println!(
        "time {:.3} s, {:.0} nodes/s; transposition table {} of {} entries used",
        report.time.as_secs_f64(),
        rate(report.nodes, report.time),
        report.tt_used,
        report.tt_capacity
    );
    if let (Some(path), Some(saved)) = (&opts.solved, report.solved_saved) {
        println!(
            "solved positions: {} loaded, {saved} in {} after saving",
            report.solved_loaded,
            path.display()
        );
    }
    if let Some(p) = &report.proof {
        let s = p.stats();
        println!(
            "proof {} nodes ({} or, {} and, {} end, {} table), depth {} plies",
            s.nodes, s.or_nodes, s.and_nodes, s.end_leaves, s.table_leaves, s.depth
        );
        if let Some(m) = p.first_move() {
            println!("winning move {}", m.uci());
        }
    }
    if let Some(n) = report.disproof_size {
        println!("disproof certificate {n} positions");
    }
    if report.answer != Answer::Win && !report.root_moves.is_empty() {
        if report.answer == Answer::Unknown {
            println!("root pn {} dn {}", report.root_pn, report.root_dn);
        }
        let mut moves = report.root_moves.clone();
        // Most promising first: wins, then the smallest proof number.
        moves.sort_by_key(|(_, s)| match *s {
            MoveStatus::Wins => (0, 0),
            MoveStatus::Open { pn, .. } => (1, pn),
            MoveStatus::Unseen => (2, 0),
            MoveStatus::Fails => (3, 0),
        });
        for (m, s) in &moves {
            println!("  {} {}", m.uci(), status_text(*s));
        }
    }
    save_proof(args.proof.as_deref(), report.proof.as_ref(), || {
        format!(
            "{} for {} to move; found by antitb prove in {:.3} s, {} nodes",
            report.answer.text(),
            stm,
            started.elapsed().as_secs_f64(),
            report.nodes
        )
    })
}

/// `prove --all`: every move of the side to move proven on its own, reported move by move, and
/// one proof of the line.
fn run_line(
    args: &ProveArgs,
    root: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
) -> Result<(), String> {
    let quiet = args.quiet;
    let mut progress = |mv: Move, p: &Progress| {
        if !quiet {
            eprintln!(
                "  [{} {} wins?] {} nodes, {:.0} nodes/s, root pn {} dn {}, depth {}",
                mv.uci(),
                color_name(p.prover),
                p.nodes,
                rate(p.nodes, p.elapsed),
                p.root_pn,
                p.root_dn,
                p.depth
            );
        }
    };
    let library = args
        .library
        .as_deref()
        .map(ProofLibrary::open)
        .transpose()?;
    let line: LineReport =
        prove::prove_line(root, history, oracle, opts, library.as_ref(), &mut progress)
            .map_err(|e| e.to_string())?;
    let stm = color_name(root.turn());
    let opp = color_name(!root.turn());
    println!("{}", line.answer.text());
    if line.replies.is_empty() {
        println!("{stm} to move has no legal move: it has won");
        return Ok(());
    }
    let lost = line.replies.iter().filter(|r| r.loses()).count();
    match line.answer {
        Answer::Loss => println!(
            "{stm} to move loses: {opp} wins after each move ({})",
            line.replies.len()
        ),
        Answer::Win => println!("{stm} to move wins"),
        Answer::NotAWin => println!(
            "{stm} to move is not lost: {opp} cannot force a win after some move ({lost} of {} moves lose)",
            line.replies.len()
        ),
        Answer::Unknown => println!(
            "undecided: {lost} of {} moves proven to lose",
            line.replies.len()
        ),
    }
    let (mut nodes, mut proof_nodes) = (0u64, 0usize);
    for r in &line.replies {
        if let Some(why) = &r.library_rejected {
            println!("  {} library file not used: {why}", r.mv.uci());
        }
        let Some(rep) = &r.report else {
            println!("  {} not searched (interrupted)", r.mv.uci());
            continue;
        };
        nodes += rep.nodes;
        let what = match rep.answer {
            Answer::Win => format!("{opp} wins"),
            Answer::Loss => format!("{stm} wins"),
            Answer::NotAWin => format!("{opp} cannot force a win"),
            Answer::Unknown => "unknown (budget exhausted)".to_string(),
        };
        let proof = match &rep.proof {
            Some(p) => {
                proof_nodes += p.size();
                format!(", proof {} nodes", p.size())
            }
            None => String::new(),
        };
        if r.from_library {
            println!("  {} {what}: from the proof library{proof}", r.mv.uci());
        } else {
            println!(
                "  {} {what}: {} nodes, {:.3} s{proof}",
                r.mv.uci(),
                rep.nodes,
                rep.time.as_secs_f64()
            );
            if let Some(note) = &rep.note {
                println!("    note: {note}");
            }
        }
    }
    println!(
        "nodes {nodes} expanded in all, time {:.3} s",
        line.time.as_secs_f64()
    );
    // The store of solved positions as the last move searched left it.
    let last_saved = line
        .replies
        .iter()
        .filter_map(|r| r.report.as_ref()?.solved_saved)
        .next_back();
    if let (Some(path), Some(saved)) = (&opts.solved, last_saved) {
        println!(
            "solved positions: {saved} in {} after saving",
            path.display()
        );
    }
    if let Some(p) = &line.proof {
        let s = p.stats();
        println!(
            "proof of the line {} nodes ({} or, {} and, {} end, {} table), depth {} plies; the moves' proofs had {proof_nodes} nodes, {} shared",
            s.nodes,
            s.or_nodes,
            s.and_nodes,
            s.end_leaves,
            s.table_leaves,
            s.depth,
            line.shared_nodes
        );
    }
    save_proof(args.proof.as_deref(), line.proof.as_ref(), || {
        format!(
            "{} for {stm} to move, every move proven on its own; found by antitb prove --all in {:.3} s, {nodes} nodes",
            line.answer.text(),
            line.time.as_secs_f64()
        )
    })
}

/// Whether `--proof` asks for the binary format: a name ending in `.proofb`.
fn is_binary_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "proofb")
}

/// Write the proof, if there is one, where `--proof` asks (`comment` heads the file).
fn save_proof(
    path: Option<&Path>,
    proof: Option<&Proof>,
    comment: impl FnOnce() -> String,
) -> Result<(), String> {
    match (path, proof) {
        (Some(path), Some(p)) => {
            if is_binary_name(path) {
                write_binary_proof(path, p, &comment())
            } else {
                write_proof(path, p, &comment())
            }
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            println!("proof written to {}", path.display());
        }
        (Some(_), None) => {
            println!("no proof file written: only win and loss answers come with a proof")
        }
        _ => {}
    }
    Ok(())
}

pub fn run_check(args: CheckProofArgs) -> Result<(), String> {
    let (file, tables) = (&args.file, &args.tables);
    let cannot_read = |e: std::io::Error| format!("cannot read {}: {e}", file.display());
    let mut f = std::fs::File::open(file).map_err(cannot_read)?;
    let mut prefix = Vec::new();
    f.by_ref()
        .take(check_binary::MAGIC.len() as u64)
        .read_to_end(&mut prefix)
        .map_err(cannot_read)?;
    let binary = check_binary::is_binary(&prefix);
    if binary && args.write_binary.is_some() {
        return Err(format!(
            "{} is already a binary proof (--write-binary converts text proofs)",
            file.display()
        ));
    }
    if !binary && args.write_text.is_some() {
        return Err(format!(
            "{} is already a text proof (--write-text converts binary proofs)",
            file.display()
        ));
    }
    let tb = open_tables(tables)?;
    let oracle: &dyn Oracle = match &tb {
        Some(tb) => tb,
        None => &NoTables,
    };
    let start = Instant::now();
    let mut text = String::new();
    let mut streamed = None;
    // To convert a binary proof, the bytes checked are the bytes read back (held in memory).
    let mut bytes = Vec::new();
    let c = if binary && args.write_text.is_some() {
        f.seek(SeekFrom::Start(0)).map_err(cannot_read)?;
        f.read_to_end(&mut bytes).map_err(cannot_read)?;
        check_binary::check_streamed(std::io::Cursor::new(&bytes), oracle).map(|s| {
            let c = s.checked.clone();
            streamed = Some(s);
            c
        })
    } else if binary {
        check_binary::check_streamed(std::io::BufReader::new(f), oracle).map(|s| {
            let c = s.checked.clone();
            streamed = Some(s);
            c
        })
    } else {
        f.seek(SeekFrom::Start(0)).map_err(cannot_read)?;
        f.read_to_string(&mut text).map_err(cannot_read)?;
        check::check(&text, oracle)
    }
    .map_err(|e| format!("proof rejected: {e}"))?;
    println!("proof OK: {} wins from {}", color_name(c.prover), c.root);
    println!(
        "nodes {} ({} or, {} and, {} end, {} table), depth {} plies, checked in {:.3} s ({})",
        c.nodes,
        c.or_nodes,
        c.and_nodes,
        c.end_leaves,
        c.table_leaves,
        c.depth,
        start.elapsed().as_secs_f64(),
        if binary { "binary" } else { "text" }
    );
    if let Some(s) = streamed {
        println!(
            "streamed: {} shared nodes, {} references; at most {} shared positions kept at once",
            s.shared, s.references, s.max_kept
        );
    }
    if let Some(out) = &args.write_binary {
        let proof = Proof::from_text(&text).map_err(|e| format!("cannot read the proof: {e}"))?;
        // The text's comment lines head the binary file too.
        let comment: Vec<&str> = text
            .lines()
            .filter_map(|l| l.trim().strip_prefix('#'))
            .map(str::trim)
            .collect();
        write_binary_proof(out, &proof, &comment.join("\n"))
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        println!("binary proof written to {}", out.display());
    }
    if let Some(out) = &args.write_text {
        let read = read_binary(&bytes).map_err(|e| format!("cannot read the proof: {e}"))?;
        write_proof(out, &read.proof, &read.comment)
            .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        println!("text proof written to {}", out.display());
    }
    Ok(())
}
