//! The sandbox's response body: hyper's boxed body, made from bytes or from a stream of chunks
//! (`respond_next` streams what it must not hold whole).

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;

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
