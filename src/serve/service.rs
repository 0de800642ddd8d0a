//! The API without the network: a query string in, a status and a body out.
//!
//! [`Service::handle`] is everything a request does after the HTTP layer has read it, so tests
//! and fuzzers can call it directly. Values come from [`Tablebase`].
//!
//! Where a position has more pieces than the tables, or its table is missing, a little search
//! beyond the tables often still gives the exact value, as the Syzygy prober behind lila finds
//! threats: captures are searched as far as they go (each removes a piece), and one quiet ply
//! at most. When some moves stay unknown the value is still certain if no unknown move could
//! beat the best known one: in DTZ a zeroing move scores at best `W(1)` and a quiet move at
//! best `W(2)` (the opponent cannot lose in 0 plies); in DTW any move scores at best `W(2)`.
//! So a threat (a quiet move that forces the opponent to capture into a loss) is valued
//! exactly. Otherwise the value is unknown, never guessed; the search stops after a fixed
//! number of positions per request.

use super::query::{QueryError, parse_query};
use super::response::{
    Flags, MainlineResponse, MainlineStep, MoveInfo, PositionInfo, TablebaseResponse,
};
use crate::probe::{ProbeError, RankBy, Tablebase};
use crate::rules::notation::san;
use crate::rules::{Move, MoveList, Position, Role};
use crate::table::{Dtw, Dtz, Material, Metric, Value, Wdl};
use serde::Serialize;
use std::cell::Cell;
use std::cmp::Reverse;
use std::path::{Path, PathBuf};

/// The endpoints.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Endpoint {
    /// `GET /antichess`
    Probe,
    /// `GET /antichess/mainline`
    Mainline,
    /// `GET /health`
    Health,
}

/// The body encoding a client asked for.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Format {
    Json,
    Cbor,
}

impl Format {
    /// CBOR if the `Accept` header prefers `application/cbor` to JSON, else JSON.
    pub fn from_accept(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Json;
        };
        let (mut json, mut cbor, mut any) = (None::<f32>, None::<f32>, None::<f32>);
        for range in accept.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            let slot = match media.as_str() {
                "application/json" => &mut json,
                "application/cbor" => &mut cbor,
                "*/*" | "application/*" => &mut any,
                _ => continue,
            };
            *slot = Some(slot.map_or(q, |old| old.max(q)));
        }
        match (cbor, json.or(any)) {
            (Some(c), Some(j)) if c > j => Format::Cbor,
            (Some(c), None) if c > 0.0 => Format::Cbor,
            _ => Format::Json,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Cbor => "application/cbor",
        }
    }
}

/// A finished answer. `log` is a line for the server's log (the client never sees it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub log: Option<String>,
}

impl Reply {
    fn text(status: u16, text: &str) -> Reply {
        Reply {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.as_bytes().to_vec(),
            log: None,
        }
    }

    /// A 500 whose details go to the log only.
    pub fn internal(log: String) -> Reply {
        Reply {
            log: Some(log),
            ..Reply::text(
                500,
                "internal error: a table file could not be read (details are in the server log)",
            )
        }
    }
}

/// Why a request failed after its query was understood.
#[derive(Debug)]
pub enum ServiceError {
    /// No value for the position (HTTP 404): too many pieces, or a missing table.
    NotFound(String),
    /// A table file is unreadable or corrupt (HTTP 500).
    Table(ProbeError),
}

impl From<ProbeError> for ServiceError {
    fn from(e: ProbeError) -> ServiceError {
        ServiceError::Table(e)
    }
}

/// Positions searched beyond the tables per request before giving up (the answer is then
/// `unknown`, never wrong).
const SEARCH_NODES: u32 = 20_000;
/// Longest main line returned (a safety bound; real lines are far shorter).
const MAX_LINE: usize = 1000;

/// Open tables and answer requests; shared by all requests (it is `Sync`).
pub struct Service {
    tb: Tablebase,
    tables: usize,
    dtw_files: bool,
}

/// What the health endpoint reports.
#[derive(Serialize)]
struct Health {
    status: &'static str,
    tables: usize,
    max_pieces: u32,
    dtw: bool,
}

impl Service {
    /// Open table directories (each table file is memory-mapped on first use).
    pub fn open<P: AsRef<Path>>(dirs: &[P]) -> Result<Service, ProbeError> {
        let tb = Tablebase::open(dirs)?;
        let mut tables = 0;
        let mut dtw_files = false;
        for d in dirs {
            let d: PathBuf = d.as_ref().to_path_buf();
            let entries =
                std::fs::read_dir(&d).map_err(|e| ProbeError::BadDirectory(d.clone(), e))?;
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                tables += usize::from(name.ends_with(".wdl"));
                dtw_files |= name.ends_with(".dtw");
            }
        }
        Ok(Service {
            tb,
            tables,
            dtw_files,
        })
    }

    /// Number of `.wdl` files in the directories.
    pub fn tables(&self) -> usize {
        self.tables
    }

    /// The most pieces of any table.
    pub fn max_pieces(&self) -> u32 {
        self.tb.max_pieces()
    }

    /// Whether any `.dtw` file exists.
    pub fn has_dtw(&self) -> bool {
        self.dtw_files
    }

    /// Answer one request: `query` is the URL's query string without `?`.
    pub fn handle(&self, endpoint: Endpoint, query: &str, format: Format) -> Reply {
        let result = match endpoint {
            Endpoint::Health => Ok(encode(
                &Health {
                    status: "ok",
                    tables: self.tables,
                    max_pieces: self.max_pieces(),
                    dtw: self.dtw_files,
                },
                format,
            )),
            Endpoint::Probe => match parse_query(query) {
                Err(e) => return bad_request(&e),
                Ok(q) => self.probe(&q.position).map(|r| encode(&r, format)),
            },
            Endpoint::Mainline => match parse_query(query) {
                Err(e) => return bad_request(&e),
                Ok(q) => self.mainline(&q.position, q.by).map(|r| encode(&r, format)),
            },
        };
        match result {
            Ok(body) => Reply {
                status: 200,
                content_type: format.content_type(),
                body,
                log: None,
            },
            Err(ServiceError::NotFound(why)) => Reply::text(404, &why),
            Err(ServiceError::Table(e)) => Reply::internal(format!("probe failed: {e}")),
        }
    }

    /// `GET /antichess`: the position and its moves, best first (lila's order; ties by UCI).
    pub fn probe(&self, pos: &Position) -> Result<TablebaseResponse, ServiceError> {
        let prober = Prober::new(self);
        // The root first: it is the answer that matters most if the search budget runs out.
        let mut root = PositionInfo::new(
            flags(pos),
            prober.dtz(pos)?.map(Dtz::signed),
            prober.dtw(pos)?.map(Dtw::signed),
            pos.halfmoves(),
            pos.halfmoves().saturating_sub(1),
        );
        let legal = pos.legal_moves();
        let mut moves = Vec::with_capacity(legal.len());
        for m in legal.iter() {
            let child = pos.after(m);
            let flags = flags(&child);
            let info = PositionInfo::new(
                flags,
                prober.dtz(&child)?.map(Dtz::signed),
                prober.dtw(&child)?.map(Dtw::signed),
                child.halfmoves(),
                pos.halfmoves(),
            );
            moves.push(MoveInfo {
                uci: m.uci(),
                san: san_plus(pos, m, flags),
                zeroing: m.is_zeroing(),
                conversion: m.is_capture() || m.promotion.is_some(),
                pos: info,
                capture_rank: m.capture.map_or(0, order_rank),
                promotion_rank: m.promotion.map_or(0, order_rank),
            });
        }
        moves.sort_by(|a, b| (a.sort_key(), &a.uci).cmp(&(b.sort_key(), &b.uci)));
        if let Some(best) = moves.first() {
            root.category = best.pos.category.negate();
        }
        Ok(TablebaseResponse { pos: root, moves })
    }

    /// `GET /antichess/mainline`.
    ///
    /// `by=dtz` is lila's line: from the moves with the best WDL, a zeroing move when winning
    /// (any other when losing), then the quickest win or slowest loss by DTZ; until the game
    /// ends or the halfmove clock reaches 100. `by=dtw` follows DTW instead (shortest win,
    /// longest loss, the clock ignored) to the end of the game, and adds `dtw` to each step.
    pub fn mainline(&self, pos: &Position, by: RankBy) -> Result<MainlineResponse, ServiceError> {
        let prober = Prober::new(self);
        let not_found = |p: &Position, kind: &str| self.not_found(p, kind);
        let root_dtz = prober.dtz(pos)?.ok_or_else(|| not_found(pos, "DTZ"))?;
        let root_dtw = match by {
            RankBy::Dtz => None,
            RankBy::Dtw => Some(prober.dtw(pos)?.ok_or_else(|| not_found(pos, "DTW"))?),
        };
        let mut line = Vec::new();
        let mut cur = *pos;
        let decisive = match by {
            RankBy::Dtz => root_dtz.wdl() != Wdl::Draw,
            RankBy::Dtw => root_dtw.is_some_and(|v| !v.value().is_draw()),
        };
        while decisive && line.len() < MAX_LINE && (by == RankBy::Dtw || cur.halfmoves() < 100) {
            let legal = cur.legal_moves();
            let mut best: Option<(LineKey, Move, Dtz, Option<Dtw>)> = None;
            for m in legal.iter() {
                let child = cur.after(m);
                let dtz = prober
                    .dtz(&child)?
                    .ok_or_else(|| not_found(&child, "DTZ"))?;
                let dtw = match by {
                    RankBy::Dtz => None,
                    RankBy::Dtw => Some(
                        prober
                            .dtw(&child)?
                            .ok_or_else(|| not_found(&child, "DTW"))?,
                    ),
                };
                // Ties go to the smaller UCI, so that lines do not depend on move order.
                let key = (line_key(m, dtz, dtw), Reverse(m.uci()));
                if best.as_ref().is_none_or(|b| key > b.0) {
                    best = Some((key, *m, dtz, dtw));
                }
            }
            let Some((_, m, dtz, dtw)) = best else { break };
            let child = cur.after(&m);
            line.push(MainlineStep {
                uci: m.uci(),
                san: san_plus(&cur, &m, flags(&child)),
                dtz: dtz.signed(),
                precise_dtz: Some(dtz.signed()),
                dtw: dtw.map(Dtw::signed),
            });
            cur = child;
        }
        Ok(MainlineResponse {
            mainline: line,
            winner: cur.is_won_by_side_to_move().then(|| cur.turn().char()),
            dtz: root_dtz.signed(),
            precise_dtz: Some(root_dtz.signed()),
            dtw: root_dtw.map(Dtw::signed),
        })
    }

    fn not_found(&self, pos: &Position, kind: &str) -> ServiceError {
        let n = pos.piece_count();
        ServiceError::NotFound(if n > self.max_pieces() {
            format!(
                "too many pieces: {n} (the tables hold at most {})",
                self.max_pieces()
            )
        } else {
            format!(
                "no {kind} table for {}",
                Material::of_position(pos).canonical()
            )
        })
    }
}

type LineKey = ((i32, Wdl, bool, i32), Reverse<String>);

/// Which move a main line prefers, larger is better: by DTW when given (the best DTW score for
/// the mover), then lila's DTZ rule: the best WDL; a zeroing move when winning, a quiet one
/// otherwise; then the larger DTZ of the position after the move (for the opponent: the
/// quicker loss, or the slower win).
fn line_key(m: &Move, child_dtz: Dtz, child_dtw: Option<Dtw>) -> (i32, Wdl, bool, i32) {
    let dtw_score = child_dtw.map_or(0, |v| v.value().after_move().rank());
    let child = child_dtz.signed();
    (
        dtw_score,
        -child_dtz.wdl(),
        m.is_zeroing() == (child < 0),
        child,
    )
}

fn bad_request(e: &QueryError) -> Reply {
    Reply::text(400, &e.to_string())
}

fn encode<T: Serialize>(value: &T, format: Format) -> Vec<u8> {
    match format {
        Format::Json => serde_json::to_vec(value).expect("responses serialise to JSON"),
        Format::Cbor => {
            let mut out = Vec::new();
            ciborium::into_writer(value, &mut out).expect("responses serialise to CBOR");
            out
        }
    }
}

/// The game-state flags lila reports (shakmaty's definitions for antichess).
fn flags(pos: &Position) -> Flags {
    let us = pos.us().any();
    let stalemate = us && pos.them().any() && pos.legal_moves().is_empty();
    Flags {
        stalemate,
        variant_win: !us || stalemate,
        insufficient_material: pos.is_insufficient_material(),
    }
}

/// SAN, with `#` when the move ends the game.
fn san_plus(pos: &Position, m: &Move, after: Flags) -> String {
    let mut s = san(pos, m);
    if after.variant_win {
        s.push('#');
    }
    s
}

/// lila orders captures and promotions by shakmaty's role numbers: pawn 1 … king 6.
fn order_rank(role: Role) -> u8 {
    match role {
        Role::Pawn => 1,
        Role::Knight => 2,
        Role::Bishop => 3,
        Role::Rook => 4,
        Role::Queen => 5,
        Role::King => 6,
    }
}

/// Exact values from the tables, and where they have none, the search beyond them described in
/// the module documentation.
struct Prober<'a> {
    service: &'a Service,
    nodes: Cell<u32>,
}

impl<'a> Prober<'a> {
    fn new(service: &'a Service) -> Prober<'a> {
        Prober {
            service,
            nodes: Cell::new(SEARCH_NODES),
        }
    }

    fn dtz(&self, pos: &Position) -> Result<Option<Dtz>, ProbeError> {
        Ok(self.value(pos, Metric::Dtz, 1)?.map(Dtz))
    }

    fn dtw(&self, pos: &Position) -> Result<Option<Dtw>, ProbeError> {
        if !self.service.dtw_files {
            return Ok(None);
        }
        Ok(self.value(pos, Metric::Dtw, 1)?.map(Dtw))
    }

    fn value(
        &self,
        pos: &Position,
        metric: Metric,
        quiet_plies: u32,
    ) -> Result<Option<Value>, ProbeError> {
        let tb = &self.service.tb;
        let direct = match metric {
            Metric::Wdl => tb.probe_wdl(pos).map(Wdl::as_value),
            Metric::Dtz => tb.probe_dtz(pos).map(Dtz::value),
            Metric::Dtw => tb.probe_dtw(pos).map(Dtw::value),
        };
        match direct {
            Ok(v) => return Ok(Some(v)),
            Err(ProbeError::MissingTable { .. } | ProbeError::TooManyPieces { .. }) => {}
            Err(e) => return Err(e),
        }
        if pos.us().is_empty() {
            return Ok(Some(Value::win(0)));
        }
        let captures = pos.has_capture();
        let left = self.nodes.get();
        if left == 0 || (!captures && quiet_plies == 0) {
            return Ok(None);
        }
        self.nodes.set(left - 1);
        let mut moves = MoveList::new();
        if captures {
            pos.captures(&mut moves);
        } else {
            pos.quiet_moves(&mut moves);
        }
        if moves.is_empty() {
            // No legal move: the side to move has won.
            return Ok(Some(Value::win(0)));
        }
        let next_plies = if captures {
            quiet_plies
        } else {
            quiet_plies - 1
        };
        let mut best: Option<Value> = None;
        let mut unknown_bound: Option<Value> = None;
        for m in moves.iter() {
            let child = pos.after(m);
            let zeroing = m.is_zeroing();
            match self.value(&child, metric, next_plies)? {
                Some(v) => {
                    let score = if zeroing {
                        metric.zeroing(v)
                    } else {
                        v.after_move()
                    };
                    best = Some(best.map_or(score, |b| b.max(score)));
                }
                None => {
                    let bound = if metric == Metric::Dtz && zeroing {
                        Value::win(1)
                    } else {
                        Value::win(2)
                    };
                    unknown_bound = Some(unknown_bound.map_or(bound, |b| b.max(bound)));
                }
            }
        }
        Ok(match (best, unknown_bound) {
            (Some(b), Some(u)) if u > b => None,
            (best, _) => best,
        })
    }
}
