//! The writer of binary proofs (`FORMAT.md`, "Binary format"): the proof's nodes depth first
//! from the root, each position once, later visits as references to the completed node,
//! compressed as one zstd frame as they are produced, with a SHA-256 trailer; and its reader
//! back to a [`Proof`] ([`Proof::from_binary`], for the proof library). The checker is
//! `check_binary.rs` (this module takes the format's constants from it, and never stands in
//! for it: the reader reads, it does not check).

use super::check_binary::{
    FLAG, KIND_AND, KIND_END, KIND_OR, KIND_REF, KIND_TABLE, MAGIC, TRAILER, VERSION,
    WINDOW_LOG_MAX, ordered_moves, table_wdl,
};
use super::proof::{Proof, Step, write_replacing};
use crate::rules::{Color, Move, Position};
use sha2::{Digest, Sha256};
use std::io::{self, BufRead, Read, Write};
use std::path::Path;

/// The zstd level of the body (measured with `scripts/bench-proof-format.sh`: see FORMAT.md).
pub const LEVEL: i32 = 19;

/// Writes through to `inner`, hashing every byte.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Proof {
    /// Write the proof in the binary format of `FORMAT.md` (`comment` is kept in the header).
    /// The same proof and comment always give the same bytes. Fails (`InvalidData`) on a proof
    /// whose moves are not the legal ones (an `and` node missing a reply, an illegal move).
    pub fn write_binary(&self, out: &mut dyn Write, comment: &str) -> io::Result<()> {
        let n = self.steps.len();
        let root = self.root_id as usize;
        // References to each node: nodes reached more than once are shared.
        let mut indegree = vec![0u32; n];
        let mut seen = vec![false; n];
        let mut todo = vec![root];
        seen[root] = true;
        while let Some(i) = todo.pop() {
            let mut visit = |c: u32| {
                let c = c as usize;
                indegree[c] += 1;
                if !seen[c] {
                    seen[c] = true;
                    todo.push(c);
                }
            };
            match &self.steps[i] {
                Step::Or(_, c) => visit(*c),
                Step::And(r) => r.iter().for_each(|(_, c)| visit(*c)),
                Step::End | Step::Table(_) => {}
            }
        }
        let reachable = seen.iter().filter(|&&s| s).count();

        let mut w = Hashing {
            inner: io::BufWriter::with_capacity(1 << 16, out),
            hasher: Sha256::new(),
        };
        w.write_all(MAGIC)?;
        w.write_all(&[VERSION, u8::from(!self.prover.is_white())])?;
        w.write_all(&(reachable as u64).to_le_bytes())?;
        let fen = self.root.to_string();
        w.write_all(&(fen.len() as u16).to_le_bytes())?;
        w.write_all(fen.as_bytes())?;
        w.write_all(&(comment.len() as u32).to_le_bytes())?;
        w.write_all(comment.as_bytes())?;

        // The records twice: first counted, so that zstd knows the size (it picks its window
        // and tables for it, and writes it in the frame header), then compressed.
        let mut size = 0u64;
        self.records(&indegree, &mut |b| {
            size += b.len() as u64;
            Ok(())
        })?;
        let mut z = zstd::stream::write::Encoder::new(w, LEVEL)?;
        z.set_pledged_src_size(Some(size))?;
        z.include_contentsize(true)?;
        self.records(&indegree, &mut |b| z.write_all(b))?;
        let mut w = z.finish()?;
        let digest = w.hasher.finalize_reset();
        debug_assert_eq!(digest.len(), TRAILER);
        w.inner.write_all(&digest)?;
        w.inner.flush()
    }

    /// The records of the body (FORMAT.md), depth first from the root, handed to `sink` in
    /// pieces; `indegree` is the number of edges into each node reachable from the root.
    fn records(
        &self,
        indegree: &[u32],
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let n = self.steps.len();
        let root = self.root_id as usize;
        // Shared number of each shared node once written, and references still to come.
        const UNSET: u32 = u32::MAX;
        let mut number = vec![UNSET; n];
        let mut remaining = indegree.to_vec();
        let mut shared_count = 0u32;
        let mut buf = Vec::with_capacity(1 << 16);
        // Depth first: (node, position, children in the format's order, next child).
        let mut stack = Vec::new();
        let mut pending = vec![(root, self.root)];
        loop {
            // Write the record of each pending child; open the first node that has children.
            while let Some((i, pos)) = pending.pop() {
                if number[i] != UNSET {
                    remaining[i] -= 1;
                    let last = if remaining[i] == 0 { FLAG } else { 0 };
                    buf.push(KIND_REF | last);
                    varint(&mut buf, number[i]);
                    continue;
                }
                let flag = if remaining[i] >= 2 {
                    number[i] = shared_count;
                    shared_count += 1;
                    remaining[i] -= 1;
                    FLAG
                } else {
                    0
                };
                let kids: Vec<(usize, Position)> = match &self.steps[i] {
                    Step::Or(m, c) => {
                        let moves = ordered_moves(&pos);
                        let at = moves.iter().position(|x| x == m).ok_or_else(|| {
                            invalid(format!("{} is not a legal move in {pos}", m.uci()))
                        })?;
                        buf.push(KIND_OR | flag);
                        varint(&mut buf, at as u32);
                        vec![(*c as usize, pos.after(m))]
                    }
                    Step::And(r) => {
                        let moves = ordered_moves(&pos);
                        if moves.len() != r.len() {
                            return Err(invalid(format!(
                                "an 'and' node of {pos} lists {} of its {} moves",
                                r.len(),
                                moves.len()
                            )));
                        }
                        buf.push(KIND_AND | flag);
                        moves
                            .iter()
                            .map(|m| {
                                let (_, c) = r.iter().find(|(x, _)| x == m).ok_or_else(|| {
                                    invalid(format!("{} is not covered in {pos}", m.uci()))
                                })?;
                                Ok((*c as usize, pos.after(m)))
                            })
                            .collect::<io::Result<_>>()?
                    }
                    Step::End => {
                        buf.push(KIND_END | flag);
                        Vec::new()
                    }
                    Step::Table(v) => {
                        let k = match v {
                            -2 => 0,
                            -1 => 1,
                            1 => 2,
                            2 => 3,
                            _ => return Err(invalid(format!("table value {v} in {pos}"))),
                        };
                        buf.push((KIND_TABLE + k) | flag);
                        Vec::new()
                    }
                };
                if buf.len() >= 1 << 15 {
                    sink(&buf)?;
                    buf.clear();
                }
                if !kids.is_empty() {
                    stack.push((i, kids.into_iter().rev().collect::<Vec<_>>()));
                    break;
                }
            }
            // The next child of the deepest open node, closing the nodes that are done.
            loop {
                match stack.last_mut() {
                    None => break,
                    Some((_, kids)) => match kids.pop() {
                        Some(k) => {
                            pending.push(k);
                            break;
                        }
                        None => {
                            stack.pop();
                        }
                    },
                }
            }
            if pending.is_empty() {
                break;
            }
        }
        sink(&buf)
    }

    /// The proof in the binary format (see [`Proof::write_binary`]).
    pub fn to_binary(&self, comment: &str) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.write_binary(&mut buf, comment)?;
        Ok(buf)
    }
}

/// Write a binary proof to `path` through a temporary file in the same directory, synced and
/// renamed into place once complete (`proof::write_replacing`).
pub fn write_binary_proof(path: &Path, proof: &Proof, comment: &str) -> io::Result<()> {
    write_replacing(path, &mut |w| proof.write_binary(w, comment))
}

/// A binary proof read back: the proof and the comment of its header.
#[derive(Clone, Debug)]
pub struct ReadBinary {
    pub proof: Proof,
    pub comment: String,
}

impl Proof {
    /// Read a proof written in the binary format of `FORMAT.md` (see [`read_binary`]).
    pub fn from_binary(bytes: &[u8]) -> Result<Proof, String> {
        read_binary(bytes).map(|r| r.proof)
    }
}

/// Read a binary proof (`FORMAT.md`, "Binary format") and its comment. This reads, it does not
/// check: run [`super::check_binary::check`] on the same bytes first (a file that passes it
/// always reads, into a proof with the same figures). Anything else that does not read (a
/// wrong checksum, a truncated body, a reference to a node not complete, a move index past the
/// legal moves) is an error message, never a panic. The nodes come out children first, as
/// [`Proof`] wants them, an `and` node's replies in the format's move order.
pub fn read_binary(bytes: &[u8]) -> Result<ReadBinary, String> {
    if bytes.len() < MAGIC.len() + TRAILER || !bytes.starts_with(MAGIC) {
        return Err("not a binary antitb proof".to_string());
    }
    let (data, trailer) = bytes.split_at(bytes.len() - TRAILER);
    if Sha256::digest(data).as_slice() != trailer {
        return Err("checksum mismatch: the file is corrupt or truncated".to_string());
    }
    let mut at = MAGIC.len();
    let mut take = |n: usize, what: &str| -> Result<&[u8], String> {
        let piece = data
            .get(at..at + n)
            .ok_or_else(|| format!("truncated in the {what}"))?;
        at += n;
        Ok(piece)
    };
    let le = |b: &[u8]| {
        b.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
    };
    let version = take(1, "header")?[0];
    if version != VERSION {
        return Err(format!(
            "binary proof version {version}, this antitb reads version {VERSION}"
        ));
    }
    let prover = match take(1, "header")?[0] {
        0 => Color::White,
        1 => Color::Black,
        b => return Err(format!("prover byte {b} is neither 0 nor 1")),
    };
    let declared = le(take(8, "header")?);
    let fen_len = le(take(2, "header")?) as usize;
    let fen = std::str::from_utf8(take(fen_len, "root FEN")?)
        .map_err(|_| "the root FEN is not text".to_string())?;
    let root: Position = fen.parse().map_err(|e| format!("bad root FEN: {e}"))?;
    let comment_len = usize::try_from(le(take(4, "header")?)).map_err(|_| "comment too long")?;
    let comment = String::from_utf8_lossy(take(comment_len, "comment")?).into_owned();
    let body = &data[at..];
    let mut decoder = zstd::stream::read::Decoder::with_buffer(body)
        .map_err(|e| format!("cannot start zstd: {e}"))?
        .single_frame();
    decoder
        .window_log_max(WINDOW_LOG_MAX)
        .map_err(|e| format!("cannot start zstd: {e}"))?;
    let mut records = io::BufReader::with_capacity(1 << 16, decoder);
    let proof = read_records(&mut records, root, prover, declared)?;
    let mut rest = [0u8; 1];
    match records.read(&mut rest) {
        Ok(0) => {}
        Ok(_) => return Err("records after the root's last one".to_string()),
        Err(e) => return Err(format!("body unreadable: {e}")),
    }
    if !records.into_inner().finish().is_empty() {
        return Err("bytes after the compressed body".to_string());
    }
    Ok(ReadBinary { proof, comment })
}

/// A node of the open line: its position, the moves of its children in the format's order,
/// their node numbers read so far, and its shared number if it has one.
struct Open {
    pos: Position,
    kind: u8,
    moves: Vec<Move>,
    children: Vec<u32>,
    shared: Option<u32>,
}

fn byte<R: BufRead>(r: &mut R) -> Result<u8, String> {
    let b = match r.fill_buf() {
        Ok([]) => return Err("the body ends inside the proof".to_string()),
        Ok(buf) => buf[0],
        Err(e) => return Err(format!("body unreadable: {e}")),
    };
    r.consume(1);
    Ok(b)
}

fn read_varint<R: BufRead>(r: &mut R) -> Result<u32, String> {
    let mut v = 0u64;
    for i in 0..5 {
        let b = byte(r)?;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(v).map_err(|_| format!("number {v} too large in the body"));
        }
    }
    Err("a number of more than five bytes in the body".to_string())
}

/// The records depth first from the root, into steps children first.
fn read_records<R: BufRead>(
    r: &mut R,
    root: Position,
    prover: Color,
    declared: u64,
) -> Result<Proof, String> {
    const INCOMPLETE: u32 = u32::MAX;
    // No more than the records the body can hold (a damaged header cannot ask for more).
    let mut steps: Vec<Step> = Vec::with_capacity(declared.min(1 << 20) as usize);
    // The step of each shared node, INCOMPLETE while its record is open.
    let mut shared: Vec<u32> = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut nodes = 0u64;
    let mut pos = root;
    loop {
        // The record of the node at `pos`: a finished step, or a node whose children follow.
        let tag = byte(r)?;
        let (kind, flag) = (tag & 7, tag & FLAG != 0);
        if tag & !(7 | FLAG) != 0 {
            return Err(format!("tag byte {tag:#04x} has unknown bits"));
        }
        let mut done = if kind == KIND_REF {
            let k = read_varint(r)?;
            if stack.is_empty() {
                return Err("the root is a reference".to_string());
            }
            match shared.get(k as usize) {
                None => return Err(format!("a reference to shared node #{k}, not defined yet")),
                Some(&INCOMPLETE) => {
                    return Err(format!(
                        "a reference to shared node #{k}, not complete (a cycle)"
                    ));
                }
                Some(&id) => id,
            }
        } else {
            nodes += 1;
            if nodes > declared {
                return Err(format!("more nodes than the {declared} of the header"));
            }
            let number = if flag {
                shared.push(INCOMPLETE);
                Some(shared.len() as u32 - 1)
            } else {
                None
            };
            let moves = match kind {
                KIND_OR => {
                    let i = read_varint(r)? as usize;
                    let moves = ordered_moves(&pos);
                    let m = *moves.get(i).ok_or_else(|| {
                        format!(
                            "move index {i} in {pos}, which has {} legal moves",
                            moves.len()
                        )
                    })?;
                    vec![m]
                }
                KIND_AND => {
                    let moves = ordered_moves(&pos);
                    if moves.is_empty() {
                        return Err(format!("an 'and' node without moves: {pos}"));
                    }
                    moves
                }
                _ => Vec::new(),
            };
            if moves.is_empty() {
                let step = if kind == KIND_END {
                    Step::End
                } else {
                    Step::Table(table_wdl(kind))
                };
                let id = steps.len() as u32;
                steps.push(step);
                if let Some(k) = number {
                    shared[k as usize] = id;
                }
                id
            } else {
                let first = pos.after(&moves[0]);
                stack.push(Open {
                    pos,
                    kind,
                    children: Vec::with_capacity(moves.len()),
                    moves,
                    shared: number,
                });
                // The first child's record comes next.
                pos = first;
                continue;
            }
        };
        // Hand finished nodes to their parents, closing the nodes that are complete.
        loop {
            let Some(top) = stack.last_mut() else {
                if nodes != declared {
                    return Err(format!("{nodes} nodes, but the header says {declared}"));
                }
                return Ok(Proof::new(root, prover, steps, done));
            };
            top.children.push(done);
            if top.children.len() < top.moves.len() {
                pos = top.pos.after(&top.moves[top.children.len()]);
                break;
            }
            let top = stack.pop().expect("the stack has a top");
            let step = if top.kind == KIND_OR {
                Step::Or(top.moves[0], top.children[0])
            } else {
                Step::And(top.moves.into_iter().zip(top.children).collect())
            };
            done = steps.len() as u32;
            steps.push(step);
            if let Some(k) = top.shared {
                shared[k as usize] = done;
            }
        }
    }
}
