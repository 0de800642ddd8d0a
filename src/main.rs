//! The `antitb` command line: parses arguments with clap, turns them into the library's own
//! types, and maps errors to one-line messages and exit codes. No tablebase logic lives here.

mod cli;

fn main() {
    // Like other Unix tools, stop quietly when the reader of our output goes away
    // (`antitb probe ... | head`) instead of failing on the next print. Rust ignores SIGPIPE
    // by default, which turns a closed pipe into a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: `signal` is unsafe because a disposition change races with other threads that
    // install handlers; this runs first in `main`, before any thread exists, and SIG_DFL
    // installs no handler code. Exercised by every CLI test; its effect is checked by
    // tests/probe_cli.rs `a_closed_output_pipe_is_not_a_panic`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::run());
}
