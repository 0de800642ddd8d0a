//! What the subcommands share: the material selection (`KQvR KPvK`, `--max-pieces N`) that
//! `generate`, `plan`, `verify` and `stats` parse and check one way, `--metrics`, and how
//! durations are written.

use antitb::table::{Material, Metric};
use std::time::Duration;

/// The tables named on the command line and every table up to `max_pieces` pieces, canonical,
/// in that order (empty when neither is given). `command` takes tables of at most `limit`
/// pieces.
pub fn tables(
    names: &[String],
    max_pieces: Option<usize>,
    command: &str,
    limit: usize,
) -> Result<Vec<Material>, String> {
    let mut out = Vec::new();
    for name in names {
        out.push(table(name, command, limit)?);
    }
    if let Some(n) = max_pieces {
        if !(2..=limit).contains(&n) {
            return Err(format!(
                "--max-pieces must be between 2 and {limit}, not {n}"
            ));
        }
        out.extend(up_to(n));
    }
    Ok(out)
}

/// One table by name (any orientation), as [`tables`] checks it.
pub fn table(name: &str, command: &str, limit: usize) -> Result<Material, String> {
    let m = Material::parse(name).map_err(|e| e.to_string())?;
    if !m.is_table() {
        return Err(format!("material {name} is not a table"));
    }
    if m.count() > limit {
        return Err(format!(
            "material {name} has {} pieces; {command} supports at most {limit}",
            m.count()
        ));
    }
    Ok(m.canonical())
}

/// Every table with at most `n` pieces.
pub fn up_to(n: usize) -> Vec<Material> {
    (2..=n).flat_map(Material::all_with_pieces).collect()
}

/// The value parser of `--metrics`: `wdl`, `dtz` or `dtw` (listed in the help).
pub fn metric_parser() -> impl clap::builder::TypedValueParser<Value = Metric> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Metric::ALL.map(Metric::extension))
        .map(|s| s.parse::<Metric>().expect("one of the possible values"))
}

/// Whether `--metrics` asks for DTW; WDL and DTZ are always built (DTW is built from them).
pub fn with_dtw(metrics: &[Metric]) -> Result<bool, String> {
    if !metrics.contains(&Metric::Wdl) || !metrics.contains(&Metric::Dtz) {
        return Err(
            "--metrics must include wdl and dtz (every table has them; dtw is optional)".into(),
        );
    }
    Ok(metrics.contains(&Metric::Dtw))
}

/// `12.3 s`, `4m 05s`, `2h 03m`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{:.1} s", d.as_secs_f64()),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s / 60 % 60),
    }
}
