//! Material names (`KQvRN`).
//!
//! Properties: parsing never panics; an error is one line; a parsed material written out parses
//! back to itself; the canonical orientation is canonical, idempotent and one of the material
//! and its colour swap; the piece counts add up and stay within the limit; a table's
//! dependencies are canonical tables with fewer pieces (or as many, after a promotion).

#![no_main]

use antitb::rules::Color;
use antitb::table::Material;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let m = match Material::parse(text) {
        Ok(m) => m,
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "error is not one line: {e}");
            return;
        }
    };
    let name = m.to_string();
    assert_eq!(Material::parse(&name).ok(), Some(m), "{text:?} -> {name:?}");
    assert_eq!(name.parse::<Material>().ok(), Some(m));
    assert_eq!(m.swapped().swapped(), m);
    assert_eq!(
        m.count(),
        m.side_count(Color::White) + m.side_count(Color::Black)
    );
    assert!(m.count() <= antitb::table::MAX_PIECES);
    assert_eq!(name.len(), m.count() + 1);
    let c = m.canonical();
    assert!(c.is_canonical(), "{name}: canonical {c} is not canonical");
    assert_eq!(c.canonical(), c);
    assert!(c == m || c == m.swapped(), "{name} -> {c}");
    assert_eq!(m.swapped().canonical(), c);
    if m.is_table() {
        for d in c.dependencies() {
            assert!(d.is_canonical(), "{c} -> {d}");
            assert!(d.count() <= c.count(), "{c} -> {d}");
            assert!(d.is_table(), "{c} -> {d}");
        }
    }
});
