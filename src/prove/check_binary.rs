//! The independent checker of binary proofs (`FORMAT.md`, "Binary format"): reads the file as a
//! stream, replays it from the root with the rules core and probes table leaves through an
//! [`Oracle`], never holding the whole proof: it keeps the positions of the open line (the
//! depth-first path) and of the shared nodes still to be referred to.
//!
//! Like `check.rs`, nothing here comes from the search (`dfpn.rs`, `extract.rs`, `certify.rs`,
//! `hash.rs`, `tt.rs`, `proof.rs`, `binary.rs`): positions are compared by placement, side to
//! move and en-passant square; moves are the rules core's legal moves in UCI text order. The
//! writer (`binary.rs`) takes its format constants from here, not the other way round.

use super::Oracle;
use super::check::{Checked, Rejected};
use crate::rules::{Color, Move, Position, Square};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

/// The first bytes of a binary proof.
pub const MAGIC: &[u8; 8] = b"ATBPROOF";
/// The format version, the byte after [`MAGIC`].
pub const VERSION: u8 = 1;
/// Length of the trailer: the SHA-256 of every byte before it.
pub const TRAILER: usize = 32;
/// The largest zstd window the checker accepts (2^25 bytes): a bound on its memory.
pub const WINDOW_LOG_MAX: u32 = 25;

/// Record kinds: the low three bits of a record's tag byte.
pub(crate) const KIND_REF: u8 = 0;
pub(crate) const KIND_OR: u8 = 1;
pub(crate) const KIND_AND: u8 = 2;
pub(crate) const KIND_END: u8 = 3;
/// `KIND_TABLE + i` is a table leaf of WDL `[-2, -1, 1, 2][i]`.
pub(crate) const KIND_TABLE: u8 = 4;
/// Bit 3 of the tag: on a node, "shared" (referred to later); on a reference, "last reference".
pub(crate) const FLAG: u8 = 8;

/// The WDL of a table leaf tag (`KIND_TABLE..=KIND_TABLE + 3`).
pub(crate) fn table_wdl(kind: u8) -> i8 {
    [-2, -1, 1, 2][usize::from(kind - KIND_TABLE)]
}

/// Whether `prefix` (the first bytes of a file) starts like a binary proof.
pub fn is_binary(prefix: &[u8]) -> bool {
    prefix.starts_with(MAGIC)
}

/// The legal moves of `pos` in the order of the format: by their UCI text (byte order), so the
/// order does not depend on the move generator.
pub fn ordered_moves(pos: &Position) -> Vec<Move> {
    let mut moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
    moves.sort_unstable_by_key(uci_key);
    moves
}

/// A key whose order is the byte order of the move's UCI text (`e7e8` < `e7e8b` < `e7e8k` <
/// `e7e8n` < `e7e8q` < `e7e8r`).
fn uci_key(m: &Move) -> u32 {
    let sq = |s: Square| s.file() * 8 + s.rank();
    let promo = m
        .promotion
        .map_or(0, |r| u32::from(r.upper_char().to_ascii_lowercase() as u8));
    (sq(m.from) << 14) | (sq(m.to) << 8) | promo
}

fn reject(message: impl Into<String>) -> Rejected {
    Rejected {
        line: None,
        node: None,
        fen: None,
        message: message.into(),
    }
}

/// Reads through to `inner` and hashes every byte read.
struct Hashed<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// A binary proof that passed: its figures (as the text checker gives them) and what the
/// stream held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Streamed {
    pub checked: Checked,
    /// Shared nodes (nodes referred to later) and references to them.
    pub shared: u64,
    pub references: u64,
    /// The most shared positions kept at once (the rest of the memory is the open line).
    pub max_kept: usize,
}

/// Check a binary proof read from `input` (a file, or a `Cursor` over bytes). Table leaves are
/// probed through `oracle`. A file whose checksum does not match is rejected as corrupt (or
/// truncated), whatever else is wrong with it.
pub fn check<R: Read + Seek>(input: R, oracle: &dyn Oracle) -> Result<Checked, Rejected> {
    check_streamed(input, oracle).map(|s| s.checked)
}

/// [`check`], with what the stream held.
pub fn check_streamed<R: Read + Seek>(
    mut input: R,
    oracle: &dyn Oracle,
) -> Result<Streamed, Rejected> {
    let io_err = |e: io::Error| reject(format!("cannot read the proof: {e}"));
    let len = input.seek(SeekFrom::End(0)).map_err(io_err)?;
    input.seek(SeekFrom::Start(0)).map_err(io_err)?;
    if len < (MAGIC.len() + TRAILER) as u64 {
        return Err(reject(format!(
            "truncated: {len} bytes, less than a header and a checksum"
        )));
    }
    let mut hashed = Hashed {
        inner: BufReader::with_capacity(1 << 16, input).take(len - TRAILER as u64),
        hasher: Sha256::new(),
    };
    let result = read_proof(&mut hashed, oracle);
    // Hash whatever the reading left (all of it when the proof failed early).
    io::copy(&mut hashed, &mut io::sink()).map_err(io_err)?;
    let digest = hashed.hasher.finalize();
    let mut trailer = [0u8; TRAILER];
    hashed
        .inner
        .into_inner()
        .read_exact(&mut trailer)
        .map_err(io_err)?;
    if digest.as_slice() != trailer {
        return Err(reject(
            "checksum mismatch: the file is corrupt or truncated",
        ));
    }
    result
}

fn read_exact<R: Read>(r: &mut R, n: usize, what: &str) -> Result<Vec<u8>, Rejected> {
    let mut buf = Vec::new();
    r.take(n as u64)
        .read_to_end(&mut buf)
        .map_err(|e| reject(format!("cannot read the {what}: {e}")))?;
    if buf.len() != n {
        return Err(reject(format!("truncated in the {what}")));
    }
    Ok(buf)
}

fn read_u64<R: Read>(r: &mut R, n: usize, what: &str) -> Result<u64, Rejected> {
    let b = read_exact(r, n, what)?;
    Ok(b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
}

/// The header, then the body as a zstd frame that must end where the checksum begins.
fn read_proof<R: Read>(input: &mut R, oracle: &dyn Oracle) -> Result<Streamed, Rejected> {
    let magic = read_exact(input, MAGIC.len(), "header")?;
    if magic != MAGIC {
        return Err(reject("not a binary antitb proof (bad magic)"));
    }
    let version = read_exact(input, 1, "header")?[0];
    if version != VERSION {
        return Err(reject(format!(
            "binary proof version {version}, this antitb reads version {VERSION}"
        )));
    }
    let prover = match read_exact(input, 1, "header")?[0] {
        0 => Color::White,
        1 => Color::Black,
        b => return Err(reject(format!("prover byte {b} is neither 0 nor 1"))),
    };
    let nodes = read_u64(input, 8, "header")?;
    let fen_len = read_u64(input, 2, "header")? as usize;
    let fen = read_exact(input, fen_len, "root FEN")?;
    let root: Position = std::str::from_utf8(&fen)
        .map_err(|_| reject("the root FEN is not text"))?
        .parse()
        .map_err(|e| reject(format!("bad root FEN: {e}")))?;
    let comment_len = read_u64(input, 4, "header")?;
    // The comment is not checked, only skipped (it may be long: stream it).
    let skipped = io::copy(&mut input.take(comment_len), &mut io::sink())
        .map_err(|e| reject(format!("cannot read the comment: {e}")))?;
    if skipped != comment_len {
        return Err(reject("truncated in the comment"));
    }
    let mut decoder = zstd::stream::read::Decoder::new(input)
        .map_err(|e| reject(format!("cannot start zstd: {e}")))?
        .single_frame();
    decoder
        .window_log_max(WINDOW_LOG_MAX)
        .map_err(|e| reject(format!("cannot start zstd: {e}")))?;
    let mut body = Body {
        input: BufReader::with_capacity(1 << 16, decoder),
        offset: 0,
    };
    let checked = walk(&mut body, root, prover, nodes, oracle)?;
    if !body.at_end()? {
        return Err(reject("records after the root's last one"));
    }
    let mut rest = body.input.into_inner().finish();
    let mut one = [0u8; 1];
    match rest.read(&mut one) {
        Ok(0) => Ok(checked),
        Ok(_) => Err(reject("bytes after the compressed body")),
        Err(e) => Err(reject(format!("cannot read the proof: {e}"))),
    }
}

/// The decompressed records, with the offset reached (for messages).
struct Body<R> {
    input: R,
    offset: u64,
}

impl<R: BufRead> Body<R> {
    fn fail(&self, e: io::Error) -> Rejected {
        reject(format!(
            "body unreadable at byte {} (decompressed): {e}",
            self.offset
        ))
    }

    fn byte(&mut self) -> Result<u8, Rejected> {
        let b = match self.input.fill_buf() {
            Ok([]) => {
                return Err(reject(format!(
                    "the body ends at byte {} inside the proof",
                    self.offset
                )));
            }
            Ok(buf) => buf[0],
            Err(e) => return Err(self.fail(e)),
        };
        self.input.consume(1);
        self.offset += 1;
        Ok(b)
    }

    /// An unsigned LEB128 number of at most 32 bits.
    fn varint(&mut self) -> Result<u32, Rejected> {
        let mut v = 0u64;
        for i in 0..5 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return u32::try_from(v)
                    .map_err(|_| reject(format!("number {v} too large in the body")));
            }
        }
        Err(reject("a number of more than five bytes in the body"))
    }

    fn at_end(&mut self) -> Result<bool, Rejected> {
        match self.input.fill_buf() {
            Ok(buf) => Ok(buf.is_empty()),
            Err(e) => Err(self.fail(e)),
        }
    }
}

/// A shared node: its position (without counters: placement, side to move, en-passant
/// square), and its height once complete.
struct Shared {
    key: Position,
    node: u64,
    height: Option<u32>,
}

/// A node of the open line whose children are being read.
struct Frame {
    node: u64,
    pos: Position,
    /// The children's moves in the format's order, and the next one to read.
    moves: Vec<Move>,
    next: usize,
    shared: Option<u32>,
    height: u32,
}

struct Walker<'a> {
    prover: Color,
    oracle: &'a dyn Oracle,
    declared: u64,
    out: Checked,
    shared: HashMap<u32, Shared>,
    shared_count: u32,
    references: u64,
    max_kept: usize,
}

impl Walker<'_> {
    fn fail(&self, node: u64, pos: &Position, message: String) -> Rejected {
        Rejected {
            line: None,
            node: u32::try_from(node).ok(),
            fen: Some(pos.to_string()),
            message,
        }
    }
}

/// What one record was: a finished subtree (a leaf or a reference) of this height, or a node
/// whose children follow.
enum Read1 {
    Done(u32),
    Open(Frame),
}

/// Read and check the record of the child reached at `pos` (after `mv` from node `parent`).
fn record<R: BufRead>(
    w: &mut Walker<'_>,
    body: &mut Body<R>,
    pos: Position,
    from: Option<(u64, &Position, Move)>,
) -> Result<Read1, Rejected> {
    let tag = body.byte()?;
    let (kind, flag) = (tag & 7, tag & FLAG != 0);
    if tag & !(7 | FLAG) != 0 {
        return Err(reject(format!(
            "tag byte {tag:#04x} at byte {} has unknown bits",
            body.offset - 1
        )));
    }
    if kind == KIND_REF {
        let k = body.varint()?;
        let (parent, ppos, mv) = from.ok_or_else(|| reject("the root is a reference"))?;
        let Some(s) = w.shared.get(&k) else {
            let what = if k < w.shared_count {
                "no longer kept (its last reference came before)"
            } else {
                "not defined yet"
            };
            return Err(w.fail(
                parent,
                ppos,
                format!("{mv} refers to shared node #{k}, {what}"),
            ));
        };
        let Some(h) = s.height else {
            return Err(w.fail(
                parent,
                ppos,
                format!(
                    "{mv} refers to shared node #{k} (node {}), which is not complete: it is above it",
                    s.node
                ),
            ));
        };
        if s.key != pos.without_counters() {
            return Err(w.fail(
                parent,
                ppos,
                format!(
                    "{mv} leads to {pos}, but it refers to shared node #{k} (node {}), another position",
                    s.node
                ),
            ));
        }
        if flag {
            w.shared.remove(&k);
        }
        w.references += 1;
        return Ok(Read1::Done(h));
    }
    let node = w.out.nodes as u64;
    w.out.nodes += 1;
    if node >= w.declared {
        return Err(w.fail(
            node,
            &pos,
            format!("more nodes than the {} of the header", w.declared),
        ));
    }
    let shared = if flag {
        let k = w.shared_count;
        w.shared_count = k
            .checked_add(1)
            .ok_or_else(|| reject("too many shared nodes"))?;
        w.shared.insert(
            k,
            Shared {
                key: pos.without_counters(),
                node,
                height: None,
            },
        );
        w.max_kept = w.max_kept.max(w.shared.len());
        Some(k)
    } else {
        None
    };
    let prover_to_move = pos.turn() == w.prover;
    let side = |c: Color| if c.is_white() { "White" } else { "Black" };
    let moves = match kind {
        KIND_OR => {
            w.out.or_nodes += 1;
            if !prover_to_move {
                return Err(w.fail(
                    node,
                    &pos,
                    format!(
                        "an 'or' node, but {} (the defender) is to move",
                        side(pos.turn())
                    ),
                ));
            }
            let i = body.varint()? as usize;
            let moves = ordered_moves(&pos);
            match moves.get(i) {
                Some(m) => vec![*m],
                None => {
                    return Err(w.fail(
                        node,
                        &pos,
                        format!("move index {i}, but there are {} legal moves", moves.len()),
                    ));
                }
            }
        }
        KIND_AND => {
            w.out.and_nodes += 1;
            if prover_to_move {
                return Err(w.fail(
                    node,
                    &pos,
                    format!(
                        "an 'and' node, but {} (the prover) is to move",
                        side(pos.turn())
                    ),
                ));
            }
            let moves = ordered_moves(&pos);
            if moves.is_empty() {
                return Err(w.fail(
                    node,
                    &pos,
                    "the defender has no legal move: it has won".to_string(),
                ));
            }
            moves
        }
        KIND_END => {
            w.out.end_leaves += 1;
            if !prover_to_move {
                return Err(w.fail(
                    node,
                    &pos,
                    "an 'end' leaf, but the defender is to move".to_string(),
                ));
            }
            if !pos.legal_moves().is_empty() {
                return Err(w.fail(
                    node,
                    &pos,
                    "an 'end' leaf, but the prover has legal moves".to_string(),
                ));
            }
            Vec::new()
        }
        _ => {
            let wdl = table_wdl(kind);
            w.out.table_leaves += 1;
            if pos.us().is_empty() || pos.them().is_empty() {
                return Err(w.fail(
                    node,
                    &pos,
                    "a 'table' leaf where a side has no pieces".to_string(),
                ));
            }
            let probed = match w.oracle.wdl(&pos) {
                Ok(Some(v)) => v,
                Ok(None) => {
                    return Err(w.fail(node, &pos, "no table holds this position".to_string()));
                }
                Err(e) => return Err(w.fail(node, &pos, format!("table probe failed: {e}"))),
            };
            if probed != wdl {
                return Err(w.fail(
                    node,
                    &pos,
                    format!("the table gives WDL {probed:+}, the proof says {wdl:+}"),
                ));
            }
            if (wdl > 0) != prover_to_move {
                return Err(w.fail(
                    node,
                    &pos,
                    format!(
                        "WDL {wdl:+} with {} to move is not a win for the prover",
                        side(pos.turn())
                    ),
                ));
            }
            Vec::new()
        }
    };
    if moves.is_empty() {
        if let Some(k) = shared {
            w.shared.get_mut(&k).expect("just inserted").height = Some(0);
        }
        return Ok(Read1::Done(0));
    }
    Ok(Read1::Open(Frame {
        node,
        pos,
        moves,
        next: 0,
        shared,
        height: 0,
    }))
}

/// Read the records depth first from the root, checking each node as it comes.
fn walk<R: BufRead>(
    body: &mut Body<R>,
    root: Position,
    prover: Color,
    declared: u64,
    oracle: &dyn Oracle,
) -> Result<Streamed, Rejected> {
    let mut w = Walker {
        prover,
        oracle,
        declared,
        out: Checked {
            root,
            prover,
            nodes: 0,
            or_nodes: 0,
            and_nodes: 0,
            end_leaves: 0,
            table_leaves: 0,
            depth: 0,
        },
        shared: HashMap::new(),
        shared_count: 0,
        references: 0,
        max_kept: 0,
    };
    let mut stack: Vec<Frame> = Vec::new();
    // The height of the subtree just finished, to hand to its parent.
    let mut done = match record(&mut w, body, root, None)? {
        Read1::Done(h) => Some(h),
        Read1::Open(f) => {
            stack.push(f);
            None
        }
    };
    while let Some(top) = stack.last_mut() {
        if let Some(h) = done.take() {
            top.height = top.height.max(h + 1);
        }
        if top.next == top.moves.len() {
            let f = stack.pop().expect("the stack has a top");
            if let Some(k) = f.shared {
                w.shared
                    .get_mut(&k)
                    .expect("open shared node is kept")
                    .height = Some(f.height);
            }
            done = Some(f.height);
            continue;
        }
        let mv = top.moves[top.next];
        top.next += 1;
        let (node, pos) = (top.node, top.pos);
        let child = pos.after(&mv);
        match record(&mut w, body, child, Some((node, &pos, mv)))? {
            Read1::Done(h) => done = Some(h),
            Read1::Open(f) => stack.push(f),
        }
    }
    if (w.out.nodes as u64) != declared {
        return Err(reject(format!(
            "{} nodes, but the header says {declared}",
            w.out.nodes
        )));
    }
    w.out.depth = done.unwrap_or(0) as usize;
    Ok(Streamed {
        checked: w.out,
        shared: u64::from(w.shared_count),
        references: w.references,
        max_kept: w.max_kept,
    })
}
