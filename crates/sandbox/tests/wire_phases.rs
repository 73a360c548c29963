//! The wire's failures name their phase (rp_core::wire), and the loop of attempts sends again
//! only what was never written (docs/guarantees.md#no-double-send): the hyper wire against raw
//! sockets on loopback, each made to fail at one point of the exchange.

// The helpers below are test code too: a setup step that fails stops the test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::Method;

use rp_core::attempt_loop::{self, Deadline, Policy};
use rp_core::error::{Error, Result};
use rp_core::hyper_wire::{HyperWire, WireSettings};
use rp_core::proxy::ProxySetting;
use rp_core::records::Attempt;
use rp_core::runtime::block_on_here;
use rp_core::tls::Verify;
use rp_core::wire::{Driver, Limits, Outgoing, Phase, Response, Wire, WireError, WireFailure};

fn wire() -> HyperWire {
    HyperWire::new(WireSettings {
        verify: Verify::Off,
        connect_timeout: Duration::from_secs(2),
        proxy: ProxySetting::Off,
        user_agent: HeaderValue::from_static("rp-wire-tests"),
        max_response_size: 1 << 20,
        request_id_headers: Arc::new([]),
    })
    .unwrap()
}

fn outgoing(method: Method, port: u16, body: Option<Bytes>) -> Outgoing {
    Outgoing {
        method,
        url: url::Url::parse(&format!("http://127.0.0.1:{port}/things")).unwrap(),
        headers: HeaderMap::new(),
        body,
    }
}

fn post(port: u16) -> Outgoing {
    outgoing(
        Method::POST,
        port,
        Some(Bytes::from_static(b"{\"name\":\"thing\"}")),
    )
}

const LIMITS: Limits = Limits {
    timeout: Duration::from_secs(5),
    connect_timeout: Duration::from_secs(2),
};

/// One exchange on this thread's runtime: the failure it must end with.
fn failure(request: &Outgoing, limits: Limits) -> WireFailure {
    let wire = wire();
    match block_on_here(wire.exchange(request, Driver::ThisThread, limits)).unwrap() {
        Err(WireError::Failed(failure)) => failure,
        Err(WireError::Refused(error)) => panic!("refused, not failed: {error}"),
        Ok(response) => panic!("answered {}", response.status),
    }
}

/// One request through the loop of attempts, on this thread: its outcome and its attempts.
fn sent(request: &Outgoing, policy: Policy) -> (Result<Response>, Vec<Attempt>) {
    let wire = wire();
    let mut log = Vec::new();
    let deadline = Deadline::after(Duration::from_secs(10));
    let outcome = block_on_here(attempt_loop::send(
        &wire,
        request,
        policy,
        Driver::ThisThread,
        &mut log,
        deadline,
    ))
    .unwrap();
    (outcome, log)
}

/// A loopback port where nothing listens (bound, then released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A server on loopback that hands each of the connections it accepts to `answer` (after
/// reading the request whole), for at most 10 s; joined, it says how many it accepted.
struct RawServer {
    port: u16,
    accepted: Arc<AtomicUsize>,
    thread: JoinHandle<()>,
}

impl RawServer {
    fn start(connections: usize, answer: fn(TcpStream)) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let thread = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(10);
            while count.load(Ordering::SeqCst) < connections && Instant::now() < until {
                match listener.accept() {
                    Ok((stream, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        stream.set_nonblocking(false).unwrap();
                        answer(stream);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        RawServer {
            port,
            accepted,
            thread,
        }
    }

    /// Stops at once if the expected connections came, else within 10 s.
    fn accepted(self) -> usize {
        let accepted = self.accepted.clone();
        self.thread.join().unwrap();
        accepted.load(Ordering::SeqCst)
    }
}

/// Read one request: its head, and as many body bytes as its Content-Length says.
fn read_request(stream: &mut TcpStream) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the client closed before its request was whole");
        seen.extend_from_slice(&buffer[..n]);
    }
    let end = seen.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = seen.len() - end;
    while body < length {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "the client closed before its body was whole");
        body += n;
    }
}

/// Reads the request whole, then closes without a word.
fn close_after_reading(mut stream: TcpStream) {
    read_request(&mut stream);
}

/// Reads the request whole, announces 200 bytes of body, sends 10 and closes.
fn half_a_body(mut stream: TcpStream) {
    read_request(&mut stream);
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(b"{\"pad\":\"xx").unwrap();
}

/// While it lives, a TCP connect to its port hangs: a listener that never accepts, its accept
/// queue filled, so Linux drops every further SYN. Nothing can be written to that port.
struct HangingConnects {
    port: u16,
    _listener: tokio::net::TcpListener,
    _queued: Vec<TcpStream>,
}

impl HangingConnects {
    fn new() -> HangingConnects {
        block_on_here(async {
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let listener = socket.listen(0).unwrap();
            let address: SocketAddr = listener.local_addr().unwrap();
            // Connect until one hangs: the queue is full from then on.
            let mut queued = Vec::new();
            for _ in 0..8 {
                match TcpStream::connect_timeout(&address, Duration::from_millis(300)) {
                    Ok(stream) => queued.push(stream),
                    Err(_) => {
                        return HangingConnects {
                            port: address.port(),
                            _listener: listener,
                            _queued: queued,
                        }
                    }
                }
            }
            panic!("every connect to a listener that never accepts completed");
        })
        .unwrap()
    }
}

#[test]
fn a_refused_connection_fails_before_anything_was_written() {
    let failed = failure(&post(free_port()), LIMITS);
    assert_eq!(failed.phase, Phase::BeforeWrite, "{failed:?}");
    assert!(!failed.timeout);
}

#[test]
fn a_connection_closed_after_the_request_was_read_fails_waiting_for_the_head() {
    let server = RawServer::start(1, close_after_reading);
    let failed = failure(&post(server.port), LIMITS);
    assert_eq!(failed.phase, Phase::AwaitingHead, "{failed:?}");
    assert!(!failed.timeout);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn a_body_cut_short_fails_while_reading_the_body() {
    let server = RawServer::start(1, half_a_body);
    let failed = failure(&outgoing(Method::GET, server.port, None), LIMITS);
    assert_eq!(failed.phase, Phase::ReadingBody, "{failed:?}");
    assert!(!failed.timeout);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn a_head_that_never_comes_is_a_timeout_after_the_write() {
    // Reads the request, then holds the connection open past the attempt's end.
    let server = RawServer::start(1, |mut stream| {
        read_request(&mut stream);
        std::thread::sleep(Duration::from_millis(600));
    });
    let limits = Limits {
        timeout: Duration::from_millis(300),
        connect_timeout: Duration::from_secs(2),
    };
    let failed = failure(&post(server.port), limits);
    assert_eq!(failed.phase, Phase::AwaitingHead, "{failed:?}");
    assert!(failed.timeout);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn a_connect_that_hangs_is_a_timeout_before_anything_was_written() {
    let hanging = HangingConnects::new();
    // Cut by `connect_timeout`, and by the attempt's end when that comes first.
    for (timeout, connect_timeout) in [(5_000, 200), (300, 5_000)] {
        let limits = Limits {
            timeout: Duration::from_millis(timeout),
            connect_timeout: Duration::from_millis(connect_timeout),
        };
        let started = Instant::now();
        let failed = failure(&post(hanging.port), limits);
        assert_eq!(failed.phase, Phase::BeforeWrite, "{failed:?}");
        assert!(failed.timeout, "{failed:?}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[test]
fn a_post_never_sent_is_sent_again() {
    let hanging = HangingConnects::new();
    let policy = Policy {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_millis(150),
        retries: 2,
    };
    let (outcome, log) = sent(&post(hanging.port), policy);
    match &outcome {
        Err(error @ Error::Timeout { message, .. }) => {
            assert!(message.starts_with("connect timeout"), "{message}");
            assert!(!error.outcome_unknown());
        }
        other => panic!("expected a connect timeout, got {other:?}"),
    }
    assert_eq!(log.len(), 3, "{log:?}");

    let (outcome, log) = sent(&post(free_port()), policy);
    assert!(matches!(outcome, Err(Error::Transport { .. })));
    assert!(!outcome.unwrap_err().outcome_unknown());
    assert_eq!(log.len(), 3, "{log:?}");
}

#[test]
fn a_post_perhaps_sent_is_not_sent_again_and_a_get_is() {
    let policy = Policy {
        timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
    };
    let server = RawServer::start(1, close_after_reading);
    let (outcome, log) = sent(&post(server.port), policy);
    match &outcome {
        Err(error @ Error::Transport { .. }) => assert!(error.outcome_unknown()),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(server.accepted(), 1);

    let server = RawServer::start(3, close_after_reading);
    let (outcome, log) = sent(&outgoing(Method::GET, server.port, None), policy);
    assert!(matches!(outcome, Err(Error::Transport { .. })));
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(server.accepted(), 3);
}

#[test]
fn a_post_whose_body_the_server_refuses_to_read_was_perhaps_written() {
    // The server reads a little and closes: a large body's write then fails (EPIPE, or a reset).
    let server = RawServer::start(1, |mut stream| {
        let mut buffer = [0u8; 1024];
        let _ = stream.read(&mut buffer);
    });
    let body = Bytes::from(vec![b'x'; 8 << 20]);
    let failed = failure(&outgoing(Method::POST, server.port, Some(body)), LIMITS);
    assert!(
        matches!(failed.phase, Phase::Writing | Phase::AwaitingHead),
        "{failed:?}"
    );
    assert_eq!(server.accepted(), 1);
}
