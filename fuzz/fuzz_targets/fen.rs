//! FEN parsing, FEN output and probing.
//!
//! Properties: parsing never panics; a parsed FEN written out and parsed again gives the same
//! position (compared in the parser's normal form: the en-passant square only where it can be
//! captured, clocks as given), and writing that out gives the same text; every parsed position
//! is probed or refused with an error: with at most three pieces, or more with a capture to make
//! (the probe searches captures down to the tables), the probe may answer (WDL, DTZ and DTW agree
//! on the class; the best move keeps it); a quiet position with more is refused.

#![no_main]

use antitb::rules::Position;
use antitb::{ProbeError, Wdl};
use antitb_fuzz::{MAX_PIECES, tablebase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        // The tables are built (first run) and opened here, outside any input's time limit.
        tablebase();
    },
    |data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(pos) = text.parse::<Position>() else {
        return;
    };
    let fen = pos.to_string();
    let again: Position = fen
        .parse()
        .unwrap_or_else(|e| panic!("{text:?} -> {fen:?} does not parse again: {e}"));
    assert_eq!(again, pos, "{text:?} -> {fen:?}");
    assert_eq!(again.to_string(), fen);

    let tb = tablebase();
    match tb.probe(&pos) {
        Ok(p) => {
            // One piece beyond the tables only with a capture to make (the probe searches
            // captures down to the tables).
            let n = pos.piece_count() as usize;
            assert!(
                n <= MAX_PIECES || (n == MAX_PIECES + 1 && pos.has_capture()),
                "{fen}: probed"
            );
            assert_eq!(p.wdl, p.dtz.wdl(), "{fen}");
            assert_eq!(tb.probe_wdl(&pos).unwrap(), p.wdl, "{fen}");
            // DTW ignores the 50-move rule: cursed wins are wins, blessed losses losses.
            let dtw = p.dtw.expect("the fuzz tables have DTW").value();
            let w = p.wdl.to_i8();
            assert_eq!(
                (dtw.is_win(), dtw.is_draw(), dtw.is_loss()),
                (w > 0, w == 0, w < 0),
                "{fen}: WDL {:?}, DTW {dtw:?}",
                p.wdl
            );
            // A win or loss for the side to move is one for the other side after the best move.
            if p.wdl != Wdl::Draw
                && let Ok(moves) = tb.rank_moves(&pos, antitb::RankBy::Dtz)
                && let Some(best) = moves.first()
            {
                assert_eq!(best.dtz.wdl(), p.wdl, "{fen}: best move {:?}", best.mv);
            }
        }
        Err(ProbeError::TooManyPieces { pieces, max }) => {
            assert_eq!(pieces, pos.piece_count(), "{fen}");
            assert!(pieces > max + 1 || (pieces > max && !pos.has_capture()), "{fen}");
        }
        Err(e) => panic!("{fen}: probe failed: {e}"),
    }
}
);
