//! The sandbox's response body: hyper's boxed body, made from bytes or from a stream of chunks
//! (`respond_next` streams what it must not hold whole).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, SizeHint};

/// An error ends the body early, and hyper then aborts the connection (`cut_after`).
pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A body of these bytes (with a `Content-Length`).
pub fn full(bytes: Bytes) -> Body {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A body sent chunk by chunk, as the stream yields them.
pub fn stream<S>(chunks: S) -> Body
where
    S: Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static,
{
    StreamBody::new(chunks.map(|chunk| chunk.map(Frame::data))).boxed_unsync()
}

/// A body that holds `T` until it is dropped (sent, or abandoned with its connection), and is
/// otherwise the body itself: its frames, its end and its size (so its `Content-Length`).
pub struct Holding<T> {
    body: Body,
    _held: T,
}

impl<T> Holding<T> {
    pub fn new(body: Body, held: T) -> Self {
        Self { body, _held: held }
    }
}

impl<T: Unpin> hyper::body::Body for Holding<T> {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
