//! The wire's HTTP/1 connections against a keep-alive server on loopback: a connection is
//! reused once its response was read whole, and never after a response left unread or one
//! that closed it.

// The helpers below are test code too: a setup step that fails stops the test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rp_core::hyper_wire::HyperWire;
use rp_core::proxy::ProxySetting;
use rp_core::tls::Verify;
use rp_core::wire::{Response, WireError};

mod common;

/// A keep-alive HTTP/1.1 server, a thread per connection. `/big` answers 100 bytes and keeps
/// the connection; `/close` answers and closes it; any other path is answered with itself.
/// It records which connection (numbered from 0) each request came on; stopped on drop.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<(usize, String)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (recorded, stopping) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let connections = AtomicUsize::new(0);
            let mut serving = Vec::new();
            while !stopping.load(Ordering::SeqCst) {
                let Ok((socket, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let number = connections.fetch_add(1, Ordering::SeqCst);
                let recorded = recorded.clone();
                serving.push(std::thread::spawn(move || serve(socket, number, &recorded)));
            }
            for thread in serving {
                let _ = thread.join();
            }
        });
        Server {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<(usize, String)> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.thread.take().map(std::thread::JoinHandle::join);
    }
}

fn serve(mut socket: TcpStream, number: usize, seen: &Mutex<Vec<(usize, String)>>) {
    socket.set_nonblocking(false).unwrap();
    // Ends the thread if the client keeps the connection past the test.
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut pending = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") else {
            match socket.read(&mut buf) {
                Ok(n) if n > 0 => pending.extend_from_slice(&buf[..n]),
                _ => return,
            }
            continue;
        };
        let head = String::from_utf8_lossy(&pending[..end]).into_owned();
        pending.drain(..end + 4);
        let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
        seen.lock().unwrap().push((number, path.clone()));
        let answer = match path.as_str() {
            "/big" => format!(
                "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{}",
                "x".repeat(100)
            ),
            "/close" => {
                "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".into()
            }
            _ => format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{path}",
                path.len()
            ),
        };
        if socket.write_all(answer.as_bytes()).is_err() || path == "/close" {
            return;
        }
    }
}

fn wire(max_response_size: usize) -> HyperWire {
    common::wire(Verify::Off, ProxySetting::Off, max_response_size)
}

fn get(wire: &HyperWire, port: u16, path: &str) -> Result<Response, WireError> {
    common::get(wire, &format!("http://127.0.0.1:{port}{path}"))
}

fn body(response: Result<Response, WireError>) -> String {
    String::from_utf8_lossy(&response.unwrap().body).into_owned()
}

/// Each test on its own thread: this thread's pool starts empty and goes with it.
fn on_a_new_thread(test: impl FnOnce() + Send + 'static) {
    std::thread::spawn(test).join().unwrap();
}

#[test]
fn a_connection_is_reused_once_its_response_was_read_whole() {
    let server = Server::start();
    let port = server.port;
    on_a_new_thread(move || {
        let wire = wire(1 << 20);
        for path in ["/a", "/b", "/big", "/c"] {
            assert_eq!(
                body(get(&wire, port, path)).len(),
                if path == "/big" { 100 } else { 2 }
            );
        }
    });
    let paths = ["/a", "/b", "/big", "/c"].map(|p| (0, p.to_owned()));
    assert_eq!(server.seen(), paths);
}

#[test]
fn a_response_left_unread_takes_its_connection_with_it() {
    let server = Server::start();
    let port = server.port;
    on_a_new_thread(move || {
        let wire = wire(50);
        assert_eq!(body(get(&wire, port, "/a")), "/a");
        // Refused for its announced length, its body unread: that connection is not reused.
        assert!(get(&wire, port, "/big").is_err());
        assert_eq!(body(get(&wire, port, "/b")), "/b");
        assert_eq!(body(get(&wire, port, "/c")), "/c");
    });
    let expected = [(0, "/a"), (0, "/big"), (1, "/b"), (1, "/c")];
    assert_eq!(server.seen(), expected.map(|(n, p)| (n, p.to_owned())));
}

#[test]
fn a_connection_its_server_closed_after_answering_is_not_reused() {
    let server = Server::start();
    let port = server.port;
    on_a_new_thread(move || {
        let wire = wire(1 << 20);
        assert_eq!(body(get(&wire, port, "/close")), "ok");
        assert_eq!(body(get(&wire, port, "/a")), "/a");
        assert_eq!(body(get(&wire, port, "/b")), "/b");
    });
    let expected = [(0, "/close"), (1, "/a"), (1, "/b")];
    assert_eq!(server.seen(), expected.map(|(n, p)| (n, p.to_owned())));
}
