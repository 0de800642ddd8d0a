//! Differential test of the rules core against shakmaty's `variant::Antichess` (independent code).
//!
//! Positions come from seeded random play (a plain xorshift RNG, so every run sees the same
//! positions): whole games from the start position, and short games from random set-ups of 2–8
//! pieces, some of which begin with a double pawn push that leaves a legal en-passant capture.
//! For every position we check, against shakmaty:
//! - the legal move set (sorted UCI strings; king promotions are `a7a8k` in both);
//! - the outcome with the 50-move rule ignored (shakmaty has no 50-move rule), and the pieces it is
//!   made of: stalemate, insufficient material (the bishops rule), a side without pieces;
//! - the full FEN after every move, with the *legal* en-passant square.
//!
//! And, without shakmaty, the un-move generator against the (already checked) forward moves:
//! every un-move replays forward to the child, and every quiet non-pawn move of a position without
//! captures shows up as an un-move of its child.

mod common;

use antitb::rules::fen::board_fen;
use antitb::rules::notation::parse_uci;
use antitb::rules::{Color, MoveList, Outcome, Position, Role, UnMove, for_each_unmove, parse_fen};
use common::rng::Rng;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::variant::Antichess;
use shakmaty::{CastlingMode, EnPassantMode, KnownOutcome, Position as _};

#[derive(Default, Debug)]
struct Stats {
    positions: usize,
    with_capture: usize,
    ep_legal: usize,
    ep_only_capture: usize,
    king_promotions: usize,
    stalemates: usize,
    no_pieces: usize,
    insufficient: usize,
    unmoves: usize,
    quiet_moves_checked: usize,
}

fn shak_from_fen(fen: &str) -> Antichess {
    fen.parse::<Fen>()
        .unwrap_or_else(|e| panic!("shakmaty cannot read {fen}: {e}"))
        .into_position(CastlingMode::Standard)
        .unwrap_or_else(|e| panic!("shakmaty rejects {fen}: {e}"))
}

fn shak_fen(pos: &Antichess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

fn our_ucis(pos: &Position) -> Vec<String> {
    let mut v: Vec<String> = pos.legal_moves().iter().map(|m| m.uci()).collect();
    v.sort();
    v
}

fn shak_ucis(pos: &Antichess) -> Vec<String> {
    let mut v: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    v.sort();
    v
}

/// Compare one position with shakmaty and check the un-moves. Returns the sorted legal UCI moves.
fn check_position(ours: &Position, theirs: &Antichess, stats: &mut Stats) -> Vec<String> {
    let fen = shak_fen(theirs);
    assert_eq!(ours.to_string(), fen, "FEN differs");
    assert_eq!(
        board_fen(ours.board()),
        theirs.board().to_string(),
        "board differs in {fen}"
    );
    assert_eq!(
        ours.ep_square().map(|s| s.to_string()),
        theirs
            .ep_square(EnPassantMode::Legal)
            .map(|s| s.to_string()),
        "legal en-passant square differs in {fen}"
    );

    let mine = our_ucis(ours);
    let shak = shak_ucis(theirs);
    assert_eq!(mine, shak, "legal moves differ in {fen}");
    assert_eq!(
        ours.count_legal_moves(),
        shak.len(),
        "count_legal_moves in {fen}"
    );
    let has_capture = theirs.legal_moves().iter().any(|m| m.is_capture());
    assert_eq!(ours.has_capture(), has_capture, "has_capture in {fen}");
    if !has_capture {
        // Without a capture every legal move is quiet.
        assert_eq!(
            ours.has_quiet_move(),
            !shak.is_empty(),
            "has_quiet_move in {fen}"
        );
    }

    // Outcome, 50-move rule ignored.
    let mut no_clock = *ours;
    no_clock.set_halfmoves(0);
    let expected = match theirs.outcome().known() {
        Some(KnownOutcome::Decisive { winner }) => Some(Outcome::Win(our_color(winner))),
        Some(KnownOutcome::Draw) => Some(Outcome::Draw),
        None => None,
    };
    assert_eq!(no_clock.outcome(), expected, "outcome differs in {fen}");
    assert_eq!(
        ours.is_insufficient_material(),
        theirs.is_insufficient_material(),
        "insufficient material in {fen}"
    );
    let stalemate = theirs.is_stalemate();
    let no_pieces = theirs.us().is_empty();
    assert_eq!(
        ours.is_won_by_side_to_move(),
        stalemate || no_pieces,
        "won by side to move in {fen}"
    );

    stats.positions += 1;
    stats.with_capture += usize::from(has_capture);
    stats.stalemates += usize::from(stalemate);
    stats.no_pieces += usize::from(no_pieces);
    stats.insufficient += usize::from(theirs.is_insufficient_material());
    if ours.ep_square().is_some() {
        stats.ep_legal += 1;
        if theirs.legal_moves().iter().all(|m| m.is_en_passant()) {
            stats.ep_only_capture += 1;
        }
    }
    stats.king_promotions += mine.iter().filter(|u| u.ends_with('k')).count();

    check_unmoves(ours, stats);
    if !has_capture && !no_pieces {
        check_moves_are_unmoves(ours, stats);
    }
    mine
}

fn our_color(c: shakmaty::Color) -> Color {
    match c {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// Every un-move of `child` leads to a predecessor whose quiet move back gives `child`'s board.
fn check_unmoves(child: &Position, stats: &mut Stats) {
    let mut seen: Vec<UnMove> = Vec::new();
    for_each_unmove(child, |um, pred| {
        assert_ne!(um.role, Role::Pawn, "pawn un-move {um:?} from {child}");
        assert!(!seen.contains(&um), "duplicate un-move {um:?} from {child}");
        seen.push(um);
        assert_eq!(
            pred.turn(),
            !child.turn(),
            "un-move {um:?} of {child}: wrong side to move"
        );
        assert_eq!(pred.ep_square(), None);
        let mut quiet = MoveList::new();
        pred.quiet_moves(&mut quiet);
        let Some(m) = quiet
            .iter()
            .find(|m| m.from == um.from && m.to == um.to && m.promotion.is_none())
        else {
            panic!(
                "un-move {um:?} of {child}: no quiet move {}{} in predecessor {pred}",
                um.from, um.to
            );
        };
        assert_eq!(
            m.role, um.role,
            "un-move {um:?} of {child}: role differs in {pred}"
        );
        let replay = pred.after(m);
        assert_eq!(
            replay.board(),
            child.board(),
            "un-move {um:?} of {child}: replay from {pred} gives {replay}"
        );
        assert_eq!(replay.turn(), child.turn());
    });
    stats.unmoves += seen.len();
}

/// Every quiet non-pawn move of a capture-free position is an un-move of its child.
fn check_moves_are_unmoves(pos: &Position, stats: &mut Stats) {
    for m in pos.legal_moves().iter().filter(|m| m.role != Role::Pawn) {
        assert!(!m.is_capture());
        let child = pos.after(m);
        let mut found = false;
        for_each_unmove(&child, |um, pred| {
            if um.from == m.from && um.to == m.to {
                assert_eq!(um.role, m.role);
                assert_eq!(
                    pred.board(),
                    pos.board(),
                    "move {m} of {pos}: un-move gives {pred}"
                );
                assert_eq!(pred.turn(), pos.turn());
                found = true;
            }
        });
        assert!(found, "move {m} of {pos} is not an un-move of {child}");
        stats.quiet_moves_checked += 1;
    }
}

/// Play a random game of at most `max_plies`, checking every position; `first` is tried as the
/// first move if it is legal.
fn play_random(
    start_fen: &str,
    max_plies: usize,
    first: Option<&str>,
    rng: &mut Rng,
    stats: &mut Stats,
) {
    let mut ours = parse_fen(start_fen).unwrap_or_else(|e| panic!("we reject {start_fen}: {e}"));
    let mut theirs = shak_from_fen(start_fen);
    for ply in 0..=max_plies {
        let moves = check_position(&ours, &theirs, stats);
        if moves.is_empty() || ply == max_plies {
            return;
        }
        let uci = match first {
            Some(f) if ply == 0 && moves.iter().any(|u| u == f) => f.to_string(),
            _ => moves[rng.below(moves.len())].clone(),
        };
        let before = ours.to_string();
        let m = parse_uci(&ours, &uci).unwrap_or_else(|e| panic!("{before}: {e}"));
        let sm = uci
            .parse::<UciMove>()
            .expect("uci syntax")
            .to_move(&theirs)
            .expect("shakmaty legal");
        ours.play(&m);
        theirs.play_unchecked(sm);
        assert_eq!(
            ours.to_string(),
            shak_fen(&theirs),
            "FEN after {uci} from {before}"
        );
    }
}

/// A random set-up of `n` pieces (at least one of each colour), pawns on ranks 2–7. With
/// `ep_file`, the side to move gets a pawn on its second rank on that file, an enemy pawn beside
/// the square two steps ahead, and the returned move is that double push.
fn random_setup(rng: &mut Rng, n: usize, with_ep: bool) -> (String, Option<String>) {
    let mut board: [Option<char>; 64] = [None; 64];
    let turn = if rng.below(2) == 0 {
        Color::White
    } else {
        Color::Black
    };
    let mut first = None;
    let mut reserved = [false; 64];
    let mut placed = 0;
    if with_ep {
        let file = rng.below(8);
        let (from_rank, to_rank, mid_rank) = if turn == Color::White {
            (1, 3, 2)
        } else {
            (6, 4, 5)
        };
        let side = if file == 0 || (file < 7 && rng.below(2) == 0) {
            file + 1
        } else {
            file - 1
        };
        let (own, enemy) = if turn == Color::White {
            ('P', 'p')
        } else {
            ('p', 'P')
        };
        board[from_rank * 8 + file] = Some(own);
        board[to_rank * 8 + side] = Some(enemy);
        reserved[mid_rank * 8 + file] = true;
        reserved[to_rank * 8 + file] = true;
        let name = |f: usize, r: usize| format!("{}{}", (b'a' + f as u8) as char, r + 1);
        first = Some(format!("{}{}", name(file, from_rank), name(file, to_rank)));
        placed = 2;
    }
    while placed < n {
        let white = match placed {
            0 => true,
            1 => false,
            _ => rng.below(2) == 0,
        };
        let role = b"KQRBNPPP"[rng.below(8)] as char;
        let sq = if role == 'P' {
            8 + rng.below(48)
        } else {
            rng.below(64)
        };
        if board[sq].is_some() || reserved[sq] {
            continue;
        }
        board[sq] = Some(if white {
            role
        } else {
            role.to_ascii_lowercase()
        });
        placed += 1;
    }
    let mut fen = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                Some(c) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    fen.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen.push_str(if turn == Color::White {
        " w - - 0 1"
    } else {
        " b - - 0 1"
    });
    (fen, first)
}

#[test]
fn random_games_from_start() {
    let mut rng = Rng(0x0123_4567_89AB_CDEF);
    let mut stats = Stats::default();
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
    let mut games = 0;
    while stats.positions < 100_000 {
        play_random(start, 400, None, &mut rng, &mut stats);
        games += 1;
    }
    eprintln!("{games} games: {stats:?}");
    assert!(stats.with_capture > 10_000, "{stats:?}");
    assert!(stats.ep_legal > 100, "{stats:?}");
    assert!(stats.king_promotions > 100, "{stats:?}");
    assert!(stats.no_pieces + stats.stalemates >= games / 2, "{stats:?}");
}

#[test]
fn random_small_setups() {
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    let mut stats = Stats::default();
    let mut setups = 0;
    let mut ep_setups = 0;
    let mut ep_played = 0;
    while stats.positions < 100_000 {
        let n = 2 + rng.below(7);
        let with_ep = rng.below(4) == 0;
        let (fen, first) = random_setup(&mut rng, n.max(3 * usize::from(with_ep)), with_ep);
        let before = stats.ep_legal;
        play_random(&fen, 30, first.as_deref(), &mut rng, &mut stats);
        setups += 1;
        if with_ep {
            ep_setups += 1;
            ep_played += usize::from(stats.ep_legal > before);
        }
    }
    eprintln!(
        "{setups} set-ups ({ep_setups} with a double push, {ep_played} gave en passant): {stats:?}"
    );
    assert!(
        ep_played > 500,
        "only {ep_played} set-ups reached a legal en-passant square"
    );
    assert!(stats.ep_only_capture > 100, "{stats:?}");
    assert!(stats.stalemates > 20, "{stats:?}");
    assert!(stats.no_pieces > 1_000, "{stats:?}");
    assert!(stats.insufficient > 20, "{stats:?}");
    assert!(stats.king_promotions > 1_000, "{stats:?}");
    assert!(stats.quiet_moves_checked > 100_000, "{stats:?}");
}
