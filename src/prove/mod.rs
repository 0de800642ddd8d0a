//! The prover: decide whether the side to move can force a win from a position with more pieces
//! than the tables hold, by proof-number search down to finished games and table positions, and
//! write the answer as a proof that a separate checker re-verifies.
//!
//! # Question and answers
//! "Win" means a win with the 50-move rule ignored (table WDL +2 and +1 both count; SPEC.md §2),
//! and **a repetition on the path is not a win**: a line that comes back to a position it already
//! passed through counts as a failure for the side trying to win (if it has a winning strategy at
//! all, it has one that never repeats). [`prove`] answers
//! - [`Answer::Win`]: the side to move wins; a proof comes with it;
//! - [`Answer::Loss`]: every move loses; the proof shows the opponent winning;
//! - [`Answer::NotAWin`]: the side to move cannot force a win (a draw or a loss for it was found
//!   on the defender's best line, but not that every move loses);
//! - [`Answer::Unknown`]: the budget (nodes, time, Ctrl-C) ran out first.
//!
//! # Search (`dfpn.rs`, `path.rs`)
//! Depth-first proof-number search (df-pn, Nagai 2002) with the 1+ε trick (Pawlewicz and Lew) and
//! a transposition table keyed by Zobrist keys ([`hash`]). OR nodes are the prover's turns, AND
//! nodes the defender's. A child is a leaf when
//! - its side to move has no legal move (no pieces, or stalemated): the side to move has won;
//! - only bishops are left under the bishops rule: a draw;
//! - it fits the tables: at most [`Oracle::max_pieces`] pieces, or one more with a capture to
//!   play (the probe resolves captures); the table's WDL decides;
//! - it repeats a position of the current path: not a win for the prover.
//!
//! Other children start with cheap knowledge: an OR child gets dn = its number of moves, an AND
//! child pn = its number of moves (compulsory captures make many of these 1: a forced reply
//! costs nothing to prove through), and the proof number grows by half the number of pieces the
//! prover still has to give away.
//!
//! With [`Options::threads`] above 1 the root search runs on several threads over one
//! lock-free transposition table (`parallel.rs`): each thread steers away from the defender's
//! replies another is searching (virtual disproof numbers); what follows the root search runs
//! on one thread.
//!
//! Transpositions and repetitions (the graph-history interaction). The search itself is
//! optimistic: a child repeating a position of the path counts as disproved, and disproofs found
//! that way are stored like any other. No answer is taken from the table on trust, though:
//! - a win is *extracted* (`extract.rs`) as an acyclic graph with one node per position, depth
//!   first, never entering a position of the extraction path, following the move that first
//!   proved each OR node (kept apart from the table's entries, so that they outlive replacement);
//!   where that proof went through a position of the path, the node is searched again with the
//!   extraction path as history. `win` and `loss` are only answered with such a proof in hand;
//! - `not a win` is *certified* (`certify.rs`): the disproved entries reachable from the root are
//!   closed under "every prover move stays inside or fails at a leaf, some defender reply does"
//!   (a greatest fixed point, so cycles inside the set count as endless play, never as wins). The
//!   root must survive; [`Report::disproof_size`] is the size of the set. `driver.rs` runs the
//!   searches, the extraction and the certificate in turn.
//!
//! # Lines (`line.rs`)
//! [`prove_line`] proves every move of the side to move on its own (the defender's replies of an
//! opening line: `prove --all`), each with its own budget, and merges the proofs of a lost line
//! into one whose root is an AND node over every move, each position written once. A proof
//! library (`library.rs`, `prove --all --library DIR`) keeps each move's proof on disk as soon
//! as it is found, so a line is proven over several runs.
//!
//! # Proof files (`proof.rs`, `binary.rs`) and the checkers (`check.rs`, `check_binary.rs`)
//! [`Proof::write`] writes the proof in the text format below; [`check::check`] reads such a file
//! and re-plays it with the rules core alone, re-probing table leaves. The checker shares no code
//! with the search. [`Proof::write_binary`] writes the compact binary format (below, "Binary
//! format"), which [`check_binary::check`] checks as a stream, under the same rule;
//! [`Proof::from_binary`] reads it back (the proof library stores binary proofs and reads them
//! back once the checker accepts them).
//!
#![doc = include_str!("FORMAT.md")]

pub mod binary;
mod certify;
pub mod check;
pub mod check_binary;
mod dfpn;
mod driver;
mod extract;
pub mod hash;
pub mod library;
mod line;
mod parallel;
mod path;
mod proof;
pub mod solved;
pub mod tt;

pub use line::{Found, LineReport, Reply, prove_line, prove_stored};
pub use proof::{Proof, Step};

use crate::probe::{ProbeError, Tablebase};
use crate::rules::{Color, Move, Position};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Where table values come from: a [`Tablebase`], in-memory tables in tests, or nothing.
pub trait Oracle: Sync {
    /// The most pieces of any table (0: no tables).
    fn max_pieces(&self) -> u32;
    /// WDL of `pos` from the side to move's view (SPEC.md §2), or `None` where no table covers
    /// it. Called only for positions where both sides have pieces and that fit
    /// [`Oracle::max_pieces`] (or have one piece more and a capture to play).
    fn wdl(&self, pos: &Position) -> Result<Option<i8>, ProbeError>;
}

/// No tables: leaves are finished games only.
pub struct NoTables;

impl Oracle for NoTables {
    fn max_pieces(&self) -> u32 {
        0
    }

    fn wdl(&self, _: &Position) -> Result<Option<i8>, ProbeError> {
        Ok(None)
    }
}

impl Oracle for Tablebase {
    fn max_pieces(&self) -> u32 {
        Tablebase::max_pieces(self)
    }

    fn wdl(&self, pos: &Position) -> Result<Option<i8>, ProbeError> {
        match self.probe_wdl(pos) {
            Ok(w) => Ok(Some(w.to_i8())),
            Err(ProbeError::MissingTable { .. } | ProbeError::TooManyPieces { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Does `pos` fit the tables of `oracle` (both sides have pieces; at most `max_pieces`, or one
/// more with a capture to play)?
pub fn fits_tables(pos: &Position, max_pieces: u32) -> bool {
    if max_pieces == 0 || pos.us().is_empty() || pos.them().is_empty() {
        return false;
    }
    let n = pos.piece_count();
    n <= max_pieces || (n == max_pieces + 1 && pos.has_capture())
}

/// The prover's answer about the side to move.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Answer {
    Win,
    Loss,
    NotAWin,
    Unknown,
}

impl Answer {
    /// `win`, `loss`, `not a win`, `unknown`.
    pub fn text(self) -> &'static str {
        match self {
            Answer::Win => "win",
            Answer::Loss => "loss",
            Answer::NotAWin => "not a win",
            Answer::Unknown => "unknown",
        }
    }
}

/// Limits and knobs of one [`prove`] call.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stop after this many expanded nodes (both searches together).
    pub max_nodes: Option<u64>,
    /// Stop after this much time.
    pub time: Option<Duration>,
    /// Bytes for the transposition table (a sixteenth of them hold the moves that proved OR
    /// nodes).
    pub memory: usize,
    /// Set from outside (Ctrl-C) to stop with the best information so far.
    pub stop: Option<Arc<AtomicBool>>,
    /// How often to call the progress callback.
    pub progress_every: Duration,
    /// Look for a loss (opponent's proof) once the win search fails. Off: `not a win` is final.
    pub try_loss: bool,
    /// Threads searching the root together (at least 1; `parallel.rs`). The decided answer is
    /// the same for any number; node counts and proofs may differ from run to run above 1.
    pub threads: usize,
    /// A store of solved positions (`solved.rs`): loaded before the search, saved (merged with
    /// what it holds) every [`Options::save_every`] during the search and when it ends.
    pub solved: Option<PathBuf>,
    /// How often a long search saves the store of solved positions.
    pub save_every: Duration,
    /// A proof library (`library.rs`) whose proofs the proof extraction takes whole where it
    /// reaches their positions (each checked first), instead of rebuilding them.
    pub library: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_nodes: None,
            time: None,
            memory: 256 << 20,
            stop: None,
            progress_every: Duration::from_secs(2),
            try_loss: true,
            threads: 1,
            solved: None,
            save_every: Duration::from_secs(600),
            library: None,
        }
    }
}

/// A progress report during a long search.
#[derive(Clone, Debug)]
pub struct Progress {
    /// The side whose win is being searched for.
    pub prover: Color,
    pub nodes: u64,
    pub elapsed: Duration,
    /// Proof and disproof numbers of the root, as last seen by the root.
    pub root_pn: u32,
    pub root_dn: u32,
    /// Current depth of the search in plies below the root.
    pub depth: usize,
    pub tt_used: usize,
    pub tt_capacity: usize,
}

/// What the win search knows about one root move.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MoveStatus {
    /// The move wins for the side to move.
    Wins,
    /// The move does not win (the defender holds or wins).
    Fails,
    /// Still open, with the proof and disproof numbers of the position after it.
    Open { pn: u32, dn: u32 },
    /// Not looked at yet (the search stopped before).
    Unseen,
}

/// The result of [`prove`].
#[derive(Clone, Debug)]
pub struct Report {
    pub answer: Answer,
    /// For `Win` a proof that the side to move wins; for `Loss` a proof that the opponent wins.
    pub proof: Option<Proof>,
    /// For `NotAWin` and `Loss`: positions in the certificate that the side to move cannot win.
    pub disproof_size: Option<usize>,
    /// Expanded nodes (interior nodes searched), both searches and proof extraction together.
    pub nodes: u64,
    /// Positions generated and evaluated as children.
    pub evaluated: u64,
    /// Table probes made.
    pub probes: u64,
    pub time: Duration,
    /// Root moves as the win search last saw them (empty when the root is a leaf).
    pub root_moves: Vec<(Move, MoveStatus)>,
    pub root_pn: u32,
    pub root_dn: u32,
    pub tt_used: usize,
    pub tt_capacity: usize,
    /// Anything worth saying about how the answer was reached.
    pub note: Option<String>,
    /// Solved positions loaded from [`Options::solved`] before the search.
    pub solved_loaded: usize,
    /// Solved positions in [`Options::solved`] after the last save (`None`: no store, or no
    /// save succeeded).
    pub solved_saved: Option<usize>,
}

impl Report {
    /// The report of a position whose proof was read from a proof library: no search.
    pub fn from_library(pos: &Position, proof: Proof) -> Report {
        Report {
            answer: if proof.prover == pos.turn() {
                Answer::Win
            } else {
                Answer::Loss
            },
            proof: Some(proof),
            disproof_size: None,
            nodes: 0,
            evaluated: 0,
            probes: 0,
            time: Duration::ZERO,
            root_moves: Vec::new(),
            root_pn: 0,
            root_dn: 0,
            tt_used: 0,
            tt_capacity: 0,
            note: Some("from the proof library".to_string()),
            solved_loaded: 0,
            solved_saved: None,
        }
    }
}

/// Why [`prove`] could not run.
#[derive(Debug)]
pub enum ProveError {
    /// A table probe failed (corrupt file, unreadable directory).
    Table(ProbeError),
    /// The transposition table could not be allocated.
    Memory(String),
    /// The search thread could not start or died.
    Thread(String),
    /// A proof could not be added to the proof library.
    Library(String),
}

impl std::fmt::Display for ProveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProveError::Table(e) => write!(f, "table probe failed: {e}"),
            ProveError::Memory(e) => f.write_str(e),
            ProveError::Thread(e) => write!(f, "search thread: {e}"),
            ProveError::Library(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for ProveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProveError::Table(e) => Some(e),
            _ => None,
        }
    }
}

/// Stack for the search thread: df-pn and proof extraction recurse once per ply.
const STACK_BYTES: usize = 512 << 20;

/// Decide whether the side to move of `root` wins. `history` lists positions played before
/// `root` that may come back (those since the last capture or pawn move, oldest first); the
/// search treats a return to them as a repetition. `progress` is called every
/// [`Options::progress_every`] during long searches.
pub fn prove(
    root: &Position,
    history: &[Position],
    oracle: &dyn Oracle,
    opts: &Options,
    progress: &mut (dyn FnMut(&Progress) + Send),
) -> Result<Report, ProveError> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("antitb-prove".to_string())
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || driver::run(root, history, oracle, opts, progress))
            .map_err(|e| ProveError::Thread(e.to_string()))?
            .join()
            .map_err(|_| ProveError::Thread("the search panicked".to_string()))?
    })
}
