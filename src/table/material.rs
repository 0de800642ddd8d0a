//! Material signatures: which pieces a table holds, its canonical name, and the table graph.
//!
//! A signature counts White's and Black's pieces by role. Names are written White `v` Black, each
//! side in the order K Q R B N P (`KQvRN`). The canonical orientation (SPEC.md §6) puts the side
//! with more pieces first; with equal counts, the side whose string is smaller letter by letter in
//! the order K < Q < R < B < N < P. A colour-swapped signature is the same table. A table depends
//! on the tables reached by a capture (one piece fewer, maybe with a capture-promotion) and by a
//! promotion without capture (same count, one pawn fewer). Building by piece count, then by pawn
//! count, respects every dependency.

use crate::rules::{Color, Piece, Position, Role};
use std::collections::BTreeSet;
use std::fmt;

/// The most pieces a material name may have (tables beyond that are not buildable here).
pub const MAX_PIECES: usize = 7;

/// A cheap hasher for maps keyed by materials (small fixed keys; SipHash showed in profiles).
/// A [`Material`] hashes as two words and a metric or other enum as one, one multiply each
/// (byte by byte, the 13 rounds of a `(Material, Metric)` key were 5 % of a 4-piece build).
#[derive(Default)]
pub struct MaterialHasher(u64);

impl MaterialHasher {
    #[inline]
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for MaterialHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.mix(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.mix(word);
    }

    #[inline]
    fn write_u32(&mut self, word: u32) {
        self.mix(u64::from(word));
    }

    #[inline]
    fn write_isize(&mut self, word: isize) {
        self.mix(word as u64);
    }
}

/// Piece counts by colour and role (`counts[color][role]`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Material {
    counts: [[u8; 6]; 2],
}

impl std::hash::Hash for Material {
    /// The twelve counts as two words (equal materials, equal words).
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let [w, b] = self.counts;
        let lo = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], b[0], b[1]]);
        let hi = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
        state.write_u64(lo);
        state.write_u32(hi);
    }
}

/// Why a material name was rejected.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MaterialError {
    /// No `v` separating the two sides, or more than one.
    NoSeparator(String),
    UnknownLetter(char),
    /// One side has no pieces (that side has already won: there is no table).
    EmptySide(String),
    TooManyPieces {
        name: String,
        pieces: usize,
        max: usize,
    },
}

/// One line whatever the input: the name and letter are shown with control characters escaped.
impl fmt::Display for MaterialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaterialError::NoSeparator(s) => {
                let s = s.escape_debug();
                write!(
                    f,
                    "material '{s}' needs exactly one 'v' between White's and Black's pieces (e.g. KQvR)"
                )
            }
            MaterialError::UnknownLetter(c) => {
                let c = c.escape_debug();
                write!(
                    f,
                    "unknown piece letter '{c}' in material (use K Q R B N P)"
                )
            }
            MaterialError::EmptySide(s) => {
                write!(
                    f,
                    "material '{}' has a side without pieces",
                    s.escape_debug()
                )
            }
            MaterialError::TooManyPieces { name, pieces, max } => {
                let name = name.escape_debug();
                write!(
                    f,
                    "material '{name}' has {pieces} pieces; at most {max} are supported"
                )
            }
        }
    }
}

impl std::error::Error for MaterialError {}

fn side_string(c: &[u8; 6]) -> String {
    Role::ALL
        .iter()
        .flat_map(|r| std::iter::repeat_n(r.upper_char(), c[r.index()] as usize))
        .collect()
}

/// Side strings compared letter by letter in the order K < Q < R < B < N < P.
fn side_key(c: &[u8; 6]) -> impl Iterator<Item = u8> + '_ {
    Role::ALL
        .iter()
        .flat_map(|r| std::iter::repeat_n(r.index() as u8, c[r.index()] as usize))
}

impl Material {
    /// From counts `[white, black]`, each indexed by [`Role::index`].
    pub fn from_counts(counts: [[u8; 6]; 2]) -> Material {
        Material { counts }
    }

    /// The material on a board.
    pub fn of_position(pos: &Position) -> Material {
        let mut counts = [[0u8; 6]; 2];
        for c in Color::ALL {
            for r in Role::ALL {
                counts[c.index()][r.index()] =
                    pos.board().by_piece(Piece { color: c, role: r }).count() as u8;
            }
        }
        Material { counts }
    }

    /// Parse `KQvRN` (letters in any order and case; `v` may be upper case too when unambiguous).
    pub fn parse(name: &str) -> Result<Material, MaterialError> {
        let lower = name.trim();
        let parts: Vec<&str> = lower.split(['v', 'V']).collect();
        if parts.len() != 2 {
            return Err(MaterialError::NoSeparator(name.to_string()));
        }
        let mut counts = [[0u8; 6]; 2];
        for (side, text) in parts.iter().enumerate() {
            if text.is_empty() {
                return Err(MaterialError::EmptySide(name.to_string()));
            }
            for ch in text.chars() {
                let role = Role::from_char(ch).ok_or(MaterialError::UnknownLetter(ch))?;
                counts[side][role.index()] = counts[side][role.index()].saturating_add(1);
            }
        }
        let m = Material { counts };
        if m.count() > MAX_PIECES {
            return Err(MaterialError::TooManyPieces {
                name: name.to_string(),
                pieces: m.count(),
                max: MAX_PIECES,
            });
        }
        Ok(m)
    }

    #[inline]
    pub fn count_of(&self, piece: Piece) -> u8 {
        self.counts[piece.color.index()][piece.role.index()]
    }

    pub fn side_count(&self, color: Color) -> usize {
        self.counts[color.index()].iter().map(|&c| c as usize).sum()
    }

    /// Total number of pieces.
    pub fn count(&self) -> usize {
        self.side_count(Color::White) + self.side_count(Color::Black)
    }

    pub fn pawns(&self) -> usize {
        (self.counts[0][Role::Pawn.index()] + self.counts[1][Role::Pawn.index()]) as usize
    }

    pub fn has_pawns(&self) -> bool {
        self.pawns() > 0
    }

    /// The side to move every promotion into this material hands the turn to, if there is one
    /// only: the side whose pieces are all pawns (no pawn comes from a promotion) when the
    /// other has a piece (any piece but a pawn may have been one). `None` when both sides have
    /// such a piece, or neither.
    pub fn promotions_land_on(&self) -> Option<Color> {
        let pawns_only = |c: Color| {
            self.side_count(c) == usize::from(self.counts[c.index()][Role::Pawn.index()])
        };
        match (pawns_only(Color::White), pawns_only(Color::Black)) {
            (true, false) => Some(Color::White),
            (false, true) => Some(Color::Black),
            _ => None,
        }
    }

    /// The same material with colours swapped.
    pub fn swapped(&self) -> Material {
        Material {
            counts: [self.counts[1], self.counts[0]],
        }
    }

    /// Is White the canonical first side (SPEC.md §6)?
    pub fn is_canonical(&self) -> bool {
        let (w, b) = (self.side_count(Color::White), self.side_count(Color::Black));
        w > b
            || (w == b
                && side_key(&self.counts[0])
                    .cmp(side_key(&self.counts[1]))
                    .is_le())
    }

    /// The canonical orientation of this table.
    pub fn canonical(&self) -> Material {
        if self.is_canonical() {
            *self
        } else {
            self.swapped()
        }
    }

    /// Same number of each piece for both colours (the table is its own colour swap).
    pub fn is_symmetric(&self) -> bool {
        self.counts[0] == self.counts[1]
    }

    /// Both sides have at least one piece (otherwise the game is over: no table).
    pub fn is_table(&self) -> bool {
        self.side_count(Color::White) > 0 && self.side_count(Color::Black) > 0
    }

    /// Tables (canonical) reached by one capture or one promotion, sorted and without repeats.
    pub fn dependencies(&self) -> Vec<Material> {
        let mut out = self.capture_targets();
        out.extend(self.promotion_targets());
        out.sort();
        out.dedup();
        out
    }

    /// Tables (canonical) reached by one capture, a capturing promotion included, sorted and
    /// without repeats: the tables a capture search ([`crate::table::resolve`]) from a position
    /// of this table looks up, one capture at a time.
    pub fn capture_targets(&self) -> Vec<Material> {
        let mut out = Vec::new();
        for mover in Color::ALL {
            let them = !mover;
            for victim in Role::ALL {
                if self.counts[them.index()][victim.index()] == 0 {
                    continue;
                }
                let mut after = *self;
                after.counts[them.index()][victim.index()] -= 1;
                out.push(after);
                // Capture-promotion: a pawn of the mover captures onto the last rank. Only possible
                // if the victim is not a pawn (no pawns on the last rank).
                if victim != Role::Pawn {
                    out.extend(after.promotions_of(mover));
                }
            }
        }
        Self::tables(out)
    }

    /// Tables (canonical) reached by a promotion without a capture, sorted and without repeats.
    pub fn promotion_targets(&self) -> Vec<Material> {
        Self::tables(
            Color::ALL
                .into_iter()
                .flat_map(|c| self.promotions_of(c))
                .collect(),
        )
    }

    /// This material with one pawn of `mover` promoted, to each piece a pawn promotes to
    /// (none without a pawn).
    fn promotions_of(&self, mover: Color) -> Vec<Material> {
        if self.counts[mover.index()][Role::Pawn.index()] == 0 {
            return Vec::new();
        }
        Role::PROMOTIONS
            .iter()
            .map(|promo| {
                let mut p = *self;
                p.counts[mover.index()][Role::Pawn.index()] -= 1;
                p.counts[mover.index()][promo.index()] += 1;
                p
            })
            .collect()
    }

    /// The tables among `materials`, canonical, sorted and without repeats.
    fn tables(materials: Vec<Material>) -> Vec<Material> {
        let set: BTreeSet<Material> = materials
            .into_iter()
            .filter(|m| m.is_table())
            .map(|m| m.canonical())
            .collect();
        set.into_iter().collect()
    }

    /// Every canonical table with exactly `n` pieces, in build order (pawns ascending, then name).
    pub fn all_with_pieces(n: usize) -> Vec<Material> {
        let mut out = BTreeSet::new();
        for w in 1..n {
            for wc in compositions(w) {
                for bc in compositions(n - w) {
                    out.insert(Material { counts: [wc, bc] }.canonical());
                }
            }
        }
        let mut v: Vec<Material> = out.into_iter().collect();
        v.sort_by_key(|m| (m.pawns(), m.to_string()));
        v
    }

    /// Every table needed to build `targets` (the targets included), in an order where each table
    /// comes after all its dependencies: by piece count, then pawn count, then name.
    pub fn closure(targets: &[Material]) -> Vec<Material> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Material> = targets.iter().map(|m| m.canonical()).collect();
        while let Some(m) = stack.pop() {
            if seen.insert(m) {
                stack.extend(m.dependencies());
            }
        }
        let mut v: Vec<Material> = seen.into_iter().collect();
        v.sort_by_key(|m| (m.count(), m.pawns(), m.to_string()));
        v
    }
}

/// All ways to pick `n` pieces from the six roles (counts per role).
fn compositions(n: usize) -> Vec<[u8; 6]> {
    fn rec(role: usize, left: usize, cur: &mut [u8; 6], out: &mut Vec<[u8; 6]>) {
        if role == 5 {
            cur[5] = left as u8;
            out.push(*cur);
            return;
        }
        for k in 0..=left {
            cur[role] = k as u8;
            rec(role + 1, left - k, cur, out);
        }
        cur[role] = 0;
    }
    let mut out = Vec::new();
    rec(0, n, &mut [0; 6], &mut out);
    out
}

impl fmt::Display for Material {
    /// The name in this orientation (`KQvR`); call [`Material::canonical`] first for the table name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}v{}",
            side_string(&self.counts[0]),
            side_string(&self.counts[1])
        )
    }
}

impl std::str::FromStr for Material {
    type Err = MaterialError;
    fn from_str(s: &str) -> Result<Material, MaterialError> {
        Material::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotions_land_on_the_side_every_parent_hands_the_turn_to() {
        // Every promotion of every material up to five pieces, both orientations: the side to
        // move it lands on, gathered by the material it lands in.
        let mut landed: std::collections::BTreeMap<Material, BTreeSet<Color>> = Default::default();
        let all: Vec<Material> = (2..=5)
            .flat_map(Material::all_with_pieces)
            .flat_map(|m| [m, m.swapped()])
            .collect();
        for parent in &all {
            for mover in Color::ALL {
                for target in parent.promotions_of(mover) {
                    landed.entry(target).or_default().insert(mover.other());
                }
            }
        }
        let mut one_side = 0;
        for m in &all {
            let sides = landed.get(m).cloned().unwrap_or_default();
            let only = (sides.len() == 1).then(|| *sides.first().unwrap());
            assert_eq!(m.promotions_land_on(), only, "{m}: {sides:?}");
            one_side += usize::from(only.is_some());
        }
        assert!(one_side > 100, "{one_side} materials with one landing side");
        assert_eq!(
            Material::parse("KRQvP").unwrap().promotions_land_on(),
            Some(Color::Black)
        );
    }

    #[test]
    fn table_counts_match_spec() {
        let expect = [(2, 21, 15), (3, 126, 75), (4, 567, 295), (5, 1932, 875)];
        for (n, all, pawnless) in expect {
            let v = Material::all_with_pieces(n);
            assert_eq!(v.len(), all, "{n} pieces");
            assert_eq!(
                v.iter().filter(|m| !m.has_pawns()).count(),
                pawnless,
                "{n} pieces, pawnless"
            );
        }
    }

    #[test]
    fn canonical_names() {
        for (input, canon) in [
            ("QvK", "KvQ"),
            ("kqvrn", "KQvRN"),
            ("NvBB", "BBvN"),
            ("KvK", "KvK"),
            ("PvK", "KvP"),
        ] {
            assert_eq!(
                Material::parse(input).unwrap().canonical().to_string(),
                canon
            );
        }
    }

    #[test]
    fn bad_names() {
        assert!(matches!(
            Material::parse("KQR"),
            Err(MaterialError::NoSeparator(_))
        ));
        assert!(matches!(
            Material::parse("KXvK"),
            Err(MaterialError::UnknownLetter('X'))
        ));
        assert!(matches!(
            Material::parse("KQv"),
            Err(MaterialError::EmptySide(_))
        ));
        assert!(matches!(
            Material::parse("KQRBNvKQRB"),
            Err(MaterialError::TooManyPieces { .. })
        ));
    }

    #[test]
    fn dependencies_of_kpvk() {
        let deps: Vec<String> = Material::parse("KPvK")
            .unwrap()
            .dependencies()
            .iter()
            .map(|m| m.to_string())
            .collect();
        for d in ["KvK", "KvP", "KKvK", "KQvK", "KRvK", "KBvK", "KNvK"] {
            assert!(deps.contains(&d.to_string()), "{d} in {deps:?}");
        }
    }
}
