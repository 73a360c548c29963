//! `respond_next`: an answer given byte for byte, streamed chunk by chunk so that an 80 MB body
//! costs one chunk of memory, optionally slow (a pause between chunks) or cut short (the
//! connection is aborted after N bytes, `Content-Length` still announcing the whole).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::http::{header, HeaderName, HeaderValue, Response, StatusCode};

use super::body::{self, Body};
use super::faults::Raw;

const FLUSH_PAUSE: Duration = Duration::from_millis(50);

/// Where the stream is: chunks sent so far and body bytes sent so far.
struct Progress {
    raw: Arc<Raw>,
    chunks: u64,
    sent: u64,
    cut: bool,
}

pub fn response(raw: &Arc<Raw>, hal_content_type: &str) -> Response<Body> {
    let progress = Progress {
        raw: Arc::clone(raw),
        chunks: 0,
        sent: 0,
        cut: false,
    };
    let stream = futures_util::stream::unfold(progress, next_chunk);
    let mut response = Response::new(body::stream(stream));
    *response.status_mut() = StatusCode::from_u16(raw.status).unwrap_or(StatusCode::OK);
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(hal_content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    for (name, value) in &raw.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(n, v);
        }
    }
    // Framing is ours: a stream has no size hint, so without this hyper sends it chunked.
    if !raw.chunked {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(raw.length()));
    }
    response
}

async fn next_chunk(mut p: Progress) -> Option<(Result<Bytes, std::io::Error>, Progress)> {
    if p.cut {
        return None;
    }
    if p.raw
        .cut_after
        .is_some_and(|limit| p.sent >= limit && p.sent < p.raw.length())
    {
        // An error makes hyper abort the connection: the client sees a body cut short. The
        // pause first lets hyper flush the head and the bytes so far (an error before the
        // flush would look like a connection dropped before any answer).
        p.cut = true;
        tokio::time::sleep(FLUSH_PAUSE).await;
        let cut = std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut_after");
        return Some((Err(cut), p));
    }
    if p.chunks >= p.raw.repeat {
        return None;
    }
    if p.chunks > 0 && !p.raw.chunk_delay.is_zero() {
        tokio::time::sleep(p.raw.chunk_delay).await;
    }
    let mut chunk = p.raw.body.clone();
    if let Some(limit) = p.raw.cut_after {
        let room = usize::try_from(limit - p.sent).unwrap_or(usize::MAX);
        chunk.truncate(room);
    }
    p.chunks += 1;
    p.sent += chunk.len() as u64;
    Some((Ok(chunk), p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn raw(body: &'static [u8], repeat: u64, cut_after: Option<u64>) -> Arc<Raw> {
        Arc::new(Raw {
            status: 200,
            headers: Vec::new(),
            body: Bytes::from_static(body),
            repeat,
            cut_after,
            chunk_delay: Duration::ZERO,
            chunked: false,
        })
    }

    /// The chunks sent, then whether the stream ended in an error (the cut).
    async fn run(raw: Arc<Raw>) -> (Vec<u8>, bool) {
        let progress = Progress {
            raw,
            chunks: 0,
            sent: 0,
            cut: false,
        };
        let mut stream = Box::pin(futures_util::stream::unfold(progress, next_chunk));
        let mut sent = Vec::new();
        while let Some(item) = stream.next().await {
            match item {
                Ok(chunk) => sent.extend_from_slice(&chunk),
                Err(_) => return (sent, true),
            }
        }
        (sent, false)
    }

    #[tokio::test]
    async fn repeats_and_cuts() {
        assert_eq!(run(raw(b"ab", 3, None)).await, (b"ababab".to_vec(), false));
        assert_eq!(run(raw(b"ab", 3, Some(3))).await, (b"aba".to_vec(), true));
        assert_eq!(run(raw(b"ab", 3, Some(4))).await, (b"abab".to_vec(), true));
        assert_eq!(run(raw(b"ab", 3, Some(0))).await, (Vec::new(), true));
        // Cutting at or beyond the whole body is no cut.
        assert_eq!(
            run(raw(b"ab", 3, Some(6))).await,
            (b"ababab".to_vec(), false)
        );
        let response = response(&raw(b"ab", 3, None), "application/hal+json");
        assert_eq!(response.headers()[header::CONTENT_LENGTH], "6");
    }
}
