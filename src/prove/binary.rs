//! The writer of binary proofs (`FORMAT.md`, "Binary format"): the proof's nodes depth first
//! from the root, each position once, later visits as references to the completed node,
//! compressed as one zstd frame as they are produced, with a SHA-256 trailer. The checker is
//! `check_binary.rs` (this module takes the format's constants from it).

use super::check_binary::{
    FLAG, KIND_AND, KIND_END, KIND_OR, KIND_REF, KIND_TABLE, MAGIC, TRAILER, VERSION, ordered_moves,
};
use super::proof::{Proof, Step};
use sha2::{Digest, Sha256};
use std::io::{self, Write};
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
                let kids: Vec<(usize, crate::rules::Position)> = match &self.steps[i] {
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
/// renamed into place once complete (as `library::write_proof` does for text).
pub fn write_binary_proof(path: &Path, proof: &Proof, comment: &str) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let written = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        proof.write_binary(&mut file, comment)?;
        file.sync_all()
    })();
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}
