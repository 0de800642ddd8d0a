//! A deliberately naive antichess solver: the oracle the retrograde generator is checked against.
//!
//! It shares nothing with `antitb::gen` or `antitb::table` — only the rules core (move generation)
//! is used. Every table is solved for one *exact* material (White's pieces and Black's pieces as
//! given, no colour swap, no board symmetry), over every placement of the pieces on distinct
//! squares (pawns on ranks 2–7; identical pieces in ascending square order), both sides to move,
//! no en-passant rights, halfmove clock 0.
//!
//! Values follow SPEC.md §2 (V = W(n) / D / L(n) on the combined 50-move scale) and §3 (DTW, the
//! 50-move rule ignored), computed by a plain fixed point over the explicit position graph built
//! with *forward* move generation only:
//!
//! * The positions of one material are split into groups by pawn advancement (the sum of the
//!   ranks White's pawns have advanced plus those Black's have advanced). A pawn move always
//!   raises it, a non-pawn quiet move keeps it, a capture or promotion leaves the material. Groups
//!   are solved from the most advanced down, so every zeroing move leads to a position whose value
//!   is final. Inside a group only non-zeroing moves connect positions.
//! * Within a group, rounds n = 1, 2, …: a position is decided W(w) in round n when its best move
//!   known so far is a win W(w) with w ≤ n (an undecided child could only give something worse:
//!   every L(k) is decided by the end of round k); it is decided D or L(max) as soon as every move
//!   is known and none wins. A round that decides nothing jumps to the smallest known win still
//!   waiting. Whatever is undecided at the end is a draw.
//!
//! Positions not stored in a table (en-passant rights after a double push) are valued by
//! recursing over their legal moves, which are all captures into smaller materials.

use antitb::rules::{Board, Color, Piece, Position, Role, Square};
use rayon::prelude::*;
use std::collections::HashMap;
use std::fmt;

/// The pieces of each side, each list in the order K Q R B N P.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Material {
    pub white: Vec<Role>,
    pub black: Vec<Role>,
}

impl Material {
    /// Parse `KQvR` style names: White's letters, `v`, Black's letters (K Q R B N P, any order;
    /// both sides need at least one piece).
    pub fn parse(name: &str) -> Result<Material, String> {
        let (w, b) = name
            .split_once('v')
            .ok_or_else(|| format!("material {name:?}: no 'v'"))?;
        let side = |s: &str| -> Result<Vec<Role>, String> {
            let mut roles = Vec::new();
            for c in s.chars() {
                if !c.is_ascii_uppercase() {
                    return Err(format!("material {name:?}: bad letter {c:?}"));
                }
                roles.push(
                    Role::from_char(c)
                        .ok_or_else(|| format!("material {name:?}: bad letter {c:?}"))?,
                );
            }
            if roles.is_empty() {
                return Err(format!("material {name:?}: a side has no pieces"));
            }
            roles.sort();
            Ok(roles)
        };
        Ok(Material {
            white: side(w)?,
            black: side(b)?,
        })
    }

    /// The material on a board (either side may be empty).
    pub fn of_board(board: &Board) -> Material {
        let side = |color: Color| {
            let mut roles = Vec::new();
            for role in Role::ALL {
                for _ in board.by_piece(Piece { color, role }) {
                    roles.push(role);
                }
            }
            roles
        };
        Material {
            white: side(Color::White),
            black: side(Color::Black),
        }
    }

    pub fn count(&self) -> usize {
        self.white.len() + self.black.len()
    }

    pub fn has_pawns(&self) -> bool {
        self.white.contains(&Role::Pawn) || self.black.contains(&Role::Pawn)
    }

    /// The material with colours swapped.
    pub fn swapped(&self) -> Material {
        Material {
            white: self.black.clone(),
            black: self.white.clone(),
        }
    }

    /// SPEC.md §6: more pieces first; equal counts: the smaller string (K<Q<R<B<N<P) first.
    pub fn is_canonical(&self) -> bool {
        match self.white.len().cmp(&self.black.len()) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => self.white <= self.black,
        }
    }

    pub fn canonical(&self) -> Material {
        if self.is_canonical() {
            self.clone()
        } else {
            self.swapped()
        }
    }

    /// The coloured pieces, White's first, each side in K Q R B N P order.
    pub fn pieces(&self) -> Vec<Piece> {
        let w = self.white.iter().map(|&role| Piece {
            color: Color::White,
            role,
        });
        let b = self.black.iter().map(|&role| Piece {
            color: Color::Black,
            role,
        });
        w.chain(b).collect()
    }

    /// Compact key: number of pieces per colour and role.
    fn key(&self) -> MatKey {
        let mut k = [[0u8; 6]; 2];
        for r in &self.white {
            k[0][r.index()] += 1;
        }
        for r in &self.black {
            k[1][r.index()] += 1;
        }
        k
    }

    /// Materials a single move can lead to: a capture (either colour loses one piece), a
    /// promotion, or both at once. Only those where both sides keep a piece.
    fn successors(&self) -> Vec<Material> {
        let mut out = Vec::new();
        let mut push = |white: Vec<Role>, black: Vec<Role>| {
            if !white.is_empty() && !black.is_empty() {
                let mut m = Material { white, black };
                m.white.sort();
                m.black.sort();
                if !out.contains(&m) {
                    out.push(m);
                }
            }
        };
        let sides = [
            (self.white.clone(), self.black.clone()),
            (self.black.clone(), self.white.clone()),
        ];
        for (flip, (us, them)) in sides.into_iter().enumerate() {
            let order = |a: Vec<Role>, b: Vec<Role>| if flip == 0 { (a, b) } else { (b, a) };
            // `them` loses a piece (captured by `us`).
            for i in 0..them.len() {
                let mut t = them.clone();
                t.remove(i);
                let (w, b) = order(us.clone(), t.clone());
                push(w, b);
                // ... by a pawn of `us` that promotes.
                if let Some(p) = us.iter().position(|&r| r == Role::Pawn) {
                    for promo in Role::PROMOTIONS {
                        let mut u = us.clone();
                        u[p] = promo;
                        let (w, b) = order(u, t.clone());
                        push(w, b);
                    }
                }
            }
            // A quiet promotion of a pawn of `us`.
            if let Some(p) = us.iter().position(|&r| r == Role::Pawn) {
                for promo in Role::PROMOTIONS {
                    let mut u = us.clone();
                    u[p] = promo;
                    let (w, b) = order(u, them.clone());
                    push(w, b);
                }
            }
        }
        out
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.white {
            write!(f, "{}", r.upper_char())?;
        }
        f.write_str("v")?;
        for r in &self.black {
            write!(f, "{}", r.upper_char())?;
        }
        Ok(())
    }
}

/// Every multiset of `n` roles, each sorted K..P.
fn multisets(n: usize) -> Vec<Vec<Role>> {
    fn rec(n: usize, from: usize, cur: &mut Vec<Role>, out: &mut Vec<Vec<Role>>) {
        if n == 0 {
            out.push(cur.clone());
            return;
        }
        for i in from..6 {
            cur.push(Role::ALL[i]);
            rec(n - 1, i, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    rec(n, 0, &mut Vec::new(), &mut out);
    out
}

/// Every material with `n` pieces, both sides at least one, in both colour orientations.
pub fn exact_materials(n_pieces: usize) -> Vec<Material> {
    let mut out = Vec::new();
    for nw in 1..n_pieces {
        for white in multisets(nw) {
            for black in multisets(n_pieces - nw) {
                out.push(Material {
                    white: white.clone(),
                    black,
                });
            }
        }
    }
    out.sort();
    out
}

/// The canonical materials (SPEC.md §6) with `n` pieces: 21, 126, 567 for n = 2, 3, 4.
pub fn all_materials(n_pieces: usize) -> Vec<Material> {
    exact_materials(n_pieces)
        .into_iter()
        .filter(Material::is_canonical)
        .collect()
}

type MatKey = [[u8; 6]; 2];

/// The solved tables by material. Looked up once per zeroing move, so hashed with FNV-1a
/// rather than SipHash.
type TableMap = HashMap<MatKey, Table, std::hash::BuildHasherDefault<Fnv>>;

#[derive(Default)]
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn key_of_board(board: &Board) -> MatKey {
    let mut k = [[0u8; 6]; 2];
    for (_, p) in board.pieces() {
        k[p.color.index()][p.role.index()] += 1;
    }
    k
}

/// A value on SPEC.md §2's combined scale (or a DTW): win in n, draw, loss in n plies.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum V {
    Win(u32),
    Draw,
    Loss(u32),
}

impl V {
    /// Order for the side to move: bigger is better.
    fn rank(self) -> (u8, i64) {
        match self {
            V::Win(n) => (2, -i64::from(n)),
            V::Draw => (1, 0),
            V::Loss(n) => (0, i64::from(n)),
        }
    }

    fn best(a: V, b: V) -> V {
        if b.rank() > a.rank() { b } else { a }
    }

    /// Value of a move into a child of value `self` (seen from the child's side to move), with
    /// the distance going on: L(k) → W(k+1), W(k) → L(k+1), D → D.
    fn through_move(self) -> V {
        match self {
            V::Win(k) => V::Loss(k + 1),
            V::Draw => V::Draw,
            V::Loss(k) => V::Win(k + 1),
        }
    }

    /// Value of a zeroing move into a child whose WDL (child's view) is `r` (SPEC.md §2).
    fn through_zeroing(r: i8) -> V {
        match r {
            -2 => V::Win(1),
            -1 => V::Win(101),
            0 => V::Draw,
            1 => V::Loss(101),
            2 => V::Loss(1),
            _ => unreachable!("wdl {r}"),
        }
    }

    /// WDL of a combined-scale value (SPEC.md §2).
    pub fn wdl(self) -> i8 {
        match self {
            V::Win(n) if n <= 100 => 2,
            V::Win(_) => 1,
            V::Draw => 0,
            V::Loss(n) if n >= 101 => -1,
            V::Loss(_) => -2,
        }
    }

    /// +n, 0, −n.
    pub fn signed(self) -> i32 {
        match self {
            V::Win(n) => n as i32,
            V::Draw => 0,
            V::Loss(n) => -(n as i32),
        }
    }
}

/// Packed storage: W(n) = n, L(n) = −n (n ≥ 1), D and "not yet known" are sentinels.
const DRAW: i16 = i16::MIN;
const UNKNOWN: i16 = i16::MAX;

fn pack(v: V) -> i16 {
    match v {
        V::Win(n) => i16::try_from(n)
            .ok()
            .filter(|&x| x < UNKNOWN)
            .expect("win fits in i16"),
        V::Draw => DRAW,
        V::Loss(n) => {
            assert!(n >= 1);
            -i16::try_from(n).expect("loss fits in i16")
        }
    }
}

fn unpack(x: i16) -> Option<V> {
    match x {
        UNKNOWN => None,
        DRAW => Some(V::Draw),
        n if n >= 0 => Some(V::Win(n as u32)),
        n => Some(V::Loss(u32::from(n.unsigned_abs()))),
    }
}

/// One solved exact material. Slot = (Σ sq_i · 64^i) · 2 + turn, pieces in [`Material::pieces`]
/// order, identical pieces in ascending square order. Invalid slots stay UNKNOWN.
struct Table {
    pieces: Vec<Piece>,
    dtz: Vec<i16>,
    dtw: Vec<i16>,
}

impl Table {
    fn new(material: &Material) -> Table {
        let pieces = material.pieces();
        let slots = 2 * 64usize.pow(pieces.len() as u32);
        Table {
            pieces,
            dtz: vec![UNKNOWN; slots],
            dtw: vec![UNKNOWN; slots],
        }
    }

    /// Slot of a position of this material.
    fn slot(&self, board: &Board, turn: Color) -> usize {
        let mut idx = 0usize;
        let mut mul = 1usize;
        let mut i = 0;
        while i < self.pieces.len() {
            let p = self.pieces[i];
            for sq in board.by_piece(p) {
                debug_assert_eq!(self.pieces[i], p);
                idx += sq.index() * mul;
                mul *= 64;
                i += 1;
            }
        }
        idx * 2 + turn.index()
    }

    /// The position in a slot, if the slot is a valid placement.
    fn position(&self, slot: usize) -> Option<Position> {
        let turn = Color::ALL[slot % 2];
        let mut idx = slot / 2;
        let mut board = Board::empty();
        let mut prev: Option<(Piece, usize)> = None;
        for &p in &self.pieces {
            let sq = idx % 64;
            idx /= 64;
            let square = Square::new(sq as u32);
            if board.occupied().contains(square) {
                return None;
            }
            if p.role == Role::Pawn && !(1..=6).contains(&square.rank()) {
                return None;
            }
            if let Some((q, qsq)) = prev
                && q == p
                && qsq >= sq
            {
                return None;
            }
            board.put(square, p);
            prev = Some((p, sq));
        }
        Some(Position::from_board(board, turn))
    }
}

/// Pawn advancement: a pawn move raises it, other quiet moves keep it.
fn advancement(board: &Board) -> u32 {
    let w: u32 = board
        .by_piece(Piece {
            color: Color::White,
            role: Role::Pawn,
        })
        .map(|s| s.rank())
        .sum();
    let b: u32 = board
        .by_piece(Piece {
            color: Color::Black,
            role: Role::Pawn,
        })
        .map(|s| 7 - s.rank())
        .sum();
    w + b
}

/// A move in the explicit graph of one group: either a non-zeroing move to another position of
/// the same group (`child`, a local index), or a zeroing move (`child == EXTERNAL`) whose value
/// for the mover is already known: `dtz` on the combined scale, `dtw` for DTW (packed).
#[derive(Copy, Clone)]
struct Edge {
    child: u32,
    dtz: i16,
    dtw: i16,
}

const EXTERNAL: u32 = u32::MAX;

/// The moves of every position of a group, forward (`start[i]..start[i + 1]` in `edges`), and
/// the same internal edges inverted (`pred_start`, `preds`) so that a decision can mark the
/// positions that move into it.
struct Graph {
    start: Vec<u32>,
    edges: Vec<Edge>,
    pred_start: Vec<u32>,
    preds: Vec<u32>,
}

impl Graph {
    /// From per-chunk move lists: for each position its number of moves, and all moves in order.
    fn from_chunks(chunks: Vec<(Vec<u32>, Vec<Edge>)>) -> Graph {
        let n: usize = chunks.iter().map(|c| c.0.len()).sum();
        let mut start = Vec::with_capacity(n + 1);
        let mut edges = Vec::with_capacity(chunks.iter().map(|c| c.1.len()).sum());
        start.push(0u32);
        for (counts, e) in chunks {
            for c in counts {
                let last = *start.last().expect("non-empty");
                start.push(last + c);
            }
            edges.extend(e);
        }
        assert_eq!(*start.last().expect("non-empty") as usize, edges.len());
        let mut in_degree = vec![0u32; n];
        for e in &edges {
            if e.child != EXTERNAL {
                in_degree[e.child as usize] += 1;
            }
        }
        let mut pred_start = vec![0u32; n + 1];
        for i in 0..n {
            pred_start[i + 1] = pred_start[i] + in_degree[i];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![0u32; pred_start[n] as usize];
        for i in 0..n {
            for e in &edges[start[i] as usize..start[i + 1] as usize] {
                if e.child != EXTERNAL {
                    let c = e.child as usize;
                    preds[fill[c] as usize] = i as u32;
                    fill[c] += 1;
                }
            }
        }
        Graph {
            start,
            edges,
            pred_start,
            preds,
        }
    }

    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn moves(&self, i: usize) -> &[Edge] {
        &self.edges[self.start[i] as usize..self.start[i + 1] as usize]
    }

    fn preds(&self, i: usize) -> &[u32] {
        &self.preds[self.pred_start[i] as usize..self.pred_start[i + 1] as usize]
    }
}

/// The full value of a position: combined-scale V and DTW.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Naive {
    pub v: V,
    pub dtw: V,
}

impl Naive {
    pub fn wdl(&self) -> i8 {
        self.v.wdl()
    }

    pub fn dtz(&self) -> i32 {
        self.v.signed()
    }

    pub fn dtw(&self) -> Option<i32> {
        match self.dtw {
            V::Draw => None,
            v => Some(v.signed()),
        }
    }
}

/// Every solved exact material.
pub struct NaiveTables {
    max_pieces: usize,
    tables: TableMap,
}

/// Solve every material (both colour orientations) with 2..=`max_pieces` pieces.
pub fn solve_all(max_pieces: usize) -> NaiveTables {
    let mut t = NaiveTables {
        max_pieces,
        tables: TableMap::default(),
    };
    for n in 2..=max_pieces {
        for m in exact_materials(n) {
            t.ensure(&m);
        }
    }
    t
}

impl NaiveTables {
    /// Solve only `materials` (and what they need).
    pub fn solve(materials: &[Material]) -> NaiveTables {
        let max_pieces = materials.iter().map(Material::count).max().unwrap_or(0);
        let mut t = NaiveTables {
            max_pieces,
            tables: TableMap::default(),
        };
        for m in materials {
            t.ensure(m);
        }
        t
    }

    pub fn max_pieces(&self) -> usize {
        self.max_pieces
    }

    pub fn is_solved(&self, material: &Material) -> bool {
        self.tables.contains_key(&material.key())
    }

    /// `(wdl, dtz, dtw)` of any position whose material is solved (or resolvable through
    /// captures into solved materials); en-passant rights are honoured, the halfmove clock is
    /// ignored (taken as 0). Terminal: `(2, 0, Some(0))`. DTW `None` = draw.
    pub fn value(&self, pos: &Position) -> Option<(i8, i32, Option<i32>)> {
        let n = self.eval(pos)?;
        Some((n.wdl(), n.dtz(), n.dtw()))
    }

    /// The full value, as [`NaiveTables::value`].
    pub fn eval(&self, pos: &Position) -> Option<Naive> {
        if pos.us().is_empty() {
            return Some(Naive {
                v: V::Win(0),
                dtw: V::Win(0),
            });
        }
        if pos.ep_square().is_none()
            && let Some(t) = self.tables.get(&key_of_board(pos.board()))
        {
            let slot = t.slot(pos.board(), pos.turn());
            let v = unpack(t.dtz[slot])
                .unwrap_or_else(|| panic!("naive: value of {pos} not known yet"));
            let dtw = unpack(t.dtw[slot]).expect("dtw known with dtz");
            return Some(Naive { v, dtw });
        }
        // Not stored: only positions whose moves are all captures can be resolved.
        if !pos.has_capture() {
            return None;
        }
        self.eval_from_moves(pos)
    }

    /// The value recomputed from the legal moves and the children's values (the position itself
    /// is not looked up): SPEC.md §2 and §3 applied once. Equal to [`NaiveTables::eval`] for
    /// every position exactly when the tables are a fixed point of the recurrence.
    pub fn eval_from_moves(&self, pos: &Position) -> Option<Naive> {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Some(Naive {
                v: V::Win(0),
                dtw: V::Win(0),
            });
        }
        let mut best: Option<Naive> = None;
        for m in &moves {
            let child = self.eval(&pos.after(m))?;
            let v = if m.is_zeroing() {
                V::through_zeroing(child.v.wdl())
            } else {
                child.v.through_move()
            };
            let dtw = child.dtw.through_move();
            best = Some(match best {
                None => Naive { v, dtw },
                Some(b) => Naive {
                    v: V::best(b.v, v),
                    dtw: V::best(b.dtw, dtw),
                },
            });
        }
        best
    }

    /// Solve `material` after everything it leads to.
    fn ensure(&mut self, material: &Material) {
        if self.is_solved(material) || material.white.is_empty() || material.black.is_empty() {
            return;
        }
        for s in material.successors() {
            self.ensure(&s);
        }
        self.max_pieces = self.max_pieces.max(material.count());
        self.solve_material(material);
    }

    fn solve_material(&mut self, material: &Material) {
        let key = material.key();
        self.tables.insert(key, Table::new(material));
        // Valid slots grouped by pawn advancement.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        {
            let table = &self.tables[&key];
            for slot in 0..table.dtz.len() {
                if let Some(pos) = table.position(slot) {
                    let a = advancement(pos.board()) as usize;
                    if groups.len() <= a {
                        groups.resize_with(a + 1, Vec::new);
                    }
                    groups[a].push(slot);
                }
            }
        }
        for group in groups.iter().rev().filter(|g| !g.is_empty()) {
            let (dtz, dtw) = self.solve_group(&key, group);
            let table = self.tables.get_mut(&key).expect("table inserted");
            for (i, &slot) in group.iter().enumerate() {
                table.dtz[slot] = dtz[i];
                table.dtw[slot] = dtw[i];
            }
        }
    }

    /// Build the explicit graph of one group and solve it twice (combined scale, DTW).
    fn solve_group(&self, key: &MatKey, group: &[usize]) -> (Vec<i16>, Vec<i16>) {
        let table = &self.tables[key];
        let mut local = vec![u32::MAX; table.dtz.len()];
        for (i, &s) in group.iter().enumerate() {
            local[s] = i as u32;
        }
        let chunks: Vec<(Vec<u32>, Vec<Edge>)> = group
            .par_chunks(1024)
            .map(|chunk| {
                let mut counts = Vec::with_capacity(chunk.len());
                let mut edges = Vec::new();
                for &slot in chunk {
                    let pos = table.position(slot).expect("valid slot");
                    let moves = pos.legal_moves();
                    counts.push(moves.len() as u32);
                    for m in &moves {
                        let child = pos.after(m);
                        if m.is_zeroing() {
                            let c = self
                                .eval(&child)
                                .expect("child of a zeroing move is resolvable");
                            let dtz = pack(V::through_zeroing(c.v.wdl()));
                            let dtw = pack(c.dtw.through_move());
                            edges.push(Edge {
                                child: EXTERNAL,
                                dtz,
                                dtw,
                            });
                        } else {
                            let c = local[table.slot(child.board(), child.turn())];
                            assert_ne!(c, u32::MAX, "non-zeroing move leaves the group");
                            edges.push(Edge {
                                child: c,
                                dtz: 0,
                                dtw: 0,
                            });
                        }
                    }
                }
                (counts, edges)
            })
            .collect();
        let graph = Graph::from_chunks(chunks);
        rayon::join(
            || fixed_point(&graph, |e| e.dtz),
            || fixed_point(&graph, |e| e.dtw),
        )
    }
}

/// The value (packed) of every node of an explicit move graph (see the module doc). A node
/// without moves is terminal, W(0); `external` gives the packed value of a zeroing move for its
/// mover.
///
/// Round n examines the positions that could change: those that got a newly known win (a child
/// decided as a loss) or whose last move became known since they were last examined, and those
/// whose best known win is W(n). Any other position would give the same answer as the last
/// time it was examined (no decision), so skipping it changes nothing: the result is that of
/// scanning every undecided position in every round. An examination always rescans all moves.
fn fixed_point(graph: &Graph, external: impl Fn(&Edge) -> i16) -> Vec<i16> {
    let len = graph.len();
    let mut val: Vec<i16> = vec![UNKNOWN; len];
    let mut dirty: Vec<usize> = Vec::new();
    for (i, v) in val.iter_mut().enumerate() {
        if graph.moves(i).is_empty() {
            *v = pack(V::Win(0));
        } else {
            dirty.push(i);
        }
    }
    let mut is_dirty = vec![false; len];
    // Number of moves into positions of the group that are still undecided (terminal positions
    // are decided already).
    let mut unknown: Vec<u32> = (0..len)
        .map(|i| {
            graph
                .moves(i)
                .iter()
                .filter(|e| e.child != EXTERNAL && val[e.child as usize] == UNKNOWN)
                .count() as u32
        })
        .collect();
    // Positions to look at again in round w (their best known win is W(w)).
    let mut wake: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    let mut n: u32 = 1;
    loop {
        let mut todo = std::mem::take(&mut dirty);
        for &i in &todo {
            is_dirty[i] = false;
        }
        todo.extend(wake.remove(&n).unwrap_or_default());
        // Any order gives the same result; index order reads the edges sequentially.
        todo.sort_unstable();
        todo.dedup();
        let mut decided_any = false;
        for i in todo {
            if val[i] != UNKNOWN {
                continue;
            }
            let mut best_win: Option<u32> = None;
            let mut all_known = true;
            let mut best_known: Option<V> = None;
            for e in graph.moves(i) {
                let v = if e.child == EXTERNAL {
                    unpack(external(e))
                } else {
                    unpack(val[e.child as usize]).map(V::through_move)
                };
                match v {
                    None => all_known = false,
                    Some(v) => {
                        if let V::Win(k) = v {
                            best_win = Some(best_win.map_or(k, |b| b.min(k)));
                        }
                        best_known = Some(best_known.map_or(v, |b| V::best(b, v)));
                    }
                }
            }
            let decision = match best_win {
                Some(w) if w <= n => Some(V::Win(w)),
                Some(w) => {
                    wake.entry(w).or_default().push(i);
                    None
                }
                None if all_known => best_known,
                None => None,
            };
            if let Some(v) = decision {
                val[i] = pack(v);
                decided_any = true;
                let gives_win = matches!(v, V::Loss(_));
                for &p in graph.preds(i) {
                    let p = p as usize;
                    unknown[p] -= 1;
                    if val[p] == UNKNOWN && !is_dirty[p] && (gives_win || unknown[p] == 0) {
                        is_dirty[p] = true;
                        dirty.push(p);
                    }
                }
            }
        }
        if decided_any {
            n += 1;
        } else {
            // Nothing changed: nothing can be decided before the next waiting win.
            debug_assert!(dirty.is_empty());
            match wake.keys().next() {
                Some(&w) => n = w,
                None => break,
            }
        }
    }
    // What is left is a draw: check that no undecided position has a known winning move or
    // only known moves (the scheduling above missed nothing).
    for i in (0..len).filter(|&i| val[i] == UNKNOWN) {
        let open = graph.moves(i).iter().all(|e| match e.child {
            EXTERNAL => !matches!(unpack(external(e)), Some(V::Win(_))),
            c => match unpack(val[c as usize]) {
                None => true,
                Some(v) => !matches!(v.through_move(), V::Win(_)),
            },
        }) && graph
            .moves(i)
            .iter()
            .any(|e| e.child != EXTERNAL && val[e.child as usize] == UNKNOWN);
        assert!(
            open,
            "naive fixed point: position {i} of its group left undecided"
        );
    }
    val.into_iter()
        .map(|v| if v == UNKNOWN { DRAW } else { v })
        .collect()
}
