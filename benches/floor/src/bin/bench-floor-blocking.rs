//! `bench-floor-blocking BASE_URL PROFILE TOKEN N`: the follow of `bench-floor` (expand, GET,
//! parse the JSON, read `status` and the `creditor` href) over a blocking `std::net::TcpStream`:
//! HTTP/1.1 keep-alive, the head parsed by httparse, `Content-Length` bodies only, plain HTTP.
//! A reference, not a target: what the same follow costs without an async runtime and
//! reqwest's layers (BENCHMARKS.md, "Instructions per follow"). No TLS, proxy, gzip,
//! timeout or retry: it shows where the floor's time goes, not a client one could ship.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Instant;

use serde_json::Value;

const WARMUP: usize = 200;

struct Connection {
    authority: String,
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Connection {
    fn open(authority: &str) -> Connection {
        let stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("{authority}: {e}"));
        stream.set_nodelay(true).unwrap_or_else(|e| panic!("{e}"));
        Connection {
            authority: authority.to_owned(),
            stream,
            buf: Vec::with_capacity(16 * 1024),
        }
    }

    /// GET `path`; a connection the server closed is opened again (a GET may be repeated).
    fn get(&mut self, path: &str, accept: &str, auth: &str) -> Value {
        let request = format!(
            "GET {path} HTTP/1.1\r\nhost: {}\r\naccept: {accept}\r\nauthorization: {auth}\r\n\r\n",
            self.authority
        );
        for _ in 0..2 {
            if let Some(body) = self.exchange(request.as_bytes(), path) {
                return serde_json::from_slice(body).unwrap_or_else(|e| panic!("{path}: {e}"));
            }
            *self = Connection::open(&self.authority);
        }
        panic!("GET {path}: the connection closed twice")
    }

    /// The response's body, or `None` if the connection closed before it was complete.
    fn exchange(&mut self, request: &[u8], path: &str) -> Option<&[u8]> {
        self.stream.write_all(request).ok()?;
        self.buf.clear();
        let (head, length) = loop {
            self.fill()?;
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut response = httparse::Response::new(&mut headers);
            let parsed = response
                .parse(&self.buf)
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            if let httparse::Status::Complete(head) = parsed {
                assert_eq!(response.code, Some(200), "GET {path}");
                let length = response
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| std::str::from_utf8(h.value).ok()?.parse::<usize>().ok())
                    .unwrap_or_else(|| panic!("GET {path}: no Content-Length"));
                break (head, length);
            }
        };
        while self.buf.len() < head + length {
            self.fill()?;
        }
        Some(&self.buf[head..head + length])
    }

    fn fill(&mut self) -> Option<()> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Some(())
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, profile, token, n] = &args[..] else {
        panic!("usage: bench-floor-blocking BASE_URL PROFILE TOKEN N");
    };
    let n: usize = n.parse().unwrap_or_else(|e| panic!("N: {e}"));
    let base = base.trim_end_matches('/');
    let rest = base
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("{base}: plain http:// only"));
    let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let mut connection = Connection::open(authority);
    let accept = format!("application/hal+json; profile=\"{profile}\"");
    let auth = format!("Bearer {token}");
    let root_path = if prefix.is_empty() {
        "/".to_owned()
    } else {
        format!("/{prefix}/")
    };
    let root = connection.get(&root_path, &accept, &auth);
    let links = root["_links"]
        .as_object()
        .unwrap_or_else(|| panic!("no _links"));
    let (_, link) = links
        .iter()
        .find(|(rel, _)| rel.ends_with("bench-mandate"))
        .unwrap_or_else(|| panic!("no bench-mandate link"));
    let href = link["href"].as_str().unwrap_or_else(|| panic!("no href"));
    let template = href
        .strip_prefix(&format!("http://{authority}"))
        .unwrap_or_else(|| panic!("{href}: not on {authority}"))
        .to_owned();
    let ids: Vec<String> = (0..16).map(|i| format!("MD{i:04}")).collect();
    let mut follow = |i: usize| {
        let path = template.replace("{id}", &ids[i % ids.len()]);
        let doc = connection.get(&path, &accept, &auth);
        let status = doc["status"].as_str().unwrap_or_default().len();
        let creditor = doc["_links"]["creditor"]["href"]
            .as_str()
            .unwrap_or_default()
            .len();
        assert!(status > 0 && creditor > 0);
    };
    for i in 0..WARMUP {
        follow(i);
    }
    let start = Instant::now();
    for i in 0..n {
        follow(i);
    }
    println!("{:.2}", start.elapsed().as_secs_f64() * 1e6 / n as f64);
}
