//! FEN in and out, every `FenError` variant, SAN and UCI against shakmaty, and the outcome rules a
//! single position cannot see (threefold repetition via `Game`, the 50-move rule).
//!
//! shakmaty writes antichess SAN as lichess does (`exd6` for en passant, `a8=K` for a king
//! promotion, file before rank when disambiguating), and antichess has no check, so neither side
//! writes `+` or `#`: we compare the strings as they are.

mod common;

use antitb::rules::notation::{MoveTextError, parse_san, parse_uci, san};
use antitb::rules::{FenError, Game, Move, Outcome, Position, Square, parse_fen, perft};
use common::rng::Rng;
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanError};
use shakmaty::variant::Antichess;
use shakmaty::{CastlingMode, EnPassantMode, Position as _};

fn shak(fen: &str) -> Antichess {
    fen.parse::<Fen>()
        .expect("fen syntax")
        .into_position(CastlingMode::Standard)
        .expect("valid for shakmaty")
}

fn sq(s: &str) -> Square {
    Square::from_ascii(s.as_bytes()).expect("square")
}

// ---------------------------------------------------------------------------------------------
// FEN

const NORMALIZED: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w - - 0 2",
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
    "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 57",
    "8/P7/8/8/8/8/8/k7 w - - 17 40",
    "KKK5/8/8/8/8/8/8/kkk5 b - - 99 100",
    "8/8/8/8/8/8/8/8 w - - 0 1",
    "8/3b4/8/1B6/8/8/5b2/2B5 w - - 3 12",
];

#[test]
fn normalized_fens_round_trip() {
    for &fen in NORMALIZED {
        let pos = parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(pos.to_string(), fen);
        assert_eq!(parse_fen(&pos.to_string()), Ok(pos));
        assert_eq!(fen.parse::<Position>(), Ok(pos));
    }
}

#[test]
fn fens_are_normalized_on_output() {
    let cases = [
        // Four fields: counters default to 0 and 1.
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - -",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        ),
        // Five fields.
        ("8/8/8/8/8/8/8/K6k b - - 7", "8/8/8/8/8/8/8/K6k b - - 7 1"),
        // An en-passant square nobody can capture on is dropped (as in shakmaty's legal mode).
        (
            "4k3/8/8/3p4/8/8/8/K7 w - d6 0 3",
            "4k3/8/8/3p4/8/8/8/K7 w - - 0 3",
        ),
        // Extra blanks between fields.
        ("8/8/8/8/8/8/8/K6k   w  -  -", "8/8/8/8/8/8/8/K6k w - - 0 1"),
    ];
    for (input, output) in cases {
        let pos = parse_fen(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(pos.to_string(), output, "{input}");
        assert_eq!(
            Fen::from_position(&shak(input), EnPassantMode::Legal).to_string(),
            output,
            "shakmaty on {input}"
        );
    }
}

/// FENs written by shakmaty from random games: we read them and write them back identically,
/// including those where shakmaty writes every en-passant square (`EnPassantMode::Always`).
#[test]
fn shakmaty_fens_round_trip() {
    let mut rng = Rng(0x5EED_F00D_1234_5678);
    let mut checked = 0;
    let mut ep_dropped = 0;
    while checked < 20_000 {
        let mut pos = Antichess::default();
        for _ in 0..300 {
            let legal = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
            let always = Fen::from_position(&pos, EnPassantMode::Always).to_string();
            let ours = parse_fen(&legal).unwrap_or_else(|e| panic!("{legal}: {e}"));
            assert_eq!(ours.to_string(), legal);
            let ours_always = parse_fen(&always).unwrap_or_else(|e| panic!("{always}: {e}"));
            assert_eq!(ours_always, ours, "{always}");
            ep_dropped += usize::from(legal != always);
            checked += 1;
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos.play_unchecked(moves[rng.below(moves.len())]);
        }
    }
    assert!(
        ep_dropped > 100,
        "only {ep_dropped} FENs had an uncapturable en-passant square"
    );
}

#[test]
fn every_fen_error_variant() {
    use FenError::*;
    let cases: Vec<(&str, FenError)> = vec![
        ("8/8/8/8/8/8/8/8 w", FieldCount(2)),
        ("", FieldCount(0)),
        ("8/8/8/8/8/8/8/8 w - - 0 1 extra", FieldCount(7)),
        ("8/8/8/8/8/8/8 w - -", RankCount(7)),
        ("8/8/8/8/8/8/8/8/8 w - -", RankCount(9)),
        ("7/8/8/8/8/8/8/8 w - -", RankLength(8)),
        ("8/8/8/8/8/8/8/nnnnnnnnn w - -", RankLength(1)),
        ("8/8/8/8/8/8/8/7x w - -", PieceLetter('x')),
        ("8/8/8/8/8/8/8/9 w - -", PieceLetter('9')),
        ("8/8/8/8/8/8/8/07 w - -", PieceLetter('0')),
        ("P7/8/8/8/8/8/8/8 w - -", PawnOnBackRank(sq("a8"))),
        ("8/8/8/8/8/8/8/7p b - -", PawnOnBackRank(sq("h1"))),
        ("8/8/8/8/8/8/8/8 x - -", SideToMove("x".into())),
        ("8/8/8/8/8/8/8/8 W - -", SideToMove("W".into())),
        ("8/8/8/8/8/8/8/8 w KQkq -", CastlingRights("KQkq".into())),
        ("8/8/8/8/8/8/8/8 w k -", CastlingRights("k".into())),
        ("8/8/8/8/8/8/8/8 w - e9", EnPassantSyntax("e9".into())),
        ("8/8/8/8/8/8/8/8 w - x", EnPassantSyntax("x".into())),
        // No black pawn in front of e6.
        (
            "4k3/8/8/8/8/8/8/4K3 w - e6",
            EnPassantInconsistent(sq("e6")),
        ),
        // Wrong rank for the side to move.
        (
            "4k3/8/8/8/4P3/8/8/4K3 w - e3",
            EnPassantInconsistent(sq("e3")),
        ),
        // The square the pawn came from is occupied.
        (
            "4k3/4n3/8/3Pp3/8/8/8/4K3 w - e6",
            EnPassantInconsistent(sq("e6")),
        ),
        // The ep square itself is occupied.
        (
            "4k3/8/4n3/3Pp3/8/8/8/4K3 w - e6",
            EnPassantInconsistent(sq("e6")),
        ),
        ("8/8/8/8/8/8/8/8 w - - x 1", HalfmoveClock("x".into())),
        ("8/8/8/8/8/8/8/8 w - - -1 1", HalfmoveClock("-1".into())),
        ("8/8/8/8/8/8/8/8 w - - 0 0", FullmoveNumber("0".into())),
        ("8/8/8/8/8/8/8/8 w - - 0 y", FullmoveNumber("y".into())),
    ];
    for (fen, expected) in cases {
        assert_eq!(parse_fen(fen), Err(expected.clone()), "{fen:?}");
        // Every error has a one-line message.
        let msg = expected.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
    }
}

/// Found by fuzzing (fuzz target `fen`): an en-passant square on the first or last rank
/// panicked (the parser looked for the square beyond it before checking the rank). Every
/// square of the edge ranks, for either side to move, is now an error.
#[test]
fn en_passant_square_on_an_edge_rank_is_an_error() {
    for turn in ["w", "b"] {
        for file in "abcdefgh".chars() {
            for rank in ['1', '8'] {
                let ep = format!("{file}{rank}");
                let fen = format!("8/8/8/8/8/8/8/K6k {turn} - {ep} 0 1");
                assert_eq!(
                    parse_fen(&fen),
                    Err(FenError::EnPassantInconsistent(sq(&ep))),
                    "{fen}"
                );
            }
        }
    }
}

/// shakmaty agrees these FENs are bad (it has coarser errors, so only the fact is compared).
#[test]
fn shakmaty_rejects_what_we_reject() {
    for fen in [
        "8/8/8/8/8/8/8 w - -",
        "7/8/8/8/8/8/8/8 w - -",
        "8/8/8/8/8/8/8/7x w - -",
        "P7/8/8/8/8/8/8/8 w - -",
        "8/8/8/8/8/8/8/8 x - -",
        "4k3/8/8/8/8/8/8/4K3 w - e6",
        "4k3/4n3/8/3Pp3/8/8/8/4K3 w - e6",
        "r3k2r/8/8/8/8/8/8/R3K2R w KQkq -",
    ] {
        assert!(parse_fen(fen).is_err(), "{fen}");
        let theirs = fen
            .parse::<Fen>()
            .ok()
            .and_then(|f| f.into_position::<Antichess>(CastlingMode::Standard).ok());
        assert!(theirs.is_none(), "shakmaty accepts {fen}");
    }
}

// ---------------------------------------------------------------------------------------------
// SAN and UCI

/// Our move for a shakmaty move, found through UCI text.
fn ours_for(pos: &Position, m: shakmaty::Move) -> Move {
    let uci = m.to_uci(CastlingMode::Standard).to_string();
    parse_uci(pos, &uci).unwrap_or_else(|e| panic!("{pos}: {e}"))
}

/// The long form `Ng1f3`, `exd6`, `a7a8=K` (piece letter, full origin square, capture, target).
fn long_san(m: &Move) -> String {
    let mut s = String::new();
    if m.role != antitb::rules::Role::Pawn {
        s.push(m.role.upper_char());
    }
    s.push_str(&m.from.to_string());
    if m.is_capture() {
        s.push('x');
    }
    s.push_str(&m.to.to_string());
    if let Some(p) = m.promotion {
        s.push('=');
        s.push(p.upper_char());
    }
    s
}

fn check_san_position(ours: &Position, theirs: &Antichess, counts: &mut [usize; 4]) {
    for &sm in theirs.legal_moves().iter() {
        let m = ours_for(ours, sm);
        let expected = San::from_move(theirs, sm).to_string();
        assert_eq!(san(ours, &m), expected, "SAN of {} in {ours}", m.uci());
        assert_eq!(
            parse_san(ours, &expected),
            Ok(m),
            "parse_san({expected}) in {ours}"
        );
        assert_eq!(
            parse_san(ours, &format!("{expected}+")),
            Ok(m),
            "check suffix ignored"
        );
        assert_eq!(
            parse_san(ours, &format!("{expected}!?")),
            Ok(m),
            "annotation ignored"
        );
        // The fully specified form reads as the same move for both.
        let long = long_san(&m);
        let via_shak = long
            .parse::<San>()
            .expect("long SAN syntax")
            .to_move(theirs)
            .expect("shakmaty reads long SAN");
        assert_eq!(via_shak, sm, "shakmaty on {long}");
        assert_eq!(parse_san(ours, &long), Ok(m), "parse_san({long}) in {ours}");
        counts[0] += 1;
        counts[1] += usize::from(m.en_passant);
        counts[2] += usize::from(expected.ends_with("=K"));
        // Drop the disambiguation from a disambiguated move: both sides call it ambiguous.
        if m.role != antitb::rules::Role::Pawn {
            let bare = format!(
                "{}{}{}",
                m.role.upper_char(),
                if m.is_capture() { "x" } else { "" },
                m.to
            );
            if bare != expected {
                let theirs_err = bare.parse::<San>().expect("syntax").to_move(theirs);
                assert_eq!(
                    theirs_err,
                    Err(SanError::AmbiguousSan),
                    "shakmaty on {bare}"
                );
                assert_eq!(
                    parse_san(ours, &bare),
                    Err(MoveTextError::Ambiguous(bare.clone())),
                    "{bare} in {ours}"
                );
                counts[3] += 1;
            }
        }
    }
}

#[test]
fn san_matches_shakmaty_on_random_games() {
    let mut rng = Rng(0xA5A5_5A5A_0F0F_F0F0);
    // moves, en passant, king promotions, ambiguous bare forms
    let mut counts = [0usize; 4];
    let mut positions = 0;
    // Games from the start position, and from a position rich in knights and rooks so that
    // disambiguation (file, rank, both) happens often.
    let starts = [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        "nrnrnrnr/pppp4/8/8/8/8/4PPPP/NRNRNRNR w - - 0 1",
        "1n1n1n1n/P1P1P1P1/8/8/8/8/1p1p1p1p/N1N1N1N1 w - - 0 1",
    ];
    while positions < 20_000 {
        let start = starts[rng.below(starts.len())];
        let mut ours = parse_fen(start).expect("valid");
        let mut theirs = shak(start);
        for _ in 0..200 {
            check_san_position(&ours, &theirs, &mut counts);
            positions += 1;
            let moves = theirs.legal_moves();
            if moves.is_empty() {
                break;
            }
            let sm = moves[rng.below(moves.len())];
            let m = ours_for(&ours, sm);
            ours.play(&m);
            theirs.play_unchecked(sm);
        }
    }
    eprintln!("{positions} positions, counts {counts:?}");
    assert!(counts[1] > 20, "too few en-passant captures: {counts:?}");
    assert!(counts[2] > 100, "too few king promotions: {counts:?}");
    assert!(counts[3] > 1_000, "too few ambiguous forms: {counts:?}");
}

#[test]
fn san_examples() {
    let pos = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6").expect("valid");
    let m = parse_uci(&pos, "e5d6").expect("legal");
    assert!(m.en_passant);
    assert_eq!(san(&pos, &m), "exd6");
    let pos = parse_fen("1n6/P7/8/8/8/8/8/7k w - -").expect("valid");
    let m = parse_uci(&pos, "a7b8k").expect("legal");
    assert_eq!(san(&pos, &m), "axb8=K");
    assert_eq!(parse_san(&pos, "axb8=K"), Ok(m));
    // A quiet move is illegal while a capture exists.
    let pos = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6").expect("valid");
    assert_eq!(
        parse_san(&pos, "Kd2"),
        Err(MoveTextError::Illegal("Kd2".into()))
    );
    assert_eq!(
        parse_uci(&pos, "e1d2"),
        Err(MoveTextError::Illegal("e1d2".into()))
    );
    assert_eq!(
        parse_uci(&pos, "e5"),
        Err(MoveTextError::Syntax("e5".into()))
    );
    assert_eq!(
        parse_uci(&pos, "e5d6p"),
        Err(MoveTextError::Syntax("e5d6p".into()))
    );
    assert_eq!(
        parse_uci(&pos, "i5d6"),
        Err(MoveTextError::Syntax("i5d6".into()))
    );
    assert_eq!(
        parse_san(&pos, "??"),
        Err(MoveTextError::Syntax("??".into()))
    );
}

// ---------------------------------------------------------------------------------------------
// Outcomes that need history or the clock

fn play_san(game: &mut Game, text: &str) {
    let m = parse_san(game.position(), text).unwrap_or_else(|e| panic!("{}: {e}", game.position()));
    game.play(&m);
}

#[test]
fn threefold_repetition_draws() {
    let mut game = Game::new(Position::startpos());
    let shuffle = ["Nf3", "Nf6", "Ng1", "Ng8"];
    for (i, text) in shuffle.iter().chain(shuffle.iter()).enumerate() {
        assert_eq!(game.outcome(), None, "before ply {i}");
        play_san(&mut game, text);
    }
    // The start position now stands for the third time.
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw));
}

#[test]
fn twofold_repetition_is_not_a_draw() {
    let mut game = Game::new(Position::startpos());
    for text in ["Nf3", "Nf6", "Ng1", "Ng8"] {
        play_san(&mut game, text);
    }
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), None);
}

#[test]
fn repetition_needs_the_same_side_to_move() {
    // White's king walks a triangle (e1-d1-d2-e1), Black's king goes d8 and back: the placement
    // returns with Black to move, which is not a repetition of the start (White to move).
    let start = parse_fen("4k3/p7/8/8/8/8/P7/4K3 w - - 0 1").expect("valid");
    let mut game = Game::new(start);
    for text in ["Kd1", "Kd8", "Kd2", "Ke8", "Ke1"] {
        play_san(&mut game, text);
    }
    assert_eq!(game.position().board(), start.board());
    assert_eq!(game.repetitions(), 1);
    // Shuffle on: the placement with Black to move comes back twice more.
    for text in ["Kd8", "Kd1", "Ke8", "Ke1", "Kd8", "Kd1", "Ke8", "Ke1"] {
        assert_eq!(game.outcome(), None);
        play_san(&mut game, text);
    }
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw));
}

#[test]
fn fifty_move_rule_and_bishops_rule() {
    let pos = parse_fen("8/8/8/4k3/8/8/8/R6K w - - 99 80").expect("valid");
    assert_eq!(pos.outcome(), None);
    let pos = parse_fen("8/8/8/4k3/8/8/8/R6K w - - 100 80").expect("valid");
    assert_eq!(pos.outcome(), Some(Outcome::Draw));
    // Bishops on opposite colours: shakmaty also calls it insufficient material for both.
    for (fen, draw) in [
        ("8/8/8/8/8/8/8/B6b w - -", true),   // a1 dark, h1 light
        ("8/8/8/8/8/8/8/B5b1 w - -", false), // g1 dark: same colour, a capture may happen
        ("8/8/8/8/8/8/1b6/B6b w - -", false),
    ] {
        let pos = parse_fen(fen).expect("valid");
        assert_eq!(pos.is_insufficient_material(), draw, "{fen}");
        assert_eq!(
            shak(fen).is_insufficient_material(),
            draw,
            "shakmaty on {fen}"
        );
        assert_eq!(pos.outcome(), draw.then_some(Outcome::Draw), "{fen}");
    }
}

#[test]
fn stalemate_and_no_pieces_win() {
    let white = antitb::rules::Color::White;
    let black = antitb::rules::Color::Black;
    let pos = parse_fen("8/8/8/8/p7/P7/8/k7 w - -").expect("valid");
    assert_eq!(pos.outcome(), Some(Outcome::Win(white)));
    assert_eq!(perft(&pos, 1), 0);
    let pos = parse_fen("8/8/8/8/8/8/8/k7 w - -").expect("valid");
    assert_eq!(pos.outcome(), Some(Outcome::Win(white)));
    let pos = parse_fen("8/8/8/8/8/8/8/K7 b - -").expect("valid");
    assert_eq!(pos.outcome(), Some(Outcome::Win(black)));
    for fen in [
        "8/8/8/8/p7/P7/8/k7 w - -",
        "8/8/8/8/8/8/8/k7 w - -",
        "8/8/8/8/8/8/8/K7 b - -",
    ] {
        assert!(shak(fen).outcome().winner().is_some(), "shakmaty on {fen}");
    }
}
