//! The sandbox server: a strict, in-process fake of the whole API (token endpoint, entry point,
//! static resources, routes, demo data), with a journal, injected faults and a virtual clock.
//!
//! It runs on the process's one tokio runtime, on hyper alone: routing is the store's own
//! (`store.rs`), and the accept loop is ours because a fake must be able to close a connection
//! without answering (`drop_next`) and a stop must be bounded even when a request is stuck in
//! a handler.

mod answer;
mod body;
pub mod clock;
mod control;
pub mod demo;
mod entry;
pub mod error;
pub mod etag;
pub mod faults;
pub mod journal;
mod notification;
mod oauth;
pub mod protocol;
mod raw;
pub mod store;
mod tls;
pub mod tokens;

#[cfg(test)]
mod tests;

use std::net::{SocketAddr, TcpListener as StdListener, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use clock::Clock;
use error::{Result, SandboxError};
use faults::Faults;
use journal::{lock, Journal};
use store::Store;
use tokens::Tokens;

pub const TOKEN_PATH: &str = "/oauth/token";

/// How long a stop waits for the requests being answered before cutting their connections (a
/// request still arriving is not waited for).
const STOP_GRACE: Duration = Duration::from_secs(2);

/// How long a stop waits for a connection that is answering nothing to close by itself.
const IDLE_CLOSE: Duration = Duration::from_millis(100);

/// How long a TLS client may take over its handshake before the connection is closed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Config {
    pub host: String,
    /// 0: an ephemeral port.
    pub port: u16,
    pub token_ttl: Duration,
    pub demo: bool,
    /// Journal entries kept (the oldest go first); 0 keeps none.
    pub journal_limit: usize,
    /// Serve HTTPS with a certificate from a CA made up at start (see `tls.rs`).
    pub tls: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            host: "127.0.0.1".into(),
            port: 0,
            token_ttl: Duration::from_secs(960),
            demo: false,
            journal_limit: 100_000,
            tls: false,
        }
    }
}

/// State that outlives a stop and a restart.
pub struct Shared {
    pub store: RwLock<Store>,
    pub tokens: Mutex<Tokens>,
    pub journal: Journal,
    pub faults: Faults,
    pub clock: Clock,
    pub token_ttl: Duration,
}

/// Where a running server lives; every href it emits is built from these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Urls {
    /// `http://127.0.0.1:<port>` (`https://` with TLS), no trailing slash.
    pub base_url: String,
    /// `{base_url}/alps/v1`: the profile of `Accept` and `Content-Type`.
    pub profile: String,
    /// `{base_url}/alps#`: the namespace of service relations.
    pub rel_namespace: String,
    /// With TLS: the PEM file of the CA that signed the server's certificate.
    pub ca_path: Option<PathBuf>,
}

impl Urls {
    fn new(addr: SocketAddr, ca_path: Option<PathBuf>) -> Self {
        // A wildcard bind is reached through loopback.
        let ip = match addr.ip() {
            ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
            ip if ip.is_unspecified() => "[::1]".to_owned(),
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let scheme = if ca_path.is_some() { "https" } else { "http" };
        let base_url = format!("{scheme}://{ip}:{}", addr.port());
        Urls {
            ca_path,
            profile: format!("{base_url}/alps/v1"),
            rel_namespace: format!("{base_url}/alps#"),
            base_url,
        }
    }
}

/// What each request handler sees.
pub struct Site {
    pub urls: Urls,
    /// The `Content-Type` of HAL answers, built once.
    pub hal_content_type: String,
    pub shared: Arc<Shared>,
    /// Rendered entry points (body, ETag) by (links version, scope); see `entry.rs`.
    entry_cache: Mutex<Vec<(u64, tokens::Scope, entry::Rendered)>>,
}

struct Running {
    /// The process that started the server: after a fork the child has no server task to
    /// wait for (its runtime is rebuilt, see `runtime.rs`).
    pid: u32,
    urls: Urls,
    /// What the requests see, also read by `notification_body`.
    site: Arc<Site>,
    shutdown: watch::Sender<bool>,
    done: mpsc::Receiver<()>,
    /// Removes the CA file when the server stops (declared last: dropped after the task ends).
    _ca_file: Option<tls::CaFile>,
}

pub struct Sandbox {
    config: Config,
    shared: Arc<Shared>,
    running: Mutex<Option<Running>>,
}

impl Sandbox {
    pub fn new(config: Config) -> Self {
        let mut store = Store::new();
        if config.demo {
            demo::install(&mut store);
        }
        Sandbox {
            shared: Arc::new(Shared {
                store: RwLock::new(store),
                tokens: Mutex::new(Tokens::default()),
                journal: Journal::new(config.journal_limit),
                faults: Faults::default(),
                clock: Clock::new(),
                token_ttl: config.token_ttl,
            }),
            config,
            running: Mutex::new(None),
        }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The URLs while running (in this process: a forked child sees none).
    pub fn urls(&self) -> Option<Urls> {
        lock(&self.running)
            .as_ref()
            .filter(|r| r.pid == std::process::id())
            .map(|r| r.urls.clone())
    }

    /// Bind and start serving; a no-op returning the same URLs when already running.
    pub fn start(&self) -> Result<Urls> {
        let mut running = lock(&self.running);
        match running.as_ref() {
            Some(r) if r.pid == std::process::id() => return Ok(r.urls.clone()),
            // Inherited through fork: the listener belongs to the parent; start afresh.
            Some(_) => drop(running.take()),
            None => {}
        }
        let runtime = rp_core::runtime::runtime()?;
        let std_listener = bind(&self.config.host, self.config.port)?;
        let addr = std_listener.local_addr().map_err(cannot_listen)?;
        let listener = {
            let _guard = runtime.enter(); // from_std registers with this runtime's reactor
            TcpListener::from_std(std_listener).map_err(cannot_listen)?
        };
        let (acceptor, ca_file) = match self.config.tls {
            true => {
                let tls = tls::setup(&self.config.host)?;
                (Some(tls.acceptor), Some(tls.ca_file))
            }
            false => (None, None),
        };
        let urls = Urls::new(addr, ca_file.as_ref().map(|f| f.path().to_owned()));
        let site = Arc::new(Site {
            hal_content_type: format!(
                "application/hal+json; profile=\"{}\";charset=UTF-8",
                urls.profile
            ),
            urls: urls.clone(),
            shared: Arc::clone(&self.shared),
            entry_cache: Mutex::new(Vec::new()),
        });
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (done_tx, done) = mpsc::sync_channel(1);
        let serving = Arc::clone(&site);
        runtime.spawn(async move {
            accept_loop(listener, serving, shutdown_rx, acceptor).await;
            let _ = done_tx.send(());
        });
        *running = Some(Running {
            pid: std::process::id(),
            urls: urls.clone(),
            site,
            shutdown,
            done,
            _ca_file: ca_file,
        });
        Ok(urls)
    }

    /// The body the API would POST to a notification URL for the resource at `target` (a path,
    /// optionally with a query): the document a GET of it serves, with a `self` link added when
    /// it has none. Nothing is journaled. Blocking (a Python route handler may run meanwhile,
    /// on the runtime's blocking pool): call it without the GIL held.
    pub fn notification_body(&self, target: &str) -> Result<Bytes> {
        let site = lock(&self.running)
            .as_ref()
            .filter(|r| r.pid == std::process::id())
            .map(|r| Arc::clone(&r.site))
            .ok_or_else(|| SandboxError::argument("the sandbox is not running"))?;
        let runtime = rp_core::runtime::runtime()?;
        // Spawned and waited for on a channel, not `block_on`: this may be called from a thread
        // of the runtime's blocking pool (a route handler), where `block_on` would panic.
        let (tx, rx) = mpsc::sync_channel(1);
        let target = target.to_owned();
        runtime.spawn(async move {
            let _ = tx.send(notification::body(site, target).await);
        });
        rx.recv()
            .unwrap_or_else(|_| Err(SandboxError::Internal("the sandbox task ended".into())))
    }

    /// Stop: close the listening socket (freeing the port), let requests in flight finish
    /// (at most a couple of seconds), and wait until the server task has ended. Blocking.
    pub fn stop(&self) {
        let Some(running) = lock(&self.running).take() else {
            return;
        };
        if running.pid != std::process::id() {
            return;
        }
        let _ = running.shutdown.send(true);
        // The task always ends within STOP_GRACE plus scheduling; the margin covers a
        // saturated machine. Receiving an error means the task (or the runtime) is gone.
        let _ = running
            .done
            .recv_timeout(STOP_GRACE + Duration::from_secs(10));
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // Dropping the sender is what the tasks watch for: no blocking wait in a destructor.
        lock(&self.running).take();
    }
}

fn cannot_listen(e: std::io::Error) -> SandboxError {
    SandboxError::os("sandbox server cannot listen", &e)
}

fn bind(host: &str, port: u16) -> Result<StdListener> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| SandboxError::os(format!("sandbox server cannot resolve {host:?}"), &e))?;
    let mut last = None;
    for addr in addrs {
        match StdListener::bind(addr) {
            Ok(listener) => {
                listener.set_nonblocking(true).map_err(cannot_listen)?;
                return Ok(listener);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(e) => SandboxError::os(format!("sandbox server cannot listen on {host}:{port}"), &e),
        None => SandboxError::Os {
            message: format!("sandbox server cannot listen: {host:?} has no address"),
            errno: None,
        },
    })
}

/// Resolves when a stop was asked for or the `Sandbox` is gone.
async fn stopped(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|stop| *stop).await;
}

async fn accept_loop(
    listener: TcpListener,
    site: Arc<Site>,
    shutdown: watch::Receiver<bool>,
    tls: Option<TlsAcceptor>,
) {
    let mut connections = JoinSet::new();
    let stop = stopped(shutdown.clone());
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let site = Arc::clone(&site);
                    connections.spawn(accept_connection(stream, site, shutdown.clone(), tls.clone()));
                }
                // Out of file descriptors and the like: pause rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
            // Reap finished connections so the set does not grow.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(STOP_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.shutdown().await;
    }
}

async fn accept_connection(
    stream: TcpStream,
    site: Arc<Site>,
    shutdown: watch::Receiver<bool>,
    tls: Option<TlsAcceptor>,
) {
    let _ = stream.set_nodelay(true);
    let Some(acceptor) = tls else {
        return serve_connection(stream, site, shutdown).await;
    };
    // A client that never finishes its handshake (or speaks plain HTTP) is simply closed.
    let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream));
    tokio::select! {
        done = handshake => if let Ok(Ok(stream)) = done {
            serve_connection(stream, site, shutdown).await;
        },
        () = stopped(shutdown.clone()) => {}
    }
}

async fn serve_connection<S>(stream: S, site: Arc<Site>, shutdown: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let answering = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&answering);
    let service = service_fn(move |request| {
        let answer = Answering::enter(&count);
        let site = Arc::clone(&site);
        async move {
            let response = protocol::handle(site, request).await?;
            // The body holds the mark: a slow or streamed body is still being answered.
            Ok::<_, protocol::Dropped>(response.map(|body| body::Holding::new(body, answer)))
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        () = stopped(shutdown) => {}
    }
    // Finishes the request being answered, then closes. An idle connection, or one whose
    // request has not fully arrived (a browser's half-sent request), gets only the moment to
    // flush what it was writing: waiting for it would hold the stop for the whole grace.
    connection.as_mut().graceful_shutdown();
    if answering.load(Ordering::SeqCst) == 0 {
        let _ = tokio::time::timeout(IDLE_CLOSE, connection).await;
    } else {
        let _ = connection.await;
    }
}

/// Marks a request of a connection as being answered, from the call of its handler until its
/// response's body is dropped (sent, or abandoned with the connection).
struct Answering(Arc<AtomicUsize>);

impl Answering {
    fn enter(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(count))
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
