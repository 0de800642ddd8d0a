//! `antitb stats`: counts, histograms and longest wins of a stored table (read, never generated).

use antitb::probe::stats::{
    Histogram, Longest, SideStats, StatsOptions, TableStats, WDL_NAMES, table_stats,
};
use antitb::table::MAX_PIECES;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args)]
pub struct StatsArgs {
    /// Material such as KQvR
    material: String,
    /// Table directory
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// More directories with the smaller tables (for --resolve-captures)
    #[arg(long = "with-tables")]
    with_tables: Vec<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    json: bool,
    /// Also value the (unstored) capture positions by a capture search into smaller tables
    #[arg(long)]
    resolve_captures: bool,
}

const COUNTED: &str = "stored positions: valid slots of the index (positions up to the table's symmetry) whose \
side to move has no capture; capture positions are not stored (a probe resolves them by a capture search)";

pub fn run(args: StatsArgs) -> Result<(), String> {
    let m = super::select::table(&args.material, "stats", MAX_PIECES)?;
    let opts = StatsOptions {
        resolve_captures: args.resolve_captures,
        extra_dirs: args.with_tables.clone(),
    };
    let st = table_stats(&args.tables, m, &opts).map_err(|e| e.to_string())?;
    if args.json {
        println!("{}", to_json(&st));
    } else {
        print_text(&st);
    }
    Ok(())
}

fn longest_json(l: &Option<Longest>) -> serde_json::Value {
    match l {
        Some(l) => json!({ "plies": l.plies, "fen": l.fen }),
        None => serde_json::Value::Null,
    }
}

fn hist_json(h: &Histogram) -> serde_json::Value {
    json!({
        "wins": h.wins.iter().map(|(n, c)| json!([n, c])).collect::<Vec<_>>(),
        "losses": h.losses.iter().map(|(n, c)| json!([n, c])).collect::<Vec<_>>(),
        "draws": h.draws,
        "longest_win": longest_json(&h.longest_win),
        "longest_loss": longest_json(&h.longest_loss),
    })
}

fn wdl_json(w: &[u64; 5]) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    for (i, name) in WDL_NAMES.iter().enumerate().rev() {
        o.insert(name.to_string(), json!(w[i]));
    }
    serde_json::Value::Object(o)
}

fn side_json(name: &str, s: &SideStats) -> serde_json::Value {
    json!({
        "side_to_move": name,
        "stored": s.stored,
        "wdl": wdl_json(&s.wdl),
        "captures": s.captures,
        "captures_wdl": s.capture_wdl.as_ref().map(wdl_json),
        "dtz": hist_json(&s.dtz),
        "dtw": s.dtw.as_ref().map(hist_json),
    })
}

fn to_json(st: &TableStats) -> serde_json::Value {
    json!({
        "material": st.material.to_string(),
        "slots_per_side": st.slots,
        "files": st.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "counted": COUNTED,
        "histogram_format": "[plies, count] pairs; wins and losses by DTZ (or DTW) distance in plies",
        "sides": [side_json("white", &st.sides[0]), side_json("black", &st.sides[1])],
    })
}

fn pct(n: u64, total: u64) -> String {
    if total == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / total as f64)
    }
}

fn print_hist(label: &str, h: &Histogram) {
    let fmt = |m: &std::collections::BTreeMap<u16, u64>| {
        m.iter()
            .map(|(n, c)| format!("{n}:{c}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("    {label} wins   (plies:count) {}", fmt(&h.wins));
    println!("    {label} losses (plies:count) {}", fmt(&h.losses));
    println!("    {label} draws  {}", h.draws);
    for (what, l) in [
        ("longest win ", &h.longest_win),
        ("longest loss", &h.longest_loss),
    ] {
        if let Some(l) = l {
            println!("    {label} {what} {} plies: {}", l.plies, l.fen);
        }
    }
}

fn print_text(st: &TableStats) {
    println!(
        "{}: {} slots per side to move; files {}",
        st.material,
        st.slots,
        st.files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("counted: {COUNTED}");
    for (name, s) in ["White", "Black"].iter().zip(&st.sides) {
        println!(
            "{name} to move: {} stored positions, {} capture positions",
            s.stored, s.captures
        );
        let names = ["loss", "blessed loss", "draw", "cursed win", "win"];
        for i in (0..5).rev() {
            println!(
                "    {:<13} {:>12}  {:>6}",
                names[i],
                s.wdl[i],
                pct(s.wdl[i], s.stored)
            );
        }
        if let Some(cw) = &s.capture_wdl {
            let parts: Vec<String> = (0..5)
                .rev()
                .map(|i| format!("{} {}", names[i], cw[i]))
                .collect();
            println!(
                "    capture positions (resolved by search): {}",
                parts.join(", ")
            );
        }
        print_hist("DTZ", &s.dtz);
        if let Some(h) = &s.dtw {
            print_hist("DTW", h);
        }
    }
}
