//! Shared by the integration tests: a naive solver and the Syzygy reference (oracles), and
//! writing table files from decoded sections.
#![allow(dead_code)]

pub mod files;
pub mod naive;
pub mod syzygy;
