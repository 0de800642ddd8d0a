//! The compatibility fixture: lila-tablebase's own answers (../shared/reference/lila, made on
//! the Syzygy tables) against `antitb serve` on antitb's tables.
//!
//! For every position whose tables are present: the same status; the same field names and JSON
//! types; the same flags, SAN, zeroing and conversion marks; the same root and per-move
//! categories; the same moves in the same order (lila sorts with an unstable sort, so moves it
//! cannot tell apart come in no particular order: order is compared as the sequence of groups
//! of moves lila's sort key cannot separate); the same DTZ values, except where a Syzygy DTZ
//! differs from the exact one by a quirk documented in SYZYGY_NOTES.md. Each such difference
//! is classified with its reason and counted, never skipped; a difference no rule explains
//! fails the test. Main lines are compared move by move; where they part, lila's move must be
//! as good as antitb's by antitb's values (lila breaks ties by its move generator's order), or
//! lila's choice must rest on a Syzygy DTZ that differs from the exact one.

use super::support::{Server, fixture_tables, needed, q};
use antitb::rules::notation::parse_uci;
use antitb::rules::{Position, Role};
use antitb::serve::query::parse_lenient_fen;
use antitb::table::Material;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

const FIXTURE: &str = "../shared/reference/lila";

struct Entry {
    fen: String,
    status: u16,
    response: Json,
}

fn load(file: &str) -> Vec<Entry> {
    let path = Path::new(FIXTURE).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Json = serde_json::from_str(l).expect("fixture line is JSON");
            Entry {
                fen: v["fen"].as_str().expect("fen").to_string(),
                status: v["status"].as_u64().expect("status") as u16,
                response: v["response"].clone(),
            }
        })
        .collect()
}

/// Counts of everything compared, and of every classified difference.
#[derive(Default)]
struct Tally {
    positions: usize,
    error_answers: usize,
    moves: usize,
    categories_equal: usize,
    dtz_equal: usize,
    dtz_diff: BTreeMap<&'static str, usize>,
    precise_null: usize,
    order_equal: usize,
    order_by_dtz_quirk: usize,
    mainlines: usize,
    mainlines_equal: usize,
    mainline_steps: usize,
    mainline_tie: usize,
    mainline_dtz_quirk: usize,
    not_compared: Vec<String>,
    examples: BTreeMap<&'static str, Vec<String>>,
}

impl Tally {
    fn diff(&mut self, kind: &'static str, example: String) {
        *self.dtz_diff.entry(kind).or_default() += 1;
        let v = self.examples.entry(kind).or_default();
        if v.len() < 6 {
            v.push(example);
        }
    }
}

/// Why a Syzygy DTZ `p` may differ from the exact DTZ `d` of `pos` (SYZYGY_NOTES.md §5 and §8),
/// or `None` if no documented quirk explains it.
fn classify(pos: &Position, p: i32, d: i32, lila_precise: bool) -> Option<&'static str> {
    let same_sign = p.signum() == d.signum() && d != 0;
    let (pa, da) = (p.unsigned_abs(), d.unsigned_abs());
    if pos.is_won_by_side_to_move() && p == 1 && d == 0 {
        return Some("terminal position: Syzygy probes DTZ 1, the exact DTZ is 0 (§8 d)");
    }
    let has_pawn_push = pos.legal_moves().iter().any(|m| m.role == Role::Pawn);
    if same_sign && d > 0 && !pos.has_capture() && has_pawn_push && (pa, da) == (2, 1)
        || same_sign && d > 0 && !pos.has_capture() && (pa, da) == (102, 101)
    {
        return Some("threat win reported as 2/102 where a pawn move wins in 1/101 (§8 d)");
    }
    if same_sign && da > 100 && !lila_precise && (pa == da || pa + 1 == da) {
        return Some("cursed win / blessed loss: Syzygy rounds it (precise_dtz null, §3.2)");
    }
    if same_sign && pa + 1 == da {
        return Some(
            "Syzygy DTZ one ply short: rounded sub-table or 1-ply search over rounded values (§5)",
        );
    }
    if same_sign && matches!(pa, 2 | 3 | 103) && pa != da {
        return Some("single-valued DTZ sub-table assumed to hold symbol 1 (§8 c)");
    }
    None
}

fn json_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// Same field names and JSON types; `dtz`, `precise_dtz` may be null on one side only where
/// the values are compared and classified separately.
fn same_shape(what: &str, lila: &Json, ours: &Json) -> Result<(), String> {
    let (Some(l), Some(o)) = (lila.as_object(), ours.as_object()) else {
        return Err(format!("{what}: not objects"));
    };
    let lk: Vec<&String> = l.keys().collect();
    let ok: Vec<&String> = o.keys().collect();
    if lk != ok {
        return Err(format!("{what}: fields {ok:?}, lila {lk:?}"));
    }
    for (k, lv) in l {
        let (lt, ot) = (json_type(lv), json_type(&o[k]));
        let nullable = matches!(k.as_str(), "dtz" | "precise_dtz");
        if lt != ot && !(nullable && (lt == "null" || ot == "null")) {
            return Err(format!("{what}.{k}: {ot}, lila {lt}"));
        }
    }
    Ok(())
}

const FLAGS: [&str; 5] = [
    "checkmate",
    "stalemate",
    "variant_win",
    "variant_loss",
    "insufficient_material",
];

fn category_rank(c: &str) -> u8 {
    match c {
        "loss" => 0,
        "unknown" => 1,
        "syzygy-loss" => 2,
        "maybe-loss" => 3,
        "blessed-loss" => 4,
        "draw" => 5,
        "cursed-win" => 6,
        "maybe-win" => 7,
        "syzygy-win" => 8,
        "win" => 9,
        other => panic!("unknown category {other}"),
    }
}

/// shakmaty's role numbers (pawn 1 … king 6), which lila's sort uses.
fn shakmaty_role(r: Role) -> u8 {
    match r {
        Role::Pawn => 1,
        Role::Knight => 2,
        Role::Bishop => 3,
        Role::Rook => 4,
        Role::Queen => 5,
        Role::King => 6,
    }
}

type Key = (
    u8,
    [bool; 3],
    [bool; 2],
    (u8, i64),
    bool,
    (bool, u8, i64),
    (u8, u8),
);

/// lila's move sort key (response.rs `MoveInfo::sort_key`), written here from the JSON fields
/// of a move, with `dtz` given separately so that lila's or antitb's value can be used.
fn lila_key(root: &Position, mv: &Json, dtz: Option<i64>) -> Key {
    let b = |k: &str| mv[k].as_bool().expect("bool field");
    let category = mv["category"].as_str().expect("category");
    let positive = matches!(category, "cursed-win" | "maybe-win" | "syzygy-win" | "win");
    let m = parse_uci(root, mv["uci"].as_str().expect("uci")).expect("legal move");
    let metric = mv["dtm"].as_i64().or(mv["dtw"].as_i64());
    let tightening = match metric {
        Some(x) if x < 0 => (0, -x),
        Some(x) if x > 0 => (2, -x),
        _ => (1, 0),
    };
    (
        category_rank(category),
        [!b("checkmate"), !b("variant_loss"), b("variant_win")],
        [!b("stalemate"), !b("insufficient_material")],
        tightening,
        b("conversion") ^ !positive,
        (
            b("zeroing") ^ !positive,
            u8::from(dtz.is_some()),
            dtz.map_or(0, |d| -d),
        ),
        (
            6 - m.capture.map_or(0, shakmaty_role),
            6 - m.promotion.map_or(0, shakmaty_role),
        ),
    )
}

/// The moves grouped into runs of equal key, each run as a sorted set of UCI strings.
fn groups(keyed: &[(Key, String)]) -> Vec<(Key, Vec<String>)> {
    let mut out: Vec<(Key, Vec<String>)> = Vec::new();
    for (k, uci) in keyed {
        match out.last_mut() {
            Some((lk, v)) if lk == k => v.push(uci.clone()),
            _ => out.push((*k, vec![uci.clone()])),
        }
    }
    for (_, v) in &mut out {
        v.sort();
    }
    out
}

/// Compare one DTZ: equal, or a classified quirk.
fn compare_dtz(
    t: &mut Tally,
    what: &str,
    pos: &Position,
    lila: &Json,
    ours: &Json,
) -> Result<bool, String> {
    let (ld, od) = (lila["dtz"].as_i64(), ours["dtz"].as_i64());
    let lila_precise = !lila["precise_dtz"].is_null();
    if ours["precise_dtz"] != ours["dtz"] {
        return Err(format!("{what}: precise_dtz differs from dtz: {ours}"));
    }
    if ld.is_some() && !lila_precise {
        t.precise_null += 1;
    }
    match (ld, od) {
        (l, o) if l == o => {
            t.dtz_equal += 1;
            Ok(true)
        }
        (Some(l), Some(o)) => match classify(pos, l as i32, o as i32, lila_precise) {
            Some(kind) => {
                t.diff(kind, format!("{what}: lila {l}, antitb {o}"));
                Ok(false)
            }
            None => Err(format!(
                "{what} ({pos}): DTZ lila {l}, antitb {o}, precise {lila_precise}: no documented quirk explains it"
            )),
        },
        (None, Some(o)) if pos.piece_count() > 4 => {
            t.diff(
                "beyond the tables: antitb's search finds the value, lila's prober does not",
                format!("{what}: antitb {o}"),
            );
            Ok(false)
        }
        (l, o) => Err(format!("{what} ({pos}): DTZ lila {l:?}, antitb {o:?}")),
    }
}

fn compare_probe(server: &Server, e: &Entry, t: &mut Tally) -> Result<(), String> {
    let ours = server.get(&format!("/antichess?fen={}", q(&e.fen)));
    if ours.status != e.status {
        return Err(format!(
            "status {}, lila {}: {}",
            ours.status,
            e.status,
            ours.text()
        ));
    }
    if e.status != 200 {
        let text = ours.text();
        if text.is_empty() || text.contains('\n') {
            return Err(format!("error body is not one line: {text:?}"));
        }
        t.error_answers += 1;
        return Ok(());
    }
    t.positions += 1;
    let (lila, ours) = (&e.response, ours.json());
    let root = parse_lenient_fen(&e.fen).map_err(|err| err.to_string())?;
    same_shape("root", lila, &ours)?;
    for f in FLAGS {
        if lila[f] != ours[f] {
            return Err(format!("root {f}: lila {}, antitb {}", lila[f], ours[f]));
        }
    }
    if lila["category"] != ours["category"] {
        return Err(format!(
            "root category: lila {}, antitb {}",
            lila["category"], ours["category"]
        ));
    }
    t.categories_equal += 1;
    compare_dtz(t, &format!("{} (root)", e.fen), &root, lila, &ours)?;
    let (lm, om) = (
        lila["moves"].as_array().expect("moves"),
        ours["moves"].as_array().expect("moves"),
    );
    if lm.len() != om.len() {
        return Err(format!("{} moves, lila {}", om.len(), lm.len()));
    }
    let by_uci: BTreeMap<&str, &Json> =
        om.iter().map(|m| (m["uci"].as_str().unwrap(), m)).collect();
    let mut lila_dtz: BTreeMap<String, Option<i64>> = BTreeMap::new();
    for l in lm {
        let uci = l["uci"].as_str().expect("uci");
        let o = by_uci
            .get(uci)
            .ok_or_else(|| format!("lila's move {uci} missing"))?;
        let what = format!("{} {uci}", e.fen);
        same_shape(&what, l, o)?;
        for f in ["san", "zeroing", "conversion", "category"]
            .iter()
            .chain(FLAGS.iter())
        {
            if l[f] != o[f] {
                return Err(format!("{what} {f}: lila {}, antitb {}", l[f], o[f]));
            }
        }
        t.moves += 1;
        t.categories_equal += 1;
        let child = root.after(&parse_uci(&root, uci).map_err(|e| e.to_string())?);
        compare_dtz(t, &what, &child, l, o)?;
        lila_dtz.insert(uci.to_string(), l["dtz"].as_i64());
    }
    // Order: lila's own list must be sorted by the key written here (which checks the key).
    // Moves with equal keys are lila's ties (its sort is unstable): antitb's order is identical
    // if it visits lila's groups of tied moves in the same sequence.
    let keyed = |list: &[Json], dtz_of: &dyn Fn(&Json) -> Option<i64>| -> Vec<(Key, String)> {
        list.iter()
            .map(|m| {
                (
                    lila_key(&root, m, dtz_of(m)),
                    m["uci"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let own = |m: &Json| m["dtz"].as_i64();
    let lk = keyed(lm, &own);
    if !lk.windows(2).all(|w| w[0].0 <= w[1].0) {
        return Err(format!(
            "{}: lila's order is not sorted by the test's key",
            e.fen
        ));
    }
    let mut group_of: BTreeMap<String, usize> = BTreeMap::new();
    for (g, (_, ucis)) in groups(&lk).iter().enumerate() {
        for u in ucis {
            group_of.insert(u.clone(), g);
        }
    }
    let follows_lila = |list: &[(Key, String)]| {
        list.windows(2)
            .all(|w| group_of[&w[0].1] <= group_of[&w[1].1])
    };
    let ok = keyed(om, &own);
    if follows_lila(&ok) {
        t.order_equal += 1;
        return Ok(());
    }
    // Otherwise antitb's order must be lila's rule on antitb's values, and lila's rule on lila's
    // DTZ values (which differ by the classified quirks above) must give lila's order.
    if !ok.windows(2).all(|w| w[0].0 <= w[1].0) {
        return Err(format!(
            "{}: antitb's order does not follow lila's rule",
            e.fen
        ));
    }
    let mut with_lila_dtz = keyed(om, &|m: &Json| lila_dtz[m["uci"].as_str().unwrap()]);
    with_lila_dtz.sort_by_key(|a| a.0);
    if follows_lila(&with_lila_dtz) {
        t.order_by_dtz_quirk += 1;
        return Ok(());
    }
    Err(format!(
        "{}: move order differs beyond DTZ quirks:\n  lila   {:?}\n  antitb {:?}",
        e.fen,
        lk.iter().map(|k| &k.1).collect::<Vec<_>>(),
        ok.iter().map(|k| &k.1).collect::<Vec<_>>()
    ))
}

fn compare_mainline(server: &Server, e: &Entry, t: &mut Tally) -> Result<(), String> {
    let ours = server.get(&format!("/antichess/mainline?fen={}", q(&e.fen)));
    if ours.status != e.status {
        return Err(format!(
            "mainline status {}, lila {}: {}",
            ours.status,
            e.status,
            ours.text()
        ));
    }
    if e.status != 200 {
        t.error_answers += 1;
        return Ok(());
    }
    t.mainlines += 1;
    let (lila, ours) = (&e.response, ours.json());
    same_shape("mainline", lila, &ours)?;
    let root = parse_lenient_fen(&e.fen).map_err(|err| err.to_string())?;
    let root_values =
        |v: &Json| serde_json::json!({"dtz": v["dtz"], "precise_dtz": v["precise_dtz"]});
    compare_dtz(
        t,
        &format!("{} (mainline root)", e.fen),
        &root,
        &root_values(lila),
        &root_values(&ours),
    )?;
    let (ll, ol) = (
        lila["mainline"].as_array().expect("mainline"),
        ours["mainline"].as_array().expect("mainline"),
    );
    let mut cur = root;
    for (i, l) in ll.iter().enumerate() {
        let Some(o) = ol.get(i) else {
            return Err(format!(
                "{}: antitb's line ends at {i}, lila's goes on",
                e.fen
            ));
        };
        same_shape("mainline step", l, o)?;
        let luci = l["uci"].as_str().expect("uci");
        if luci == o["uci"].as_str().expect("uci") {
            if l["san"] != o["san"] {
                return Err(format!(
                    "{}: step {i} SAN lila {}, antitb {}",
                    e.fen, l["san"], o["san"]
                ));
            }
            let child = cur.after(&parse_uci(&cur, luci).map_err(|e| e.to_string())?);
            compare_dtz(t, &format!("{} mainline step {i}", e.fen), &child, l, o)?;
            t.mainline_steps += 1;
            cur = child;
            continue;
        }
        // The lines part: is lila's move as good by antitb's values, or is lila's choice made
        // on a Syzygy DTZ that differs from the exact one?
        let here = server
            .get(&format!("/antichess?fen={}", q(&cur.to_string())))
            .json();
        let moves = here["moves"].as_array().expect("moves");
        let find = |uci: &str| moves.iter().find(|m| m["uci"] == uci).expect("move listed");
        let line_key = |m: &Json| {
            let d = m["dtz"].as_i64().expect("known");
            let wdl = match m["category"].as_str().unwrap() {
                "loss" => 0,
                "blessed-loss" => 1,
                "draw" => 2,
                "cursed-win" => 3,
                _ => 4,
            };
            (wdl, m["zeroing"].as_bool().unwrap() ^ (d < 0), -d)
        };
        let (lmv, omv) = (find(luci), find(o["uci"].as_str().unwrap()));
        if line_key(lmv) == line_key(omv) {
            t.mainline_tie += 1;
        } else if l["dtz"] != lmv["dtz"] || ll.iter().skip(i).any(|s| s["precise_dtz"].is_null()) {
            t.mainline_dtz_quirk += 1;
        } else {
            return Err(format!(
                "{}: step {i} lila plays {luci}, antitb {}; by antitb's values they differ",
                e.fen, o["uci"]
            ));
        }
        if lila["winner"] != ours["winner"] {
            return Err(format!(
                "{}: winner lila {}, antitb {}",
                e.fen, lila["winner"], ours["winner"]
            ));
        }
        return Ok(());
    }
    if ol.len() != ll.len() {
        return Err(format!(
            "{}: line of {} moves, lila {}",
            e.fen,
            ol.len(),
            ll.len()
        ));
    }
    if lila["winner"] != ours["winner"] {
        return Err(format!(
            "{}: winner lila {}, antitb {}",
            e.fen, lila["winner"], ours["winner"]
        ));
    }
    t.mainlines_equal += 1;
    Ok(())
}

/// The material a fixture FEN needs, if it is a position at all.
fn material(fen: &str) -> Option<Material> {
    parse_lenient_fen(fen)
        .ok()
        .map(|p| Material::of_position(&p))
}

#[test]
fn lila_fixture() {
    if !Path::new(FIXTURE).join("responses.jsonl").exists() {
        println!("SKIPPED: {FIXTURE} is missing, the lila comparison did not run");
        return;
    }
    let probes: Vec<Entry> = ["responses.jsonl", "errors.jsonl"]
        .iter()
        .flat_map(|f| load(f))
        .collect();
    let lines: Vec<Entry> = ["mainline.jsonl", "errors_mainline.jsonl"]
        .iter()
        .flat_map(|f| load(f))
        .collect();
    let need = |e: &Entry| material(&e.fen).map(|m| needed(&[m])).unwrap_or_default();
    let wanted: Vec<_> = probes.iter().chain(&lines).map(need).collect();
    let tables = fixture_tables(&wanted);
    let server = Server::start(&[&tables.dir], &[]);
    let mut t = Tally::default();
    let mut failures = Vec::new();
    for (e, is_line) in probes
        .iter()
        .map(|e| (e, false))
        .chain(lines.iter().map(|e| (e, true)))
    {
        if !need(e).iter().all(|m| tables.present.contains(m)) {
            t.not_compared.push(e.fen.clone());
            continue;
        }
        let r = if is_line {
            compare_mainline(&server, e, &mut t)
        } else {
            compare_probe(&server, e, &mut t)
        };
        if let Err(msg) = r {
            failures.push(format!("{}: {msg}", e.fen));
        }
    }
    println!(
        "lila fixture: {} positions ({} moves), {} main lines ({} equal, {} steps compared), {} error answers",
        t.positions, t.moves, t.mainlines, t.mainlines_equal, t.mainline_steps, t.error_answers
    );
    println!(
        "  categories equal: {} of {} (root and moves); DTZ equal: {}; lila without precise_dtz: {}",
        t.categories_equal,
        t.positions + t.moves,
        t.dtz_equal,
        t.precise_null
    );
    println!(
        "  move order: {} identical, {} differing only through classified DTZ differences",
        t.order_equal, t.order_by_dtz_quirk
    );
    println!(
        "  main lines parting: {} at a tie (lila breaks ties by move generation order), {} on a Syzygy DTZ quirk",
        t.mainline_tie, t.mainline_dtz_quirk
    );
    for (kind, n) in &t.dtz_diff {
        println!("  DTZ differs ({n}): {kind}; e.g.");
        for ex in &t.examples[kind] {
            println!("      {ex}");
        }
    }
    println!(
        "  not compared (tables not built here; set {}=DIR with all ≤4-piece tables): {}",
        super::support::TABLES_ENV,
        t.not_compared.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if tables.complete {
        assert!(
            t.not_compared.is_empty(),
            "complete tables, yet {:?} not compared",
            t.not_compared
        );
    } else {
        assert!(
            t.positions >= 150,
            "only {} fixture positions compared",
            t.positions
        );
    }
}
