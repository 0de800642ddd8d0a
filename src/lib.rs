//! antitb: antichess endgame tablebases — generate, probe, verify, prove.
//!
//! Layers, bottom to top (each uses only itself and those below): [`rules`] (the game, pure),
//! [`material`] (signatures and the table graph), [`index`] (position ↔ index),
//! [`gen`] (the retrograde solver). The binary `antitb` is a thin command line over these.

pub mod build;
pub mod checksums;
pub mod format;
pub mod r#gen;
pub mod index;
pub mod material;
pub mod plan;
pub mod probe;
pub mod prove;
pub mod rules;
pub mod stats;
pub mod store;
pub mod value;
pub mod verify;
