//! `antitb probe`: who wins, WDL, DTZ, DTW, and every legal move ranked.

use antitb::probe::{RankBy, RankedMove, Tablebase};
use antitb::rules::Color;
use antitb::rules::notation::san;
use antitb::table::{Dtw, Wdl};
use clap::Args;
use serde_json::json;
use std::io::BufRead;
use std::path::PathBuf;

#[derive(Args)]
pub struct ProbeArgs {
    /// Positions in FEN; '-' reads one FEN per line from standard input
    #[arg(required = true)]
    fens: Vec<String>,
    /// Table directory (repeatable)
    #[arg(long, default_value = "tables")]
    tables: Vec<PathBuf>,
    /// One JSON object per position
    #[arg(long)]
    json: bool,
    /// Print an optimal line to the end of the game
    #[arg(long)]
    line: bool,
    /// Rank moves by DTZ (default) or DTW
    #[arg(long, default_value = "dtz", value_parser = rank_parser())]
    by: RankBy,
}

/// `--by`: `dtz` or `dtw` (listed in the help).
fn rank_parser() -> impl clap::builder::TypedValueParser<Value = RankBy> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["dtz", "dtw"])
        .map(|s| s.parse::<RankBy>().expect("one of the possible values"))
}

fn category(wdl: Wdl) -> &'static str {
    match wdl {
        Wdl::Win => "win",
        Wdl::CursedWin => "cursed-win",
        Wdl::Draw => "draw",
        Wdl::BlessedLoss => "blessed-loss",
        Wdl::Loss => "loss",
    }
}

fn signed_or_null(v: Option<Dtw>) -> serde_json::Value {
    match v {
        Some(v) if !v.value().is_draw() => json!(v.signed()),
        _ => serde_json::Value::Null,
    }
}

fn color_name(c: Color) -> &'static str {
    if c.is_white() { "White" } else { "Black" }
}

pub fn run(args: ProbeArgs) -> Result<(), String> {
    let tb = Tablebase::open(&args.tables).map_err(|e| e.to_string())?;
    let mut failed = false;
    let mut fens = args.fens.clone();
    if fens.iter().any(|f| f == "-") {
        fens.retain(|f| f != "-");
        for line in std::io::stdin().lock().lines() {
            let line = line.map_err(|e| format!("reading standard input: {e}"))?;
            if !line.trim().is_empty() {
                fens.push(line.trim().to_string());
            }
        }
    }
    for fen in &fens {
        if let Err(e) = probe_one(&tb, fen, &args) {
            failed = true;
            if args.json {
                println!("{}", json!({ "fen": fen, "error": e }));
            } else {
                eprintln!("antitb: error: {e}");
            }
        }
    }
    if failed {
        Err("some positions could not be probed".to_string())
    } else {
        Ok(())
    }
}

fn probe_one(tb: &Tablebase, fen: &str, args: &ProbeArgs) -> Result<(), String> {
    let pos = super::parse_position(fen)?;
    let game_over = pos.us().is_empty() || pos.legal_moves().is_empty();
    let p = tb.probe(&pos).map_err(|e| e.to_string())?;
    let moves = if game_over {
        Vec::new()
    } else {
        tb.rank_moves(&pos, args.by).map_err(|e| e.to_string())?
    };
    let line = if args.line && !game_over {
        tb.best_line(&pos, args.by, 1000)
            .map_err(|e| e.to_string())?
    } else {
        Vec::new()
    };
    if args.json {
        let mv = |r: &RankedMove| {
            json!({
                "uci": r.mv.uci(),
                "san": san(&pos, &r.mv),
                "wdl": r.dtz.wdl().to_i8(),
                "category": category(r.dtz.wdl()),
                "dtz": r.dtz.signed(),
                "dtw": signed_or_null(r.dtw),
                "zeroing": r.mv.is_zeroing(),
            })
        };
        let mut obj = json!({
            "fen": pos.to_string(),
            "wdl": p.wdl.to_i8(),
            "category": category(p.wdl),
            "dtz": p.dtz.signed(),
            "dtw": signed_or_null(p.dtw),
            "game_over": game_over,
            "moves": moves.iter().map(mv).collect::<Vec<_>>(),
        });
        if args.line {
            obj["line"] = json!(line.iter().map(|m| m.uci()).collect::<Vec<_>>());
        }
        println!("{obj}");
        return Ok(());
    }
    let stm = color_name(pos.turn());
    println!("{}", pos);
    if game_over {
        println!(
            "Game over: {stm} (to move) has {} and wins.",
            if pos.us().is_empty() {
                "no pieces"
            } else {
                "no legal move"
            }
        );
        return Ok(());
    }
    let verdict = match p.wdl {
        Wdl::Win => format!("{stm} wins"),
        Wdl::CursedWin => {
            format!("{stm} wins without the 50-move rule, but it draws with it (cursed win)")
        }
        Wdl::Draw => "Draw".to_string(),
        Wdl::BlessedLoss => {
            format!("{stm} loses without the 50-move rule, but it draws with it (blessed loss)")
        }
        Wdl::Loss => format!("{stm} loses"),
    };
    println!("{verdict}.");
    println!(
        "WDL {:+}  DTZ {}  DTW {}",
        p.wdl.to_i8(),
        p.dtz.signed(),
        p.dtw.map_or("-".to_string(), |v| if v.value().is_draw() {
            "draw".to_string()
        } else {
            v.signed().to_string()
        })
    );
    println!(
        "{:<8} {:<8} {:<13} {:>5} {:>5}",
        "move", "uci", "result", "dtz", "dtw"
    );
    for r in &moves {
        println!(
            "{:<8} {:<8} {:<13} {:>5} {:>5}",
            san(&pos, &r.mv),
            r.mv.uci(),
            category(r.dtz.wdl()),
            r.dtz.signed(),
            r.dtw.map_or("-".to_string(), |v| if v.value().is_draw() {
                "-".to_string()
            } else {
                v.signed().to_string()
            })
        );
    }
    if args.line {
        let mut cur = pos;
        let mut text = Vec::new();
        for m in &line {
            text.push(san(&cur, m));
            cur.play(m);
        }
        println!("line: {}", text.join(" "));
    }
    Ok(())
}
