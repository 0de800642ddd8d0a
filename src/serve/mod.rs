//! `antitb serve`: the lichess tablebase HTTP API (lila-tablebase's `/antichess` endpoints),
//! answered from antitb's tables with exact DTZ, and DTW wherever a `.dtw` file exists.
//!
//! - `GET /antichess?fen=FEN`: the position (`category`, `dtz`, `dtw`, game-state flags) and
//!   every legal move with the same fields for the position after it, best move first, field
//!   by field and in the order lila gives them ([`response`]).
//! - `GET /antichess/mainline?fen=FEN[&by=dtw]`: lila's line of DTZ-optimal moves, or with
//!   `by=dtw` (antitb's extension) the DTW-optimal line to the end of the game.
//! - `GET /health`: `{"status":"ok","tables":N,"max_pieces":K,"dtw":bool}`.
//!
//! Bad FEN: 400 with a one-line reason. A position with more pieces than the tables, or whose
//! table is missing: `/antichess` answers 200 with `unknown` values, `/mainline` 404. A table
//! file that cannot be read: 500, with the file named only in the server's log. Bodies are JSON,
//! or CBOR when the client's `Accept` header prefers `application/cbor`; every response carries
//! `Access-Control-Allow-Origin: *`.
//!
//! [`service`] is the whole API without the network (query string in, status and body out);
//! [`http`] puts it on a socket with axum, running every probe on a bounded pool of blocking
//! threads so that the async workers only move bytes.

pub mod http;
pub mod query;
pub mod response;
pub mod service;

pub use http::{ServeError, ServeOptions, serve};
pub use query::{Query, QueryError, parse_query};
pub use service::{Endpoint, Format, Reply, Service};
