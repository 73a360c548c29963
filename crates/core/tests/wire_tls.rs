//! The wire over TLS against servers on loopback with a CA made up here: HTTP/2 when the server
//! picks it by ALPN (a connection shared, and one going away left for a new one), and an
//! `https://` proxy reached over TLS (HTTP/1.1 only) that takes an http request in absolute
//! form with the proxy's credentials.

// The helpers below are test code too: a setup step that fails stops the test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

use rp_core::hyper_wire::HyperWire;
use rp_core::proxy::ProxySetting;
use rp_core::runtime::block_on_here;
use rp_core::tls::Verify;

mod common;
use common::{exchange_get, get};

/// A CA in a PEM file (removed on drop) and an acceptor for 127.0.0.1 offering `alpn`.
struct Tls {
    ca: std::path::PathBuf,
    acceptor: TlsAcceptor,
}

impl Drop for Tls {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ca);
    }
}

fn tls(alpn: &[&[u8]]) -> Tls {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::default();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], der)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let ca = std::env::temp_dir().join(format!("rp-wire-tls-{}.pem", rand::random::<u64>()));
    std::fs::write(&ca, ca_cert.pem()).unwrap();
    Tls {
        ca,
        acceptor: TlsAcceptor::from(Arc::new(config)),
    }
}

/// What a one-connection TLS server saw: the protocol it agreed by ALPN and the first bytes.
struct Seen {
    alpn: Option<Vec<u8>>,
    head: String,
}

/// A server on its own thread for one connection: it reads up to the end of a head (or of the
/// HTTP/2 preface) and writes `answer`.
fn serve_once(acceptor: TlsAcceptor, answer: &'static [u8]) -> (u16, mpsc::Receiver<Seen>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let (socket, _) = listener.accept().await.unwrap();
            let mut stream = acceptor.accept(socket).await.unwrap();
            let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&head).into_owned();
            let _ = seen.send(Seen { alpn, head });
            let _ = stream.write_all(answer).await;
            let _ = stream.shutdown().await;
        });
    });
    (port, receiver)
}

fn wire(verify: Verify, proxy: ProxySetting) -> HyperWire {
    common::wire(verify, proxy, 1 << 20)
}

#[test]
fn https_speaks_http2_when_the_server_picks_it() {
    let tls = tls(&[b"h2", b"http/1.1"]);
    let (port, seen) = serve_once(tls.acceptor.clone(), b"");
    let wire = wire(
        Verify::CaBundle(tls.ca.display().to_string()),
        ProxySetting::Off,
    );
    // The server only reads the preface and closes: the exchange itself fails.
    let _ = get(&wire, &format!("https://127.0.0.1:{port}/things"));
    let seen = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(seen.alpn.as_deref(), Some(&b"h2"[..]));
    assert!(
        seen.head.starts_with("PRI * HTTP/2.0\r\n\r\n"),
        "{:?}",
        seen.head
    );
}

#[test]
fn https_speaks_http1_when_the_server_offers_only_that() {
    let tls = tls(&[b"http/1.1"]);
    let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
    let (port, seen) = serve_once(tls.acceptor.clone(), answer);
    let wire = wire(
        Verify::CaBundle(tls.ca.display().to_string()),
        ProxySetting::Off,
    );
    let response = get(&wire, &format!("https://127.0.0.1:{port}/things")).unwrap();
    assert_eq!((response.status, &response.body[..]), (200, &b"ok"[..]));
    let seen = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        seen.head.starts_with("GET /things HTTP/1.1\r\n"),
        "{:?}",
        seen.head
    );
}

#[test]
fn an_https_proxy_is_reached_over_tls_and_takes_the_request_with_its_credentials() {
    // The proxy offers h2 too: the wire speaks HTTP/1.1 to a proxy whatever it offers.
    let tls = tls(&[b"h2", b"http/1.1"]);
    let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
    let (port, seen) = serve_once(tls.acceptor.clone(), answer);
    let proxy = ProxySetting::new(Some(&format!("https://user:pw@127.0.0.1:{port}")), false);
    let wire = wire(
        Verify::CaBundle(tls.ca.display().to_string()),
        proxy.unwrap(),
    );
    // Userinfo of the request's own URL is never sent, to the proxy or anyone.
    let response = get(&wire, "http://someone:secret@api.example.invalid/things").unwrap();
    assert_eq!((response.status, &response.body[..]), (200, &b"ok"[..]));
    let seen = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(seen.alpn.as_deref(), Some(&b"http/1.1"[..]));
    let head = seen.head.to_ascii_lowercase();
    assert!(
        head.starts_with("get http://api.example.invalid/things http/1.1\r\n"),
        "{head:?}"
    );
    assert!(
        head.contains("\r\nproxy-authorization: basic dxnlcjpwdw==\r\n"),
        "{head:?}"
    );
    assert!(
        !head.contains("secret") && !head.contains("c29tzw9uztpzzwnyzxq"),
        "{head:?}"
    );
}

/// An HTTP/2 server over TLS that answers each request with its path, and counts the
/// connections it accepted; stopped on drop. With `goaway_after`, each connection shuts down
/// gracefully (GOAWAY) once it has taken that many requests: those under way are answered,
/// and the client must open a new connection for the next. A request for `/hang` shuts its
/// connection down at once and is answered only 10 s later, so the connection stays open,
/// going away.
struct H2Server {
    port: u16,
    connections: Arc<std::sync::atomic::AtomicUsize>,
    /// How many connections it has shut down (GOAWAY sent).
    gone_away: Arc<std::sync::atomic::AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl H2Server {
    fn start(acceptor: TlsAcceptor, goaway_after: Option<usize>) -> H2Server {
        use http_body_util::Full;
        use hyper::body::Bytes;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = connections.clone();
        let gone_away = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let going = gone_away.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let accepting = async {
                    loop {
                        let (socket, _) = listener.accept().await.unwrap();
                        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let acceptor = acceptor.clone();
                        let going = going.clone();
                        tokio::spawn(async move {
                            let Ok(stream) = acceptor.accept(socket).await else {
                                return;
                            };
                            let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                            let enough = Arc::new(tokio::sync::Notify::new());
                            let told = enough.clone();
                            let answer = hyper::service::service_fn(
                                move |request: http::Request<hyper::body::Incoming>| {
                                    let order = std::sync::atomic::Ordering::SeqCst;
                                    let hang = request.uri().path() == "/hang";
                                    if hang || Some(taken.fetch_add(1, order) + 1) == goaway_after {
                                        told.notify_one();
                                    }
                                    let path = Bytes::from(request.uri().path().to_owned());
                                    async move {
                                        if hang {
                                            tokio::time::sleep(Duration::from_secs(10)).await;
                                        }
                                        Ok::<_, std::convert::Infallible>(http::Response::new(
                                            Full::new(path),
                                        ))
                                    }
                                },
                            );
                            let conn = hyper::server::conn::http2::Builder::new(
                                hyper_util::rt::TokioExecutor::new(),
                            )
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), answer);
                            tokio::pin!(conn);
                            tokio::select! {
                                _ = conn.as_mut() => {}
                                () = enough.notified() => {
                                    conn.as_mut().graceful_shutdown();
                                    going.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                    let _ = conn.await;
                                }
                            }
                        });
                    }
                };
                tokio::select! {
                    _ = stopped => {}
                    () = accepting => {}
                }
            });
        });
        H2Server {
            port,
            connections,
            gone_away,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn gone_away(&self) -> usize {
        self.gone_away.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for H2Server {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|stop| stop.send(()));
        let _ = self.thread.take().map(std::thread::JoinHandle::join);
    }
}

/// `count` GETs of `/item/<n>` at once on `wire`, on this thread's pool; each answer's status
/// and body.
fn get_at_once(wire: &HyperWire, port: u16, count: usize) -> Vec<(u16, String)> {
    block_on_here(async {
        let mut all = tokio::task::JoinSet::new();
        for n in 0..count {
            let wire = wire.clone();
            all.spawn(async move {
                let url = format!("https://127.0.0.1:{port}/item/{n}");
                let response = exchange_get(&wire, &url).await.unwrap();
                (n, response)
            });
        }
        let mut answers = vec![(0, String::new()); count];
        while let Some(done) = all.join_next().await {
            let (n, response) = done.unwrap();
            answers[n] = (
                response.status,
                String::from_utf8_lossy(&response.body).into_owned(),
            );
        }
        answers
    })
    .unwrap()
}

/// A CA, an HTTP/2-only server (`goaway_after`: see [`H2Server`]) and a wire that trusts the
/// CA; the CA file lives as long as the first.
fn h2_setup(goaway_after: Option<usize>) -> (Tls, H2Server, HyperWire) {
    let tls = tls(&[b"h2"]);
    let server = H2Server::start(tls.acceptor.clone(), goaway_after);
    let wire = wire(
        Verify::CaBundle(tls.ca.display().to_string()),
        ProxySetting::Off,
    );
    (tls, server, wire)
}

/// What `get_at_once(.., count)` gets from an `H2Server`: every `/item/<n>` answered with its path.
fn answered(count: usize) -> Vec<(u16, String)> {
    (0..count).map(|n| (200, format!("/item/{n}"))).collect()
}

#[test]
fn requests_to_an_http2_server_share_one_connection() {
    let (_tls, server, wire) = h2_setup(None);
    // Many at once on a cold pool: each may make a connection, every one is answered.
    assert_eq!(get_at_once(&wire, server.port, 8), answered(8));
    let made = server.connections();
    assert!((1..=8).contains(&made), "{made} connections");
    // Then one connection is kept and shared, at once and one after another.
    assert_eq!(get_at_once(&wire, server.port, 16), answered(16));
    for _ in 0..3 {
        assert_eq!(get_at_once(&wire, server.port, 1), answered(1));
    }
    assert_eq!(server.connections(), made);
}

#[test]
fn requests_to_an_http2_server_that_goes_away_go_out_on_a_new_connection() {
    let (_tls, server, wire) = h2_setup(Some(2));
    // One after another: the shared connection goes away after every second request, and the
    // next request, handed back unsent by a connection going away or made after it closed,
    // goes out on a new one.
    for _ in 0..20 {
        assert_eq!(get_at_once(&wire, server.port, 1), answered(1));
    }
    // (A connection takes more than two when requests reach it before its GOAWAY reaches us.)
    assert!(
        server.connections() > 1,
        "{} connections",
        server.connections()
    );
    // Many at once on a connection that goes away under them: every one is answered.
    for _ in 0..10 {
        assert_eq!(get_at_once(&wire, server.port, 8), answered(8));
    }
}

#[test]
fn a_request_handed_back_by_an_http2_connection_going_away_goes_out_on_a_new_one() {
    let (_tls, server, wire) = h2_setup(None);
    let port = server.port;
    let server = &server;
    let answer = block_on_here(async {
        // The connection's first request makes the server say GOAWAY, and stays unanswered:
        // the connection stays open and shared, but takes no new stream.
        let hanging = tokio::spawn({
            let wire = wire.clone();
            async move { exchange_get(&wire, &format!("https://127.0.0.1:{port}/hang")).await }
        });
        // The GOAWAY sent, then read by this runtime while it waits.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while server.gone_away() == 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let answer = exchange_get(&wire, &format!("https://127.0.0.1:{port}/item/0")).await;
        hanging.abort();
        answer
    })
    .unwrap()
    .unwrap();
    assert_eq!(
        (
            answer.status,
            String::from_utf8_lossy(&answer.body).as_ref()
        ),
        (200, "/item/0")
    );
    assert_eq!(server.connections(), 2);
}
