//! The import direction of the library: every folder of `src/` is a layer, and a module may name
//! (through `crate::` paths) only its own layer and the layers [`LAYERS`] allows it. A lower
//! layer naming a higher one fails here with the file and line. The library's root (`lib.rs`,
//! `error.rs`) is above every layer, so a layer naming a root item (`crate::Wdl`) fails too.
//!
//! Also checked: clap only in `src/cli/` (the library knows nothing of the command line),
//! shakmaty only in `src/verify/syzygy.rs` and below (the cargo feature `syzygy`), and no
//! `super::super` (another layer is reached by a `crate::` path, so that it is seen here).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer and the layers below it that it may use, bottom to top (README.md, "Layout").
const LAYERS: &[(&str, &[&str])] = &[
    ("rules", &[]),
    ("table", &["rules"]),
    ("gen", &["table", "rules"]),
    ("format", &["table"]),
    ("store", &["format", "table", "rules"]),
    ("probe", &["store", "format", "table", "rules"]),
    // Never the generator: a bug cannot hide in both the solver and its check.
    ("verify", &["probe", "store", "format", "table", "rules"]),
    ("prove", &["probe", "table", "rules"]),
    (
        "build",
        &["gen", "probe", "store", "format", "table", "rules"],
    ),
    // The HTTP API over a Tablebase: it reads tables, never builds them.
    ("serve", &["probe", "store", "format", "table", "rules"]),
];

/// Root files of the library: above every layer, they may name any of them.
const ROOT: &str = "root";

/// One `crate::` reference: the file, its line, the layer it names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    file: PathBuf,
    line: usize,
    from: String,
    to: String,
}

/// The text of a line without its `//` comment (doc links may point anywhere).
fn code(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

/// An identifier at the start of `s` (`r#gen` is `gen`).
fn ident(s: &str) -> &str {
    let s = s.trim_start();
    let s = s.strip_prefix("r#").unwrap_or(s);
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first path segment of every item of a `{...}` group starting at `s[0] == '{'`, and the
/// group's length. Nested groups are skipped: only the outermost names are modules of the
/// crate root.
fn group_heads(s: &str) -> (Vec<String>, usize) {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item = true;
    for (i, c) in s.char_indices() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    at_item = true;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return (heads, i + 1);
                }
            }
            ',' if depth == 1 => at_item = true,
            c if depth == 1 && at_item && !c.is_whitespace() => {
                let name = ident(&s[i..]);
                if !name.is_empty() {
                    heads.push(name.to_string());
                }
                at_item = false;
            }
            _ => {}
        }
    }
    (heads, s.len())
}

/// The crate-root names a piece of source text refers to through `crate::` paths, with their
/// line numbers. A `use` group may span lines, so the text is read whole.
fn crate_names(text: &str) -> Vec<(usize, String)> {
    let stripped: Vec<&str> = text.lines().map(code).collect();
    let joined = stripped.join("\n");
    let line_of = |byte: usize| joined[..byte].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (at, _) in joined.match_indices("crate::") {
        // `$crate::` and `antitb_crate::` are not this crate's root.
        let before = joined[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &joined[at + "crate::".len()..];
        if rest.starts_with('{') {
            let (heads, _) = group_heads(rest);
            out.extend(heads.into_iter().map(|h| (line_of(at), h)));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.push((line_of(at), name.to_string()));
            }
        }
    }
    out
}

/// The layer of a file under `src/`: its folder, or [`ROOT`] for the crate root's own files.
fn layer_of(rel: &Path) -> String {
    let mut parts = rel.components();
    let first = parts.next().expect("a path under src");
    if parts.next().is_some() {
        first.as_os_str().to_string_lossy().into_owned()
    } else {
        ROOT.to_string()
    }
}

/// Every `crate::` reference of `text`, as seen from `layer`, naming another layer or the
/// root (names of the layer itself are its own business).
fn references(file: &Path, layer: &str, text: &str) -> Vec<Reference> {
    let layers: BTreeSet<&str> = LAYERS.iter().map(|(l, _)| *l).collect();
    crate_names(text)
        .into_iter()
        .filter(|(_, name)| name != layer)
        .map(|(line, name)| Reference {
            file: file.to_path_buf(),
            line,
            from: layer.to_string(),
            // An item of the crate root (a re-export such as `crate::Wdl`, or `crate::error`)
            // is the root's.
            to: if layers.contains(name.as_str()) {
                name
            } else {
                ROOT.to_string()
            },
        })
        .collect()
}

/// Is a reference allowed by [`LAYERS`]? The root may use everything.
fn allowed(r: &Reference) -> bool {
    if r.from == ROOT {
        return true;
    }
    LAYERS
        .iter()
        .find(|(l, _)| *l == r.from)
        .is_some_and(|(_, below)| below.contains(&r.to.as_str()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn lower_layers_never_name_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut all = Vec::new();
    let mut folders = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let layer = layer_of(rel);
        if layer == "cli" || rel == Path::new("main.rs") {
            continue; // the binary: it names the library as `antitb::`, never `crate::`
        }
        folders.insert(layer.clone());
        let text = std::fs::read_to_string(f).expect("read source");
        all.extend(references(rel, &layer, &text));
    }
    // Every folder is a declared layer (a new one must be given its place).
    for folder in &folders {
        assert!(
            folder == ROOT || LAYERS.iter().any(|(l, _)| l == folder),
            "src/{folder}/ is not a layer of LAYERS in tests/layers.rs: give it its place"
        );
    }
    let bad: Vec<String> = all
        .iter()
        .filter(|r| !allowed(r))
        .map(|r| {
            format!(
                "src/{}:{}: layer {} names {}",
                r.file.display(),
                r.line,
                r.from,
                r.to
            )
        })
        .collect();
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
    // Not vacuous: the scan saw the library's cross-layer imports, from every layer but the
    // bottom one, into every layer but the top ones.
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in &all {
        *pairs.entry((r.from.clone(), r.to.clone())).or_default() += 1;
    }
    println!(
        "{} cross-layer references in {} files",
        all.len(),
        files.len()
    );
    for ((from, to), n) in &pairs {
        println!("  {from:>7} -> {to:<7} {n}");
    }
    assert!(all.len() >= 60, "only {} references found", all.len());
    for (layer, below) in LAYERS {
        if !below.is_empty() {
            assert!(
                all.iter().any(|r| r.from == *layer),
                "no import seen from {layer}"
            );
        }
    }
    for to in ["rules", "table", "format", "store", "probe", "gen"] {
        assert!(all.iter().any(|r| r.to == to), "no import seen into {to}");
    }
}

#[test]
fn the_check_flags_a_lower_layer_naming_a_higher_one() {
    let flagged = |layer: &str, text: &str| -> Vec<String> {
        references(Path::new("fixture.rs"), layer, text)
            .into_iter()
            .filter(|r| !allowed(r))
            .map(|r| format!("{}:{}", r.line, r.to))
            .collect()
    };
    // The file layer reaching up into the prober, the generator and the root.
    assert_eq!(
        flagged("store", "use crate::probe::Tablebase;\n"),
        ["1:probe"]
    );
    assert_eq!(
        flagged(
            "store",
            "fn f() {\n    let t = crate::r#gen::generate;\n}\n"
        ),
        ["2:gen"]
    );
    assert_eq!(flagged("table", "use crate::Wdl;"), ["1:root"]);
    // The verifier naming the generator inside a multi-line group.
    assert_eq!(
        flagged(
            "verify",
            "use crate::{\n    rules::Position,\n    r#gen::{generate, MemoryTables},\n    store::Metric,\n};\n"
        ),
        ["1:gen"]
    );
    // Allowed: downward imports, the layer's own names, the root using anything, and comments.
    assert!(
        flagged(
            "probe",
            "use crate::{store::{Metric, StoredTable}, table::Value};\nuse crate::probe::stats;\n"
        )
        .is_empty()
    );
    assert!(flagged("root", "pub use crate::probe::Tablebase;").is_empty());
    assert!(flagged("format", "/// See [`crate::store`].\n// crate::gen\n").is_empty());
    assert!(
        flagged(
            "format",
            "let _ = \"a\"; macro_rules! m { () => { $crate::x } }"
        )
        .is_empty()
    );
}

#[test]
fn clap_and_shakmaty_stay_in_their_rooms() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut seen = (0, 0);
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let text = std::fs::read_to_string(f).expect("read source");
        let code: String = text.lines().map(code).collect::<Vec<_>>().join("\n");
        if code.contains("clap::") {
            assert!(
                rel.starts_with("cli"),
                "src/{}: clap outside src/cli",
                rel.display()
            );
            seen.0 += 1;
        }
        if code.contains("shakmaty") {
            assert!(
                rel == Path::new("verify/syzygy.rs") || rel.starts_with("verify/syzygy/"),
                "src/{}: shakmaty outside the syzygy feature's module",
                rel.display()
            );
            seen.1 += 1;
        }
        assert!(
            !code.contains("super::super"),
            "src/{}: reach another layer with a crate:: path",
            rel.display()
        );
    }
    assert!(
        seen.0 > 0 && seen.1 > 0,
        "clap and shakmaty uses found: {seen:?}"
    );
}
