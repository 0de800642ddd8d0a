//! Known results: a CSV of positions with their WDL, exact DTZ and optionally DTW, checked
//! against the tables through the probe layer (what a user of `antitb probe` would get).
//!
//! Format: one position per line, `fen,wdl,dtz[,dtw]`. `wdl` is −2..=2 (SPEC.md §2), `dtz` the
//! exact signed DTZ, `dtw` the signed DTW or `none` (or empty) for a draw. A first line starting
//! with `fen` is a header; empty lines and lines starting with `#` are skipped.

use super::VerifyError;
use crate::probe::{ProbeError, Tablebase};
use crate::rules::Position;
use crate::table::Wdl;
use std::fmt;
use std::path::Path;

/// One row of a known-results file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownRow {
    /// Line number in the file (1-based).
    pub line: usize,
    pub position: Position,
    pub wdl: Wdl,
    pub dtz: i32,
    /// `None`: no DTW column; `Some(None)`: a draw.
    pub dtw: Option<Option<i32>>,
}

/// A row whose tables say something else.
#[derive(Clone, Debug)]
pub struct KnownMismatch {
    pub row: KnownRow,
    /// What the tables say: WDL, DTZ, and DTW when the row has one (`None` = draw).
    pub wdl: Wdl,
    pub dtz: i32,
    pub dtw: Option<Option<i32>>,
}

fn dtw_text(d: Option<i32>) -> String {
    d.map_or("none".to_string(), |d| format!("{d:+}"))
}

impl fmt::Display for KnownMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.row;
        write!(
            f,
            "line {}: {}: expected wdl {:+} dtz {:+}",
            r.line,
            r.position,
            r.wdl.to_i8(),
            r.dtz
        )?;
        if let Some(d) = r.dtw {
            write!(f, " dtw {}", dtw_text(d))?;
        }
        write!(
            f,
            ", tables say wdl {:+} dtz {:+}",
            self.wdl.to_i8(),
            self.dtz
        )?;
        if let Some(d) = self.dtw {
            write!(f, " dtw {}", dtw_text(d))?;
        }
        Ok(())
    }
}

/// A row that could not be probed: missing or corrupt tables.
#[derive(Debug)]
pub struct KnownError {
    pub line: usize,
    pub position: Position,
    pub error: ProbeError,
}

impl fmt::Display for KnownError {
    /// The position and the error (the line is the reader's to place).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.position, self.error)
    }
}

/// The outcome of [`check_known`].
#[derive(Debug, Default)]
pub struct KnownReport {
    /// Rows checked (agreeing, disagreeing or failing).
    pub rows: usize,
    pub mismatches: Vec<KnownMismatch>,
    /// Rows that could not be probed.
    pub errors: Vec<KnownError>,
}

impl KnownReport {
    pub fn is_ok(&self) -> bool {
        self.mismatches.is_empty() && self.errors.is_empty()
    }
}

/// Read and parse a known-results file.
pub fn read_known(path: &Path) -> Result<Vec<KnownRow>, VerifyError> {
    let text = std::fs::read_to_string(path).map_err(|e| VerifyError::Known {
        path: path.to_path_buf(),
        line: 0,
        what: e.to_string(),
    })?;
    parse_known(&text).map_err(|(line, what)| VerifyError::Known {
        path: path.to_path_buf(),
        line,
        what,
    })
}

/// Parse the text of a known-results file; an error names the line.
pub fn parse_known(text: &str) -> Result<Vec<KnownRow>, (usize, String)> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let s = raw.trim();
        if s.is_empty() || s.starts_with('#') || (rows.is_empty() && s.starts_with("fen")) {
            continue;
        }
        let fields: Vec<&str> = s.split(',').map(str::trim).collect();
        if !(3..=4).contains(&fields.len()) {
            return Err((
                line,
                format!("expected fen,wdl,dtz[,dtw], found {} fields", fields.len()),
            ));
        }
        let position: Position = fields[0]
            .parse()
            .map_err(|e| (line, format!("bad FEN '{}': {e}", fields[0])))?;
        let wdl = fields[1]
            .parse()
            .ok()
            .and_then(Wdl::from_i8)
            .ok_or((line, format!("bad wdl '{}' (−2..2)", fields[1])))?;
        let dtz: i32 = fields[2]
            .parse()
            .map_err(|_| (line, format!("bad dtz '{}'", fields[2])))?;
        let dtw = match fields.get(3) {
            None => None,
            Some(&("" | "none" | "-")) => Some(None),
            Some(d) => Some(Some(d.parse().map_err(|_| {
                (
                    line,
                    format!("bad dtw '{d}' (a number, or none for a draw)"),
                )
            })?)),
        };
        rows.push(KnownRow {
            line,
            position,
            wdl,
            dtz,
            dtw,
        });
    }
    Ok(rows)
}

/// Probe every row in `tb` and compare.
pub fn check_known(tb: &Tablebase, rows: &[KnownRow]) -> KnownReport {
    let mut report = KnownReport {
        rows: rows.len(),
        ..KnownReport::default()
    };
    for row in rows {
        let probe = || -> Result<KnownMismatch, ProbeError> {
            let dtz = tb.probe_dtz(&row.position)?;
            let dtw = match row.dtw {
                None => None,
                Some(_) => {
                    let v = tb.probe_dtw(&row.position)?;
                    Some((!v.value().is_draw()).then(|| v.signed()))
                }
            };
            Ok(KnownMismatch {
                row: row.clone(),
                wdl: dtz.wdl(),
                dtz: dtz.signed(),
                dtw,
            })
        };
        match probe() {
            Ok(m) if m.wdl == row.wdl && m.dtz == row.dtz && m.dtw == row.dtw => {}
            Ok(m) => report.mismatches.push(m),
            Err(error) => report.errors.push(KnownError {
                line: row.line,
                position: row.position,
                error,
            }),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows() {
        let text = "fen,wdl,dtz\n# comment\n8/8/8/3K4/8/8/8/5r2 b - - 0 1,2,32\n\n8/8/8/8/8/8/8/K6k w - - 0 1,0,0,none\n";
        let rows = parse_known(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].line, rows[0].wdl, rows[0].dtz, rows[0].dtw),
            (3, Wdl::Win, 32, None)
        );
        assert_eq!(rows[1].dtw, Some(None));
        assert_eq!(
            parse_known("8/8/8/8/8/8/8/K6k w - - 0 1,3,0")
                .unwrap_err()
                .0,
            1
        );
        assert!(
            parse_known("fen,wdl,dtz\nnot a fen,0,0")
                .unwrap_err()
                .1
                .contains("bad FEN")
        );
    }
}
