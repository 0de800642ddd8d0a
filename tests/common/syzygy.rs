//! The independent reference: de Man's Syzygy antichess tables (≤ 4 pieces) read with
//! shakmaty-syzygy, and the fair way to compare a DTZ with theirs (reference/SYZYGY_NOTES.md
//! §5 and §8).
//!
//! WDL must match exactly. A Syzygy DTZ `p` is compared with the exact DTZ `d` (SPEC.md §2) by
//! [`classify_dtz`]: equal, rounded down by one ply, or one of the documented special cases;
//! anything else is a [`DtzClass::Mismatch`].
//!
//! The tables live in `../shared/reference/syzygy` next to the crate (override with the
//! environment variable `ANTITB_SYZYGY_DIR`). Where they are absent, [`Reference::open`] returns
//! `None` and tests should print [`SKIPPED`] and pass.

use antitb::rules::{Color, Piece, Position, Role};
use shakmaty::CastlingMode;
use shakmaty::fen::Fen;
use shakmaty::variant::Antichess;
use shakmaty_syzygy::Tablebase;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

/// What a test prints when the reference tables are not there.
pub const SKIPPED: &str = "skipped: reference tables not found";

/// Directory of the reference tables, if it exists.
pub fn reference_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ANTITB_SYZYGY_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/syzygy"),
    };
    dir.is_dir().then_some(dir)
}

/// A Syzygy probe result: WDL (−2..=2, side to move's view) and DTZ in plies as shakmaty-syzygy
/// reports it (`precise` = not flagged as possibly rounded).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Probe {
    pub wdl: i8,
    pub dtz: i32,
    pub precise: bool,
}

/// The opened reference tables.
pub struct Reference {
    tb: Tablebase<Antichess>,
    tables: usize,
}

impl Reference {
    /// Open the reference directory; `None` if it does not exist or holds no table.
    pub fn open() -> Option<Reference> {
        let dir = reference_dir()?;
        let mut tb = Tablebase::<Antichess>::new();
        let tables = tb.add_directory(&dir).ok()?;
        (tables > 0).then_some(Reference { tb, tables })
    }

    /// Number of table files added (WDL and DTZ counted separately).
    pub fn files(&self) -> usize {
        self.tables
    }

    /// Probe one of our positions (converted through its FEN; halfmove clock taken as 0).
    pub fn probe(&self, pos: &Position) -> Result<Probe, String> {
        let mut p = *pos;
        p.set_halfmoves(0);
        self.probe_fen(&p.to_string())
    }

    /// What Syzygy's DTZ probe gives for a position whose side to move is *not* stored in the
    /// DTZ file: a 1-ply search over the non-zeroing moves on the probed values of the children
    /// (SYZYGY_NOTES.md §4, last lines; shakmaty-syzygy `WdlEntry::dtz`). `wdl` is the position's
    /// WDL. Only meaningful for a decisive position without captures, threats or a winning pawn
    /// move.
    pub fn one_ply_dtz(&self, pos: &Position, wdl: i8) -> Result<i32, String> {
        let z = match wdl {
            2 => 1,
            1 => 101,
            -1 => -101,
            -2 => -1,
            _ => return Ok(0),
        };
        let mut best: Option<i32> = if wdl > 0 { None } else { Some(z) };
        for m in pos.legal_moves().iter().filter(|m| !m.is_zeroing()) {
            let v = -self.probe(&pos.after(m))?.dtz;
            if v.signum() == i32::from(wdl.signum()) {
                let v = v + v.signum();
                best = Some(best.map_or(v, |b| b.min(v)));
            }
        }
        best.ok_or_else(|| format!("{pos}: no winning non-zeroing move"))
    }

    /// Probe a FEN.
    pub fn probe_fen(&self, fen: &str) -> Result<Probe, String> {
        let setup = Fen::from_ascii(fen.as_bytes()).map_err(|e| format!("{fen}: {e}"))?;
        let pos: Antichess = setup
            .into_position(CastlingMode::Standard)
            .map_err(|e| format!("{fen}: {e}"))?;
        let wdl = self
            .tb
            .probe_wdl_after_zeroing(&pos)
            .map_err(|e| format!("{fen}: wdl: {e}"))?;
        let dtz = self
            .tb
            .probe_dtz(&pos)
            .map_err(|e| format!("{fen}: dtz: {e}"))?;
        Ok(Probe {
            wdl: wdl as i8,
            dtz: dtz.ignore_rounding().0,
            precise: dtz.precise().is_some(),
        })
    }
}

/// How a Syzygy DTZ `p` relates to the exact DTZ `d` (SYZYGY_NOTES.md §5, §8).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum DtzClass {
    /// p = d.
    Exact,
    /// Same sign, |p| = |d| − 1 (a sloppy sub-table's bucket, a cursed value — always rounded —,
    /// or the 1-ply search over such values).
    RoundedByOne,
    /// Terminal position (d = 0, a win): Syzygy says 1.
    Terminal,
    /// Threat win: Syzygy says 2 / 102 where the exact value is 1 / 101 (a winning pawn move or
    /// a capture-forcing threat also exists), and the position really has a threat move.
    Threat,
    /// Side not stored in the DTZ file: p is exactly Syzygy's 1-ply search over its own probes of
    /// the children (which are compared in their own right), so the difference is theirs.
    /// Only [`Reference::classify`] gives this class.
    Inherited,
    /// Single-valued sub-table (quirk c): the file stores no value and probers assume one, so
    /// Syzygy says ±2 / ±3 (±103 cursed) whatever the stored value was. [`DtzTally`] checks that
    /// all such positions of one sub-table share one exact value.
    SingleValued,
    /// Anything else: a disagreement to investigate.
    Mismatch,
}

impl DtzClass {
    pub const ALL: [DtzClass; 7] = [
        DtzClass::Exact,
        DtzClass::RoundedByOne,
        DtzClass::Terminal,
        DtzClass::Threat,
        DtzClass::Inherited,
        DtzClass::SingleValued,
        DtzClass::Mismatch,
    ];
}

impl fmt::Display for DtzClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Does the side to move have no capture but a non-pawn quiet move after which the opponent
/// must capture (SYZYGY_NOTES.md §2, "threat positions")?
pub fn has_threat_move(pos: &Position) -> bool {
    !pos.has_capture()
        && pos
            .legal_moves()
            .iter()
            .any(|m| m.role != Role::Pawn && pos.after(m).has_capture())
}

/// Compare the exact DTZ `exact_dtz` (SPEC.md §2; `wdl` its WDL) with the Syzygy DTZ
/// `syzygy_dtz` of the same position `pos`, from the numbers alone. WDL is assumed to match
/// already. Never gives [`DtzClass::Inherited`]; see [`Reference::classify`].
///
/// Kept apart from `antitb::verify::syzygy::classify_dtz` (the product's `verify --syzygy`)
/// on purpose: the oracle that judges the generator shares no code with the product, so one
/// mistake cannot excuse the same disagreement in both. (It is also stricter: it separates
/// [`DtzClass::Inherited`] values and checks that single-valued sub-tables really are.)
pub fn classify_dtz(exact_dtz: i32, wdl: i8, syzygy_dtz: i32, pos: &Position) -> DtzClass {
    let (d, p) = (exact_dtz, syzygy_dtz);
    if p == d {
        return DtzClass::Exact;
    }
    if d == 0 {
        return if wdl == 2 && p == 1 {
            DtzClass::Terminal
        } else {
            DtzClass::Mismatch
        };
    }
    if p.signum() != d.signum() {
        return DtzClass::Mismatch;
    }
    if ((d == 1 && p == 2) || (d == 101 && p == 102)) && has_threat_move(pos) {
        return DtzClass::Threat;
    }
    let (ad, ap) = (d.abs(), p.abs());
    if ap == ad - 1 {
        return DtzClass::RoundedByOne;
    }
    let single = if ad <= 100 {
        ap == 2 || ap == 3
    } else {
        ap == 103
    };
    if single {
        return DtzClass::SingleValued;
    }
    DtzClass::Mismatch
}

impl Reference {
    /// [`classify_dtz`], but a position that it calls [`DtzClass::SingleValued`] or
    /// [`DtzClass::Mismatch`] is [`DtzClass::Inherited`] when Syzygy's value is exactly its
    /// 1-ply search over its children (decisive positions without a capture only).
    pub fn classify(
        &self,
        exact_dtz: i32,
        wdl: i8,
        syzygy_dtz: i32,
        pos: &Position,
    ) -> Result<DtzClass, String> {
        let class = classify_dtz(exact_dtz, wdl, syzygy_dtz, pos);
        if matches!(class, DtzClass::SingleValued | DtzClass::Mismatch)
            && wdl != 0
            && exact_dtz.signum() == syzygy_dtz.signum()
            && !pos.has_capture()
            && self.one_ply_dtz(pos, wdl)? == syzygy_dtz
        {
            return Ok(DtzClass::Inherited);
        }
        Ok(class)
    }
}

/// Which Syzygy sub-table a position's DTZ is read from, as far as it matters here: material,
/// side to move, WDL, and the files of the pawns folded to a–d (a finer split than the
/// reference's per-leading-pawn-file sub-tables).
fn sub_table_key(pos: &Position, wdl: i8) -> String {
    let board = pos.board();
    let mut key = String::new();
    for color in [Color::White, Color::Black] {
        for role in Role::ALL {
            for _ in board.by_piece(Piece { color, role }) {
                key.push(role.upper_char());
            }
        }
        if color == Color::White {
            key.push('v');
        }
    }
    key.push_str(&format!(" {} wdl {wdl:+} pawn files", pos.turn().char()));
    for color in [Color::White, Color::Black] {
        for sq in board.by_piece(Piece {
            color,
            role: Role::Pawn,
        }) {
            let f = sq.file().min(7 - sq.file());
            key.push((b'a' + f as u8) as char);
        }
    }
    key
}

/// Tally of [`DtzClass`]es, with a few examples of each non-exact class and, for the
/// single-valued sub-tables, the (exact, Syzygy) pairs seen in each.
#[derive(Default)]
pub struct DtzTally {
    pub counts: BTreeMap<DtzClass, u64>,
    pub examples: BTreeMap<DtzClass, Vec<String>>,
    pub single_valued: BTreeMap<String, BTreeSet<(i32, i32)>>,
}

impl DtzTally {
    /// Record the class of one position (`exact` and `syzygy` its DTZs, `wdl` its WDL).
    pub fn add(&mut self, class: DtzClass, pos: &Position, wdl: i8, exact: i32, syzygy: i32) {
        *self.counts.entry(class).or_default() += 1;
        if class != DtzClass::Exact {
            let ex = self.examples.entry(class).or_default();
            if ex.len() < 3 {
                ex.push(format!("{pos}: exact {exact}, syzygy {syzygy}"));
            }
        }
        if class == DtzClass::SingleValued {
            self.single_valued
                .entry(sub_table_key(pos, wdl))
                .or_default()
                .insert((exact, syzygy));
        }
    }

    pub fn count(&self, class: DtzClass) -> u64 {
        self.counts.get(&class).copied().unwrap_or(0)
    }

    pub fn merge(&mut self, other: DtzTally) {
        for (c, n) in other.counts {
            *self.counts.entry(c).or_default() += n;
        }
        for (c, ex) in other.examples {
            let mine = self.examples.entry(c).or_default();
            for e in ex {
                if mine.len() < 3 {
                    mine.push(e);
                }
            }
        }
        for (k, v) in other.single_valued {
            self.single_valued.entry(k).or_default().extend(v);
        }
    }

    /// Single-valued groups that are not single-valued: more than one (exact, Syzygy) pair in
    /// one sub-table. Empty when all is well.
    pub fn single_valued_violations(&self) -> Vec<String> {
        self.single_valued
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(k, v)| format!("{k}: {v:?}"))
            .collect()
    }

    /// Classes that are not acceptable: the number of [`DtzClass::Mismatch`]es plus
    /// single-valued violations.
    pub fn failures(&self) -> u64 {
        self.count(DtzClass::Mismatch) + self.single_valued_violations().len() as u64
    }
}

impl fmt::Display for DtzTally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in DtzClass::ALL {
            writeln!(f, "  {:<13} {}", c.to_string(), self.count(c))?;
        }
        for (c, ex) in &self.examples {
            for e in ex {
                writeln!(f, "  e.g. {c}: {e}")?;
            }
        }
        Ok(())
    }
}
