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
    // Allocations from 1 MiB are mapped on their own and returned when freed. glibc's default
    // raises that threshold to the size of each such block freed (up to 32 MiB), after which a
    // solver's per-unit bit sets and frontier lists come from the heap, which keeps what they
    // free: KNPvKB's WDL+DTZ build (2 threads) grew by 70 MB over its units, its solve
    // peaked at 581 MB and its writer at 461 MB, against 502 MB and 376 MB with the threshold
    // fixed, at the same CPU time (0.992x, 1 thread).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` changes the allocator's parameters; it runs before any thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
    std::process::exit(cli::run());
}
