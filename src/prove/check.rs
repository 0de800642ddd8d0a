//! The independent proof checker: reads a proof file (`FORMAT.md`) and re-plays it with the rules
//! core alone, probing table leaves again through an [`Oracle`].
//!
//! Nothing here comes from the search (`dfpn.rs`, `extract.rs`, `certify.rs`, `hash.rs`, `tt.rs`,
//! `proof.rs`): positions are compared by placement, side to move and en-passant square; moves
//! are parsed from UCI and looked up among the legal moves. The checker trusts only the rules
//! core and the tables.

use super::Oracle;
use crate::rules::notation::parse_uci;
use crate::rules::{Color, Position};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// A proof that passed, with its sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    pub root: Position,
    pub prover: Color,
    pub nodes: usize,
    pub or_nodes: usize,
    pub and_nodes: usize,
    pub end_leaves: usize,
    pub table_leaves: usize,
    /// Longest line from the root to a leaf, in plies.
    pub depth: usize,
}

/// Why a proof was rejected: the line and the node where it failed, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejected {
    pub line: Option<usize>,
    pub node: Option<u32>,
    /// FEN of the node's position, where known.
    pub fen: Option<String>,
    pub message: String,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        if let Some(n) = self.node {
            write!(f, "node {n}")?;
            if let Some(fen) = &self.fen {
                write!(f, " ({fen})")?;
            }
            write!(f, ": ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Rejected {}

fn reject(line: Option<usize>, message: impl Into<String>) -> Rejected {
    Rejected {
        line,
        node: None,
        fen: None,
        message: message.into(),
    }
}

enum Kind {
    Or(String, u32),
    And(Vec<(String, u32)>),
    End,
    Table(i8),
}

struct Node {
    line: usize,
    kind: Kind,
}

fn parse_id(s: &str, line: usize) -> Result<u32, Rejected> {
    s.parse::<u32>()
        .map_err(|_| reject(Some(line), format!("'{s}' is not a node number")))
}

struct Parsed {
    root: Position,
    prover: Color,
    nodes: HashMap<u32, Node>,
}

fn parse(text: &str) -> Result<Parsed, Rejected> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    match lines.next() {
        Some((_, "antitb-proof 1")) => {}
        Some((l, other)) => {
            return Err(reject(
                Some(l),
                format!("expected 'antitb-proof 1', found '{other}'"),
            ));
        }
        None => return Err(reject(None, "empty proof file")),
    }
    let root = match lines.next() {
        Some((l, s)) => match s.strip_prefix("root ") {
            Some(fen) => fen
                .trim()
                .parse::<Position>()
                .map_err(|e| reject(Some(l), format!("bad root FEN: {e}")))?,
            None => return Err(reject(Some(l), "expected 'root <FEN>'")),
        },
        None => return Err(reject(None, "missing 'root' line")),
    };
    let prover = match lines.next() {
        Some((_, "prover white")) => Color::White,
        Some((_, "prover black")) => Color::Black,
        Some((l, _)) => return Err(reject(Some(l), "expected 'prover white' or 'prover black'")),
        None => return Err(reject(None, "missing 'prover' line")),
    };
    let mut nodes = HashMap::new();
    for (l, s) in lines {
        let tok: Vec<&str> = s.split_whitespace().collect();
        let id = parse_id(tok[0], l)?;
        let kind = match (tok.get(1).copied(), &tok[2.min(tok.len())..]) {
            (Some("or"), [m, c]) => Kind::Or(m.to_string(), parse_id(c, l)?),
            (Some("and"), rest) if rest.len() % 2 == 0 => Kind::And(
                rest.chunks(2)
                    .map(|p| Ok((p[0].to_string(), parse_id(p[1], l)?)))
                    .collect::<Result<_, Rejected>>()?,
            ),
            (Some("end"), []) => Kind::End,
            (Some("table"), [v]) => match v.trim_start_matches('+').parse::<i8>() {
                Ok(w) if (-2..=2).contains(&w) => Kind::Table(w),
                _ => {
                    return Err(reject(
                        Some(l),
                        format!("table value '{v}' is not one of -2..+2"),
                    ));
                }
            },
            _ => return Err(reject(Some(l), format!("cannot read node line '{s}'"))),
        };
        if let Some(prev) = nodes.insert(id, Node { line: l, kind }) {
            return Err(Rejected {
                line: Some(l),
                node: Some(id),
                fen: None,
                message: format!("defined twice (first on line {})", prev.line),
            });
        }
    }
    Ok(Parsed {
        root,
        prover,
        nodes,
    })
}

/// Check a proof given as text. Table leaves are probed through `oracle`.
pub fn check(text: &str, oracle: &dyn Oracle) -> Result<Checked, Rejected> {
    let Parsed {
        root,
        prover,
        nodes,
    } = parse(text)?;
    if !nodes.contains_key(&0) {
        return Err(reject(None, "node 0 (the root) is not defined"));
    }
    let mut w = Walker {
        nodes: &nodes,
        prover,
        oracle,
        position: HashMap::from([(0, root)]),
        owner: HashMap::from([(root.without_counters(), 0)]),
        out: Checked {
            root,
            prover,
            nodes: nodes.len(),
            or_nodes: 0,
            and_nodes: 0,
            end_leaves: 0,
            table_leaves: 0,
            depth: 0,
        },
    };
    let mut height: HashMap<u32, usize> = HashMap::new();
    let mut on_stack: HashSet<u32> = HashSet::from([0]);
    // Iterative depth-first walk: (node, its children, next child to visit).
    let mut stack: Vec<(u32, Vec<u32>, usize)> = vec![(0, w.visit(0)?, 0)];
    while let Some((id, kids, next)) = stack.last_mut() {
        let id = *id;
        if *next == kids.len() {
            let h = kids.iter().map(|c| height[c] + 1).max().unwrap_or(0);
            height.insert(id, h);
            on_stack.remove(&id);
            stack.pop();
            continue;
        }
        let child = kids[*next];
        *next += 1;
        if height.contains_key(&child) {
            continue;
        }
        if on_stack.contains(&child) {
            return Err(w.fail(
                id,
                format!("child {child} is also above it: the line repeats a position"),
            ));
        }
        let ckids = w.visit(child)?;
        on_stack.insert(child);
        stack.push((child, ckids, 0));
    }
    w.out.depth = height[&0];
    if let Some((id, n)) = nodes
        .iter()
        .filter(|(id, _)| !height.contains_key(id))
        .min_by_key(|(id, _)| **id)
    {
        return Err(Rejected {
            line: Some(n.line),
            node: Some(*id),
            fen: None,
            message: "not reachable from the root".to_string(),
        });
    }
    Ok(w.out)
}

struct Walker<'a> {
    nodes: &'a HashMap<u32, Node>,
    prover: Color,
    oracle: &'a dyn Oracle,
    /// Position of every node reached so far.
    position: HashMap<u32, Position>,
    /// The node of every position reached so far.
    owner: HashMap<Position, u32>,
    out: Checked,
}

impl Walker<'_> {
    fn fail(&self, id: u32, message: String) -> Rejected {
        Rejected {
            line: self.nodes.get(&id).map(|n| n.line),
            node: Some(id),
            fen: self.position.get(&id).map(|p| p.to_string()),
            message,
        }
    }

    /// Check node `id` (its position is known) and give its children their positions.
    fn visit(&mut self, id: u32) -> Result<Vec<u32>, Rejected> {
        let pos = self.position[&id];
        let node = &self.nodes[&id];
        let kids = check_node(node, &pos, self.prover, self.oracle, &mut self.out)
            .map_err(|m| self.fail(id, m))?;
        let mut ids = Vec::with_capacity(kids.len());
        for (mv, c, cpos) in kids {
            if !self.nodes.contains_key(&c) {
                return Err(self.fail(id, format!("child {c} (after {mv}) is not defined")));
            }
            match self.position.get(&c) {
                Some(p) if p.without_counters() != cpos.without_counters() => {
                    return Err(self.fail(
                        id,
                        format!("{mv} leads to node {c}, which another line reaches as a different position ({p})"),
                    ));
                }
                Some(_) => {}
                None => {
                    if let Some(&other) = self.owner.get(&cpos.without_counters()) {
                        return Err(self.fail(
                            id,
                            format!(
                                "{mv} leads to node {c}, but node {other} is already that position"
                            ),
                        ));
                    }
                    self.owner.insert(cpos.without_counters(), c);
                    self.position.insert(c, cpos);
                }
            }
            ids.push(c);
        }
        Ok(ids)
    }
}

/// Check one node at its position; return its children as (move, node, position).
fn check_node(
    node: &Node,
    pos: &Position,
    prover: Color,
    oracle: &dyn Oracle,
    out: &mut Checked,
) -> Result<Vec<(String, u32, Position)>, String> {
    let prover_to_move = pos.turn() == prover;
    let side = |c: Color| if c.is_white() { "White" } else { "Black" };
    match &node.kind {
        Kind::Or(text, child) => {
            out.or_nodes += 1;
            if !prover_to_move {
                return Err(format!(
                    "an 'or' node, but {} (the defender) is to move",
                    side(pos.turn())
                ));
            }
            let m = parse_uci(pos, text).map_err(|e| e.to_string())?;
            Ok(vec![(m.uci(), *child, pos.after(&m))])
        }
        Kind::And(replies) => {
            out.and_nodes += 1;
            if prover_to_move {
                return Err(format!(
                    "an 'and' node, but {} (the prover) is to move",
                    side(pos.turn())
                ));
            }
            let legal = pos.legal_moves();
            if legal.is_empty() {
                return Err("the defender has no legal move: it has won".to_string());
            }
            let mut seen = HashSet::new();
            let mut kids = Vec::with_capacity(replies.len());
            for (text, c) in replies {
                let m = parse_uci(pos, text).map_err(|e| e.to_string())?;
                if !seen.insert(m) {
                    return Err(format!("reply {text} is listed twice"));
                }
                kids.push((m.uci(), *c, pos.after(&m)));
            }
            if let Some(m) = legal.iter().find(|m| !seen.contains(*m)) {
                return Err(format!("defender move {} is not covered", m.uci()));
            }
            Ok(kids)
        }
        Kind::End => {
            out.end_leaves += 1;
            if !prover_to_move {
                return Err("an 'end' leaf, but the defender is to move".to_string());
            }
            if !pos.legal_moves().is_empty() {
                return Err("an 'end' leaf, but the prover has legal moves".to_string());
            }
            Ok(Vec::new())
        }
        Kind::Table(w) => {
            out.table_leaves += 1;
            if pos.us().is_empty() || pos.them().is_empty() {
                return Err("a 'table' leaf where a side has no pieces".to_string());
            }
            let probed = oracle
                .wdl(pos)
                .map_err(|e| format!("table probe failed: {e}"))?
                .ok_or_else(|| "no table holds this position".to_string())?;
            if probed != *w {
                return Err(format!(
                    "the table gives WDL {probed:+}, the proof says {w:+}"
                ));
            }
            if *w == 0 || (*w > 0) != prover_to_move {
                return Err(format!(
                    "WDL {w:+} with {} to move is not a win for the prover",
                    side(pos.turn())
                ));
            }
            Ok(Vec::new())
        }
    }
}
