//! The HTTP server: axum on a tokio runtime, probes on a bounded blocking pool, graceful
//! shutdown on SIGINT or SIGTERM.
//!
//! Each request takes one of `threads` permits, then runs [`Service::handle`] on tokio's
//! blocking pool (at most `threads` threads), so a burst of requests waits in the async layer
//! instead of piling up threads or stalling the workers that read and write sockets. On a
//! signal the server stops accepting connections, finishes the requests in progress, closes
//! idle keep-alive connections and returns; connections still busy after
//! [`SHUTDOWN_GRACE`] are dropped.

use super::service::{Endpoint, Format, Reply, Service};
use crate::probe::ProbeError;
use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// How long shutdown waits for busy connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Where the tables are, where to listen, how many probes may run at once, and where log lines
/// go.
#[derive(Clone)]
pub struct ServeOptions {
    pub tables: Vec<PathBuf>,
    pub bind: SocketAddr,
    /// Probes running at once (threads of the blocking pool), at least 1.
    pub threads: usize,
    /// Receives one line per event worth logging (start, stop, failed probes).
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
}

/// Why the server could not start or stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// A table directory cannot be read.
    Tables(ProbeError),
    /// The address cannot be bound.
    Bind(SocketAddr, std::io::Error),
    /// The runtime, a signal handler or the listener failed.
    Io(std::io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Tables(e) => write!(f, "{e}"),
            ServeError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ServeError::Io(e) => write!(f, "server failed: {e}"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Tables(e) => Some(e),
            ServeError::Bind(_, e) | ServeError::Io(e) => Some(e),
        }
    }
}

struct App {
    service: Service,
    permits: Arc<Semaphore>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
}

/// Open the tables, listen, and answer requests until SIGINT or SIGTERM. `on_ready` is called
/// with the bound address once the server accepts connections.
pub fn serve(
    opts: &ServeOptions,
    on_ready: impl FnOnce(SocketAddr, &Service),
) -> Result<(), ServeError> {
    let threads = opts.threads.max(1);
    let service = Service::open(&opts.tables).map_err(ServeError::Tables)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.div_ceil(4))
        .max_blocking_threads(threads)
        .thread_name("antitb-serve")
        .enable_all()
        .build()
        .map_err(ServeError::Io)?;
    let app = Arc::new(App {
        service,
        permits: Arc::new(Semaphore::new(threads)),
        log: opts.log.clone(),
    });
    runtime.block_on(run(app, opts.bind, on_ready))
}

async fn run(
    app: Arc<App>,
    bind: SocketAddr,
    on_ready: impl FnOnce(SocketAddr, &Service),
) -> Result<(), ServeError> {
    // Signal handlers first, so that a signal sent right after start-up is not lost.
    let signals = Signals::new().map_err(ServeError::Io)?;
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| ServeError::Bind(bind, e))?;
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    let router = Router::new()
        .route("/antichess", get(probe))
        .route("/antichess/mainline", get(mainline))
        .route("/health", get(health))
        .fallback(not_found)
        .layer(axum::middleware::map_response(headers))
        .with_state(app.clone());
    let (stop_tx, stop_rx) = watch::channel(false);
    let log = app.log.clone();
    tokio::spawn(async move {
        let name = signals.wait().await;
        log(&format!(
            "{name} received: finishing the requests in progress"
        ));
        let _ = stop_tx.send(true);
    });
    on_ready(addr, &app.service);
    let mut graceful_rx = stop_rx.clone();
    let server = axum::serve(listener, router).with_graceful_shutdown(async move {
        let _ = graceful_rx.wait_for(|stop| *stop).await;
    });
    let mut deadline_rx = stop_rx;
    let deadline = async move {
        let _ = deadline_rx.wait_for(|stop| *stop).await;
        tokio::time::sleep(SHUTDOWN_GRACE).await;
    };
    tokio::select! {
        r = server => r.map_err(ServeError::Io)?,
        () = deadline => (app.log)("connections still busy after the grace period were dropped"),
    }
    (app.log)("stopped");
    Ok(())
}

async fn probe(State(app): State<Arc<App>>, RawQuery(q): RawQuery, h: HeaderMap) -> Response {
    answer(app, Endpoint::Probe, q, &h).await
}

async fn mainline(State(app): State<Arc<App>>, RawQuery(q): RawQuery, h: HeaderMap) -> Response {
    answer(app, Endpoint::Mainline, q, &h).await
}

async fn health(State(app): State<Arc<App>>, h: HeaderMap) -> Response {
    answer(app, Endpoint::Health, None, &h).await
}

async fn not_found() -> Response {
    reply_to_response(Reply {
        status: 404,
        content_type: "text/plain; charset=utf-8",
        body: b"not found: the endpoints are /antichess, /antichess/mainline and /health".to_vec(),
        log: None,
    })
}

/// Run the request on the blocking pool, holding a permit.
async fn answer(
    app: Arc<App>,
    endpoint: Endpoint,
    query: Option<String>,
    h: &HeaderMap,
) -> Response {
    let accept = h.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = Format::from_accept(accept);
    let permit = app
        .permits
        .clone()
        .acquire_owned()
        .await
        .expect("the permit semaphore is never closed");
    let worker = app.clone();
    let reply = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        worker
            .service
            .handle(endpoint, query.as_deref().unwrap_or(""), format)
    })
    .await
    .unwrap_or_else(|e| Reply::internal(format!("probe task failed: {e}")));
    if let Some(line) = &reply.log {
        (app.log)(line);
    }
    reply_to_response(reply)
}

fn reply_to_response(reply: Reply) -> Response {
    let mut res = Response::new(Body::from(reply.body));
    *res.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(reply.content_type),
    );
    res
}

/// Headers on every response, errors and unknown paths included.
async fn headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    res
}

/// SIGINT and SIGTERM, registered when created.
struct Signals {
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                int: signal(SignalKind::interrupt())?,
                term: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// Wait for either signal; returns its name.
    async fn wait(mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.int.recv() => "SIGINT",
                _ = self.term.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "interrupt"
        }
    }
}
