//! Injected faults: the next N matching requests fail, lose their connection, wait, or get a
//! broken body. A fault without a path matches every API request but not the token endpoint,
//! so `fail_next()` hits the request under test rather than the token fetch before it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::journal::lock;

/// What happens to a request instead of its normal answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Answer with this status and a `{"code","message"}` body (plus extra headers).
    Fail {
        status: u16,
        headers: Vec<(String, String)>,
    },
    /// Close the connection without answering.
    Drop,
    /// Answer 200 with a body that is not valid JSON.
    Malformed,
    /// Answer byte for byte as told (`respond_next`).
    Raw(Arc<Raw>),
}

/// A reply given byte for byte, for the faults a well-behaved handler cannot produce: bodies
/// that are not JSON or not UTF-8, huge bodies streamed without being held, slow bodies and
/// bodies cut short.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    pub status: u16,
    /// Sent as given, after the HAL `Content-Type` default (which a `Content-Type` replaces).
    pub headers: Vec<(String, String)>,
    /// One chunk of the body; it is sent `repeat` times.
    pub body: Bytes,
    pub repeat: u64,
    /// Send only this many bytes of the body, then cut the connection.
    pub cut_after: Option<u64>,
    /// Pause before every chunk but the first.
    pub chunk_delay: Duration,
    /// Chunked transfer encoding instead of a `Content-Length` of the whole body.
    pub chunked: bool,
}

impl Raw {
    /// The length of the whole body (what `Content-Length` announces).
    pub fn length(&self) -> u64 {
        (self.body.len() as u64).saturating_mul(self.repeat)
    }
}

#[derive(Debug)]
struct Armed<T> {
    what: T,
    remaining: u32,
    path: Option<String>,
}

#[derive(Debug, Default)]
pub struct Faults {
    delays: Mutex<Vec<Armed<Duration>>>,
    outcomes: Mutex<Vec<Armed<Fault>>>,
}

/// Take one use of the first armed fault that matches `path`, removing it when used up.
fn take<T: Clone>(list: &Mutex<Vec<Armed<T>>>, path: &str, is_token: bool) -> Option<T> {
    let mut list = lock(list);
    let index = list.iter().position(|f| match &f.path {
        Some(p) => p == path,
        None => !is_token,
    })?;
    let fault = &mut list[index];
    let what = fault.what.clone();
    fault.remaining -= 1;
    if fault.remaining == 0 {
        list.remove(index);
    }
    Some(what)
}

impl Faults {
    pub fn add_delay(&self, delay: Duration, count: u32, path: Option<String>) {
        if count > 0 {
            lock(&self.delays).push(Armed {
                what: delay,
                remaining: count,
                path,
            });
        }
    }

    pub fn add_outcome(&self, outcome: Fault, count: u32, path: Option<String>) {
        if count > 0 {
            lock(&self.outcomes).push(Armed {
                what: outcome,
                remaining: count,
                path,
            });
        }
    }

    /// The faults for one request: at most one delay and at most one outcome, so a delay
    /// combines with a failure armed for the same request.
    pub fn take(&self, path: &str, is_token: bool) -> (Option<Duration>, Option<Fault>) {
        (
            take(&self.delays, path, is_token),
            take(&self.outcomes, path, is_token),
        )
    }

    pub fn clear(&self) {
        lock(&self.delays).clear();
        lock(&self.outcomes).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_paths() {
        let faults = Faults::default();
        faults.add_outcome(Fault::Drop, 2, None);
        faults.add_outcome(Fault::Malformed, 1, Some("/x".into()));
        faults.add_delay(Duration::from_millis(5), 1, Some("/oauth/token".into()));
        assert_eq!(
            faults.take("/oauth/token", true),
            (Some(Duration::from_millis(5)), None)
        );
        assert_eq!(faults.take("/x", false).1, Some(Fault::Drop));
        assert_eq!(faults.take("/y", false).1, Some(Fault::Drop));
        assert_eq!(faults.take("/y", false).1, None);
        assert_eq!(faults.take("/x", false).1, Some(Fault::Malformed));
        assert_eq!(faults.take("/x", false), (None, None));
    }
}
