//! `bench-floor-hyper BASE_URL PROFILE TOKEN N [CA_BUNDLE]`: the benchmark's follow (lib.rs) on
//! hyper-util's legacy client used directly, the pool and connector reqwest is built on, with
//! no reqwest layer between. The connector chain is the one a library wire would need:
//! hyper-rustls (the library's rustls configuration, ALPN h2 then http/1.1) over a proxy
//! connector (a route from hyper-util's proxy matcher: straight, a CONNECT tunnel for https,
//! or the proxy itself for http) over hyper-util's `HttpConnector` (TCP_NODELAY). The
//! benchmark's route has no proxy: `FLOOR_PROXY` (a proxy URL) sends it through one.
//! On a current-thread tokio runtime; gzip bodies are decoded here (hyper does not).

use std::future::Future;
use std::io::Read as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper::{Request, Uri};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::legacy::Client;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;
use tower_service::Service;

use floor::{read_mandate, Args, Follow, USER_AGENT, WARMUP};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The proxy connector: where each new connection goes, decided by the matcher.
#[derive(Clone)]
struct Proxied {
    tcp: HttpConnector,
    routes: Arc<Matcher>,
}

/// A connection as routed: `forward` when it goes to an http proxy that takes the request in
/// absolute form (hyper-util's client then writes it so).
struct Routed {
    io: TokioIo<TcpStream>,
    forward: bool,
}

impl Service<Uri> for Proxied {
    type Response = Routed;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Routed, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.tcp.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut tcp = self.tcp.clone();
        let route = self.routes.intercept(&dst);
        Box::pin(async move {
            let (io, forward) = match route {
                None => (tcp.call(dst).await?, false),
                Some(proxy) if dst.scheme_str() == Some("https") => {
                    let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
                    if let Some(auth) = proxy.basic_auth() {
                        tunnel = tunnel.with_auth(auth.clone());
                    }
                    (tunnel.call(dst).await?, false)
                }
                Some(proxy) => (tcp.call(proxy.uri().clone()).await?, true),
            };
            Ok(Routed { io, forward })
        })
    }
}

impl Connection for Routed {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.forward)
    }
}

impl Read for Routed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl Write for Routed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }
}

type Https = hyper_rustls::HttpsConnector<Proxied>;

fn client(ca: Option<&str>) -> Client<Https, Empty<Bytes>> {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false); // https:// destinations pass through it to hyper-rustls
    tcp.set_nodelay(true);
    let proxy = std::env::var("FLOOR_PROXY").unwrap_or_default();
    let routes = Arc::new(Matcher::builder().all(proxy).build());
    // hyper-rustls sets the ALPN protocols itself (h2, http/1.1: the library's) and refuses a
    // configuration that has them already.
    let mut tls = floor::tls_config(ca);
    tls.alpn_protocols.clear();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(Proxied { tcp, routes });
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .pool_timer(TokioTimer::new())
        .http1_allow_obsolete_multiline_headers_in_responses(true)
        .build(https)
}

async fn get(client: &Client<Https, Empty<Bytes>>, url: &str, accept: &str, auth: &str) -> Bytes {
    let request = Request::get(url)
        .header("accept", accept)
        .header("authorization", auth)
        .header("user-agent", USER_AGENT)
        .header("accept-encoding", "gzip")
        .body(Empty::new())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let response = client
        .request(request)
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    assert!(
        response.status().is_success(),
        "GET {url}: {}",
        response.status()
    );
    let gzip = response
        .headers()
        .get("content-encoding")
        .is_some_and(|v| v.as_bytes().trim_ascii().eq_ignore_ascii_case(b"gzip"));
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
        .to_bytes();
    if !gzip {
        return body;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&body[..])
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("GET {url}: gzip: {e}"));
    Bytes::from(out)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse("bench-floor-hyper");
    let (accept, auth) = (args.accept(), args.authorization());
    let client = client(args.ca.as_deref());
    let root = get(&client, &args.root_url(), &accept, &auth).await;
    let root = serde_json::from_slice(&root).unwrap_or_else(|e| panic!("entry point: {e}"));
    let follow = Follow::from_root(&root);
    let one = |i: usize| {
        let url = follow.url(i);
        let (client, accept, auth) = (&client, &accept, &auth);
        async move {
            let body = get(client, &url, accept, auth).await;
            read_mandate(&url, &body);
        }
    };
    for i in 0..WARMUP {
        one(i).await;
    }
    let start = Instant::now();
    for i in 0..args.n {
        one(i).await;
    }
    floor::report(start, args.n);
}
