//! The `antitb` command line: parses arguments with clap, turns them into the library's own
//! types, and maps errors to one-line messages and exit codes. No tablebase logic lives here.

mod cli;

fn main() {
    // Like other Unix tools, stop quietly when the reader of our output goes away
    // (`antitb probe ... | head`) instead of failing on the next print. Rust ignores SIGPIPE
    // by default, which turns a closed pipe into a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of a signal at start-up, before any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::process::exit(cli::run());
}
