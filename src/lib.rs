//! antitb: antichess endgame tablebases — generate, probe, verify, prove.
//!
//! Layers, bottom to top (each uses only itself and those below): [`rules`] (the game, pure),
//! [`table`] (materials, index, values, the capture search), [`gen`] (the retrograde solver)
//! and [`format`](mod@format) (table files, knowing nothing of chess), [`store`] (what each table file
//! holds), [`probe`] (answers from stored tables), then [`verify`], [`prove`] and [`build`]
//! (which drives the solver over stored files). The binary `antitb` is a thin command line over
//! these.

pub mod build;
pub mod format;
pub mod r#gen;
pub mod probe;
pub mod prove;
pub mod rules;
pub mod store;
pub mod table;
pub mod verify;

mod error;

pub use error::Error;
