//! Shared by the integration tests: a naive solver and the Syzygy reference (oracles), our
//! positions for shakmaty, running the command line, writing table files from decoded
//! sections, and a small random generator.
#![allow(dead_code)]

pub mod cli;
pub mod files;
pub mod naive;
pub mod rng;
pub mod syzygy;

use antitb::rules::{Color, Position, Role};

/// The library's own conversion (one copy; see its module doc).
#[path = "../../src/verify/syzygy/to_shakmaty.rs"]
pub mod to_shakmaty;
