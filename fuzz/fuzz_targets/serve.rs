//! The request path of `antitb serve`: query string -> response, no server.
//!
//! Input: one byte choosing the endpoint (`/antichess`, `/antichess/mainline`, `/health`) and
//! the body format (JSON or CBOR), then the query string. Properties: never a panic; the status
//! is 200, 400 (a query that does not parse) or 404 (no value), never 500 (the tables are
//! sound); a 400 exactly when the query does not parse; a 200 in JSON is a JSON object, and for
//! a probe of a position with both sides on the board and at most three pieces its `dtz` is the
//! one the library's own probe gives.

#![no_main]

use antitb::serve::{Endpoint, Format, Service, parse_query};
use antitb_fuzz::{MAX_PIECES, tablebase, tables_dir};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn service() -> &'static Service {
    static S: OnceLock<Service> = OnceLock::new();
    S.get_or_init(|| Service::open(&[tables_dir()]).expect("open the fuzz tables"))
}

fuzz_target!(
    init: {
        // The tables are built (first run) and opened here, outside any input's time limit.
        service();
        tablebase();
    },
    |data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(query) = std::str::from_utf8(rest) else {
        return;
    };
    let endpoint = match choice % 3 {
        0 => Endpoint::Probe,
        1 => Endpoint::Mainline,
        _ => Endpoint::Health,
    };
    let format = if choice & 0x80 == 0 {
        Format::Json
    } else {
        Format::Cbor
    };
    let reply = service().handle(endpoint, query, format);
    assert!(
        matches!(reply.status, 200 | 400 | 404),
        "status {} for {query:?}: {:?}",
        reply.status,
        reply.log
    );
    let parsed = parse_query(query);
    if endpoint != Endpoint::Health {
        assert_eq!(reply.status == 400, parsed.is_err(), "{query:?}");
    }
    if reply.status != 200 || format != Format::Json {
        return;
    }
    let json: serde_json::Value = serde_json::from_slice(&reply.body)
        .unwrap_or_else(|e| panic!("{query:?}: body is not JSON: {e}"));
    assert!(json.is_object(), "{query:?}: {json}");
    if endpoint == Endpoint::Probe
        && let Ok(q) = parsed
        && q.position.piece_count() as usize <= MAX_PIECES
        && !q.position.us().is_empty()
        && !q.position.them().is_empty()
    {
        let dtz = tablebase()
            .probe_dtz(&q.position)
            .unwrap_or_else(|e| panic!("{query:?}: {e}"));
        assert_eq!(
            json["precise_dtz"].as_i64(),
            Some(i64::from(dtz.signed())),
            "{query:?}: {json}"
        );
    }
}
);
