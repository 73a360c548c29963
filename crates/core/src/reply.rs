//! A call's response with its body parsed as a HAL document (`hal::parse`): what the bindings
//! wrap for Python. A body that is no document fails the call, and the attempt that got it (its
//! log line and span say so).

use http::header::HeaderMap;

use crate::error::Result;
use crate::hal;
use crate::records::{self, Attempt};
use crate::wire::Response;

/// A response whose body is a HAL document, or empty.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    /// `None` for an empty body (a 201, 202 or 204: `Client::send` refuses it elsewhere).
    pub document: Option<hal::Document>,
}

impl Reply {
    /// Parse `response`, the answer to a call of `method` whose attempts are in `log`. Without
    /// the GIL, in the request's future: a failure must mark its attempt before the attempts
    /// are observed.
    pub fn parse(method: &str, mut response: Response, log: &mut [Attempt]) -> Result<Reply> {
        let document = if response.body.is_empty() {
            None
        } else {
            // The URL and the header pairs only for the error: most bodies parse.
            let parsed = hal::parse(std::mem::take(&mut response.body)).map_err(|e| {
                let (url, pairs) = (response.url.as_str(), response.header_pairs());
                e.with_request(method, url)
                    .with_response(response.status, pairs)
                    .with_request_id(response.request_id.as_deref())
                    .with_outcome_unknown(response.after_processed_write)
            });
            match parsed {
                Ok(document) => Some(document),
                Err(error) => {
                    records::fail_last(log, &error);
                    return Err(error);
                }
            }
        };
        Ok(Reply {
            status: response.status,
            headers: response.headers,
            document,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use bytes::Bytes;
    use std::time::Duration;

    fn response(body: &'static [u8], after_processed_write: bool) -> Response {
        Response {
            status: 201,
            url: url::Url::parse("https://h/things/2").unwrap(),
            headers: HeaderMap::new(),
            body: Bytes::from_static(body),
            request_id: Some("r-1".into()),
            after_processed_write,
        }
    }

    fn answered() -> Vec<Attempt> {
        vec![Attempt {
            method: "POST".into(),
            url: "https://h/things".into(),
            status: Some(201),
            elapsed: Duration::ZERO,
            attempt: 1,
            error: None,
            started_unix_ns: 0,
            ended_unix_ns: 0,
            token: false,
            resend_count: 0,
            error_kind: None,
            request_id: None,
        }]
    }

    #[test]
    fn a_document_is_indexed_and_an_empty_body_is_none() {
        let mut log = answered();
        let reply = Reply::parse("POST", response(br#"{"id": 2}"#, false), &mut log).unwrap();
        assert_eq!(reply.status, 201);
        assert_eq!(reply.document.unwrap().get("id"), Some(&b"2"[..]));
        let reply = Reply::parse("POST", response(b"", false), &mut log).unwrap();
        assert!(reply.document.is_none());
        assert_eq!(log[0].error, None);
    }

    #[test]
    fn a_body_that_is_no_document_fails_the_call_and_its_attempt() {
        let mut log = answered();
        let error = Reply::parse("POST", response(b"[1, 2", true), &mut log).unwrap_err();
        match &error {
            Error::Protocol {
                method: Some(method),
                response: Some(facts),
                ..
            } => {
                assert_eq!(method, "POST");
                assert_eq!(facts.status, 201);
                assert_eq!(facts.request_id.as_deref(), Some("r-1"));
            }
            other => panic!("expected a protocol error with its response, got {other:?}"),
        }
        // An earlier hop processed the write: the call's outcome is unknown
        // (docs/guarantees.md#outcome).
        assert!(error.outcome_unknown());
        assert_eq!(log[0].error_kind, Some("ProtocolError"));
    }
}
