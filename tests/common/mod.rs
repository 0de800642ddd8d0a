//! Test oracles shared by the integration tests: a naive solver and the Syzygy reference.
#![allow(dead_code)]

pub mod naive;
pub mod syzygy;
