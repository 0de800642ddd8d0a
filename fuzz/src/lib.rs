//! What the fuzz targets share: tables with up to three pieces (built once, on first use, with the
//! library's own build driver) and a brute-force search independent of the prover.
//!
//! (No in-memory generation here: under the fuzzer's instrumentation it took minutes of each
//! target's start on this machine.)
//!
//! The tables go to `$ANTITB_FUZZ_TABLES`, or to `fuzz/target/tables3` (kept between runs:
//! `build` skips tables whose files are present and pass their checksums).

use antitb::Tablebase;
use antitb::build::{BuildOptions, build};
use antitb::rules::Position;
use antitb::table::Material;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The most pieces of the tables the targets use.
pub const MAX_PIECES: usize = 3;

/// One worker thread for the library's parallel loops: a fuzzer runs on one core.
pub fn one_thread() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build_global();
    });
}

/// The directory of the tables with up to [`MAX_PIECES`] pieces (WDL, DTZ and DTW), built on
/// first use.
pub fn tables_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        one_thread();
        let dir = std::env::var_os("ANTITB_FUZZ_TABLES")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tables3"));
        let targets: Vec<Material> = (2..=MAX_PIECES)
            .flat_map(Material::all_with_pieces)
            .collect();
        let mut opts = BuildOptions::new(&dir);
        opts.dtw = true;
        opts.check_disk = false;
        build(&targets, &opts, &|_| {})
            .unwrap_or_else(|e| panic!("building the fuzz tables in {}: {e}", dir.display()));
        dir
    })
}

/// The tables of [`tables_dir`], opened once.
pub fn tablebase() -> &'static Tablebase {
    static TB: OnceLock<Tablebase> = OnceLock::new();
    TB.get_or_init(|| Tablebase::open(&[tables_dir()]).expect("open the fuzz tables"))
}

/// Outcome of [`Search::wins`] / [`Search::loses`] within a budget.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Forced {
    Yes,
    No,
    /// The node budget ran out.
    Unknown,
}

/// Brute-force search with the rules core only (no prover code): can the side to move force
/// the end of the game in its favour (no legal move with it to move) within some plies?
/// Positions with at most [`MAX_PIECES`] pieces are decided by the tables: any win, cursed or
/// not, counts (a proof ignores the 50-move rule).
pub struct Search {
    pub nodes: u64,
    pub budget: u64,
}

impl Search {
    pub fn new(budget: u64) -> Search {
        Search { nodes: 0, budget }
    }

    fn table(&self, pos: &Position) -> Option<i8> {
        if pos.piece_count() as usize > MAX_PIECES || pos.us().is_empty() || pos.them().is_empty() {
            return None;
        }
        tablebase().probe_wdl(pos).ok().map(|w| w.to_i8())
    }

    /// Can the side to move win within `plies` plies (or by the tables)?
    pub fn wins(&mut self, pos: &Position, plies: u32) -> Forced {
        self.nodes += 1;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Forced::Yes;
        }
        if let Some(w) = self.table(pos) {
            return if w > 0 { Forced::Yes } else { Forced::No };
        }
        if plies < 2 {
            return Forced::No;
        }
        if self.nodes > self.budget {
            return Forced::Unknown;
        }
        let mut unknown = false;
        for m in moves.iter() {
            match self.loses(&pos.after(m), plies - 1) {
                Forced::Yes => return Forced::Yes,
                Forced::Unknown => unknown = true,
                Forced::No => {}
            }
        }
        if unknown { Forced::Unknown } else { Forced::No }
    }

    /// Does every move of the side to move lose within `plies` plies (or by the tables)?
    pub fn loses(&mut self, pos: &Position, plies: u32) -> Forced {
        self.nodes += 1;
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Forced::No;
        }
        if let Some(w) = self.table(pos) {
            return if w < 0 { Forced::Yes } else { Forced::No };
        }
        if plies < 1 {
            return Forced::No;
        }
        if self.nodes > self.budget {
            return Forced::Unknown;
        }
        let mut unknown = false;
        for m in moves.iter() {
            match self.wins(&pos.after(m), plies - 1) {
                Forced::No => return Forced::No,
                Forced::Unknown => unknown = true,
                Forced::Yes => {}
            }
        }
        if unknown {
            Forced::Unknown
        } else {
            Forced::Yes
        }
    }
}
