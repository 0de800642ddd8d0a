//! `antitb serve`: the lichess tablebase HTTP API over the tables.

use antitb::serve::{ServeOptions, serve};
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// Table directory (repeatable)
    #[arg(long, default_value = "tables")]
    tables: Vec<PathBuf>,
    /// Address to listen on (port 0: any free port, printed at start-up)
    #[arg(long, default_value = "127.0.0.1:9000")]
    bind: SocketAddr,
    /// Probes running at once (default: all cores)
    #[arg(long)]
    threads: Option<usize>,
}

/// One line on standard error; a closed standard error must not stop the server.
fn log(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "antitb serve: {line}");
}

pub fn run(args: ServeArgs) -> Result<(), String> {
    if args.threads == Some(0) {
        return Err("--threads must be at least 1".to_string());
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    // A client that goes away must not kill the server (SIGPIPE) while a log line is written.
    #[cfg(unix)]
    // SAFETY: `signal` is unsafe because a disposition change races with other threads that
    // install handlers; here no other thread exists yet (the server starts its threads below)
    // and SIG_IGN installs no handler code, so nothing can run in signal context. Exercised by
    // every server the tests start: tests/serve.rs `sigterm_and_sigint_stop_the_server`,
    // `many_concurrent_clients_get_the_single_client_answers`.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let opts = ServeOptions {
        tables: args.tables,
        bind: args.bind,
        threads,
        log: Arc::new(log),
    };
    serve(&opts, |addr, service| {
        log(&format!(
            "listening on http://{addr} ({} tables up to {} pieces, DTW {}; {threads} probe threads)",
            service.tables(),
            service.max_pieces(),
            if service.has_dtw() { "yes" } else { "no" },
        ));
    })
    .map_err(|e| e.to_string())
}
