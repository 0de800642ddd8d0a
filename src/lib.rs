//! antitb: antichess (lichess rules) endgame tablebases — generate, probe, verify, prove.
//!
//! # Probing, as an engine does
//!
//! Open a directory of tables once ([`Tablebase::open`]; it is `Sync`, so every search thread
//! can probe the same one), then ask for the WDL of positions inside the search and for DTZ,
//! DTW and ranked moves at the root. The example builds the two small tables it needs first;
//! `antitb generate` builds every table up to 4 pieces into `tables/`.
//!
//! ```
//! use antitb::build::{BuildOptions, build};
//! use antitb::{Position, RankBy, Tablebase, Wdl};
//!
//! # fn main() -> Result<(), antitb::Error> {
//! // A rook against a king, with DTW: KRvK and the tables it leads to (KvK, KvR).
//! let dir = std::env::temp_dir().join(format!("antitb-doc-krvk-{}", std::process::id()));
//! let mut opts = BuildOptions::new(&dir);
//! opts.dtw = true;
//! build(&["KRvK".parse()?], &opts, &|_| {})?;
//!
//! let tb = Tablebase::open(&[&dir])?;
//! // Black (the rook) to move wins: it makes White take the rook, then has no piece left.
//! // tests/data/known.csv gives DTZ 32 for this position.
//! let pos: Position = "8/8/8/3K4/8/8/8/5r2 b - - 0 1".parse()?;
//! assert_eq!(tb.probe_wdl(&pos)?, Wdl::Win);
//! assert_eq!(tb.probe_dtz(&pos)?.signed(), 32);
//! // The only capture ends the game, so the game ends with the first zeroing move: DTW = DTZ.
//! assert_eq!(tb.probe_dtw(&pos)?.signed(), 32);
//!
//! // Every legal move, best first: the best keeps the win, and after it White loses in 31.
//! let moves = tb.rank_moves(&pos, RankBy::Dtz)?;
//! let best = &moves[0];
//! assert_eq!((best.dtz.wdl(), best.dtz.signed()), (Wdl::Win, 32));
//! assert_eq!(tb.probe_dtz(&pos.after(&best.mv))?.signed(), -31);
//! assert!(moves.iter().any(|m| m.dtz.wdl() != Wdl::Win), "some moves throw the win away");
//! # let _ = std::fs::remove_dir_all(&dir);
//! # Ok(())
//! # }
//! ```
//!
//! The types an engine needs are at the root: [`Tablebase`], [`Position`] and [`Move`],
//! [`Wdl`], [`Dtz`], [`Dtw`], [`RankBy`], [`RankedMove`], [`Probe`], and [`Error`], the one
//! error type every layer's error converts into (a missing table and a damaged file are
//! [`Error::MissingTable`] and [`Error::CorruptedTable`]). `examples/engine_probe.rs` probes
//! from a toy search on several threads; `tables/FORMAT.md` documents the files.
//!
//! # The pipeline
//!
//! The modules are the layers of the pipeline, bottom to top; each uses only itself and those
//! below it (`tests/layers.rs` checks this):
//!
//! * [`rules`] — the game: squares, bitboards, attacks, positions and FEN, legal moves and
//!   un-moves, SAN/UCI; no I/O;
//! * [`table`] — what a table is: material signatures and the table graph, position ↔ index,
//!   values ([`Value`], [`Wdl`], [`Dtz`], [`Dtw`], [`Metric`]), the capture search, one
//!   table's values in memory; no I/O;
//! * [`gen`] — the retrograde solver, from a source of smaller tables (a trait the layers
//!   above implement); beside it [`format`](mod@format) — table files, knowing nothing of
//!   chess: header, codecs, checksums, mmap reader, atomic writer;
//! * [`store`] — what each file of a table holds and how values become symbols;
//! * [`probe`] — [`Tablebase`]: WDL, DTZ, DTW, ranked moves and lines from stored tables;
//!   table statistics;
//! * [`verify`] (an independent re-check of stored tables that never uses the solver),
//!   [`prove`] (proof-number search with table leaves) and [`build`] (building tables into a
//!   directory: the solver over stored files, estimates, plans and their Slurm submission,
//!   checksums).
//!
//! The binary `antitb` is a thin command line over these (clap lives only there).

pub mod build;
pub mod format;
pub mod r#gen;
pub mod probe;
pub mod prove;
pub mod rules;
pub mod serve;
pub mod store;
pub mod table;
pub mod verify;

mod error;

pub use error::Error;
pub use probe::{Probe, ProbeError, RankBy, RankedMove, Tablebase};
pub use rules::{FenError, Move, Position};
pub use table::{Dtw, Dtz, Material, Metric, Value, Wdl};
