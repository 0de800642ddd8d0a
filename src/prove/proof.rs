//! A proof in memory (a DAG with one node per position) and its writer (format: `FORMAT.md`).

use crate::rules::notation::parse_uci;
use crate::rules::{Color, Move, Position};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::path::Path;

/// One node of a proof. Children are node numbers in [`Proof::steps`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The prover is to move and plays this move.
    Or(Move, u32),
    /// The defender is to move: every legal reply with the node it leads to.
    And(Vec<(Move, u32)>),
    /// The prover is to move and has no legal move (or no pieces): won by the end rule.
    End,
    /// Won by a table: WDL from the side to move's view (±1 or ±2).
    Table(i8),
}

/// A proof that `prover` wins from `root`: an acyclic graph of [`Step`]s whose children always
/// come before their parents in `steps`.
#[derive(Clone, Debug)]
pub struct Proof {
    pub root: Position,
    pub prover: Color,
    pub steps: Vec<Step>,
    pub root_id: u32,
}

/// Sizes of a proof.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProofStats {
    pub nodes: usize,
    pub or_nodes: usize,
    pub and_nodes: usize,
    pub end_leaves: usize,
    pub table_leaves: usize,
    /// Longest line from the root to a leaf, in plies.
    pub depth: usize,
}

impl Proof {
    pub(crate) fn new(root: Position, prover: Color, steps: Vec<Step>, root_id: u32) -> Proof {
        Proof {
            root,
            prover,
            steps,
            root_id,
        }
    }

    /// Number of nodes.
    pub fn size(&self) -> usize {
        self.steps.len()
    }

    /// Node counts by kind and the depth.
    pub fn stats(&self) -> ProofStats {
        let mut st = ProofStats {
            nodes: self.steps.len(),
            ..ProofStats::default()
        };
        // Children precede parents, so one pass in order gives every node's height.
        let mut height = vec![0usize; self.steps.len()];
        for (i, s) in self.steps.iter().enumerate() {
            height[i] = match s {
                Step::Or(_, c) => {
                    st.or_nodes += 1;
                    height[*c as usize] + 1
                }
                Step::And(r) => {
                    st.and_nodes += 1;
                    r.iter()
                        .map(|(_, c)| height[*c as usize])
                        .max()
                        .unwrap_or(0)
                        + 1
                }
                Step::End => {
                    st.end_leaves += 1;
                    0
                }
                Step::Table(_) => {
                    st.table_leaves += 1;
                    0
                }
            };
        }
        st.depth = height.get(self.root_id as usize).copied().unwrap_or(0);
        st
    }

    /// The prover's first move, if the root is an OR node.
    pub fn first_move(&self) -> Option<Move> {
        match self.steps.get(self.root_id as usize) {
            Some(Step::Or(m, _)) => Some(*m),
            _ => None,
        }
    }

    /// Write the proof in the text format of `FORMAT.md`: nodes renumbered breadth first from
    /// the root (node 0), so every node is listed after a node that refers to it.
    pub fn write(&self, out: &mut dyn Write, comment: &str) -> io::Result<()> {
        const UNSET: u32 = u32::MAX;
        let mut number = vec![UNSET; self.steps.len()];
        let mut order = Vec::with_capacity(self.steps.len());
        let mut queue = VecDeque::new();
        number[self.root_id as usize] = 0;
        queue.push_back(self.root_id);
        while let Some(i) = queue.pop_front() {
            order.push(i);
            let mut visit = |c: u32| {
                if number[c as usize] == UNSET {
                    number[c as usize] = (order.len() + queue.len()) as u32;
                    queue.push_back(c);
                }
            };
            match &self.steps[i as usize] {
                Step::Or(_, c) => visit(*c),
                Step::And(r) => r.iter().for_each(|(_, c)| visit(*c)),
                Step::End | Step::Table(_) => {}
            }
        }
        let mut w = io::BufWriter::new(out);
        writeln!(w, "antitb-proof 1")?;
        for line in comment.lines() {
            writeln!(w, "# {line}")?;
        }
        writeln!(w, "root {}", self.root)?;
        writeln!(
            w,
            "prover {}",
            if self.prover.is_white() {
                "white"
            } else {
                "black"
            }
        )?;
        for &i in &order {
            let id = number[i as usize];
            match &self.steps[i as usize] {
                Step::Or(m, c) => writeln!(w, "{id} or {} {}", m.uci(), number[*c as usize])?,
                Step::And(r) => {
                    write!(w, "{id} and")?;
                    for (m, c) in r {
                        write!(w, " {} {}", m.uci(), number[*c as usize])?;
                    }
                    writeln!(w)?;
                }
                Step::End => writeln!(w, "{id} end")?,
                Step::Table(v) => writeln!(w, "{id} table {v:+}")?,
            }
        }
        w.flush()
    }

    /// The proof as text (see [`Proof::write`]).
    pub fn to_text(&self, comment: &str) -> String {
        let mut buf = Vec::new();
        self.write(&mut buf, comment)
            .expect("writing to memory cannot fail");
        String::from_utf8(buf).expect("the proof text is ASCII")
    }

    /// Read a proof written in the text format of `FORMAT.md`, as [`Proof::write`] writes it.
    /// This reads, it does not check: run [`super::check::check`] on the text first (a file
    /// that passes it always reads); anything else that does not read is an error message.
    pub fn from_text(text: &str) -> Result<Proof, String> {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        if lines.next() != Some("antitb-proof 1") {
            return Err("not an antitb proof (version 1)".to_string());
        }
        let root: Position = lines
            .next()
            .and_then(|l| l.strip_prefix("root "))
            .ok_or("missing root line")?
            .trim()
            .parse()
            .map_err(|e| format!("bad root: {e}"))?;
        let prover = match lines.next() {
            Some("prover white") => Color::White,
            Some("prover black") => Color::Black,
            _ => return Err("missing prover line".to_string()),
        };
        let mut nodes: HashMap<u32, Vec<&str>> = HashMap::new();
        for l in lines {
            let mut tok = l.split_whitespace();
            let id = tok.next().and_then(|t| t.parse::<u32>().ok());
            let id = id.ok_or_else(|| format!("bad node line '{l}'"))?;
            nodes.insert(id, tok.collect());
        }
        // Post-order from the root (children before parents), replaying the moves.
        const UNSET: u32 = u32::MAX;
        let mut number: HashMap<u32, u32> = HashMap::new();
        let mut steps = Vec::with_capacity(nodes.len());
        let mut stack = vec![(0u32, root, false)];
        while let Some((id, pos, expanded)) = stack.pop() {
            match number.get(&id) {
                // Met again above its own exit: it is its own descendant.
                Some(&UNSET) if !expanded => {
                    return Err(format!("a cycle through node {id}"));
                }
                Some(&UNSET) | None => {}
                Some(_) => continue,
            }
            let tok = nodes
                .get(&id)
                .ok_or_else(|| format!("node {id} is not defined"))?;
            let edges = match tok.first().copied() {
                Some("or") | Some("and") => tok[1..]
                    .chunks(2)
                    .map(|e| match e {
                        [m, c] => {
                            let mv = parse_uci(&pos, m)
                                .map_err(|_| format!("node {id}: illegal move {m} in {pos}"))?;
                            let child = c
                                .parse::<u32>()
                                .map_err(|_| format!("node {id}: bad child"))?;
                            Ok((mv, child))
                        }
                        _ => Err(format!("node {id}: a move without a child")),
                    })
                    .collect::<Result<Vec<(Move, u32)>, String>>()?,
                _ => Vec::new(),
            };
            if !expanded {
                number.insert(id, UNSET);
                stack.push((id, pos, true));
                for &(mv, child) in edges.iter().rev() {
                    stack.push((child, pos.after(&mv), false));
                }
                continue;
            }
            let to = |c: &u32| number.get(c).copied().filter(|&n| n != UNSET);
            let step = match tok.first().copied() {
                Some("or") if edges.len() == 1 => {
                    Step::Or(edges[0].0, to(&edges[0].1).ok_or("unread child")?)
                }
                Some("and") => Step::And(
                    edges
                        .iter()
                        .map(|(m, c)| Ok((*m, to(c).ok_or("unread child")?)))
                        .collect::<Result<_, String>>()?,
                ),
                Some("end") => Step::End,
                Some("table") => Step::Table(
                    tok.get(1)
                        .and_then(|v| v.trim_start_matches('+').parse::<i8>().ok())
                        .ok_or_else(|| format!("node {id}: bad table value"))?,
                ),
                _ => return Err(format!("node {id}: cannot read '{}'", tok.join(" "))),
            };
            number.insert(id, steps.len() as u32);
            steps.push(step);
        }
        let root_id = steps.len() as u32 - 1;
        Ok(Proof::new(root, prover, steps, root_id))
    }
}

/// Write a file through a temporary name in the same directory (`.<name>.tmp<pid>`), synced and
/// renamed into place once `write` has written all of it: a failed write never leaves a
/// truncated file under the name, and the temporary file is removed. `write` gets a buffered
/// writer (flushed here). The writers of both proof formats go through it.
pub(crate) fn write_replacing(
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = io::BufWriter::new(file);
        write(&mut w)?;
        w.flush()?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
