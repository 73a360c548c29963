//! The request journal: every request the sandbox received, in arrival order, so tests can
//! assert on what a client actually sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use serde_json::Value;

/// One received request. Recorded on arrival; `status` and `error` are filled in once the
/// answer is known (a dropped connection leaves `status` empty).
#[derive(Debug)]
pub struct Entry {
    pub method: String,
    pub path: String,
    /// The raw query string, without `?` (empty when absent).
    pub query_string: String,
    /// Decoded query pairs, in order, duplicates kept.
    pub query: Vec<(String, String)>,
    /// Lower-case names, in the order received, duplicates kept.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// The body parsed as JSON when it is JSON, else `None`.
    pub json: Option<Value>,
    /// Virtual time of arrival, in seconds since the server was created.
    pub time: f64,
    pub status: OnceLock<u16>,
    /// For a failing route handler: its traceback or message.
    pub error: OnceLock<String>,
}

impl Entry {
    /// The first value of a header (names are matched case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn is_token_request(&self) -> bool {
        self.path == super::TOKEN_PATH
    }
}

/// A bounded log: the oldest entries go once `limit` is reached, so a long-running `serve`
/// under a benchmark does not grow without end.
#[derive(Debug)]
pub struct Journal {
    entries: Mutex<VecDeque<Arc<Entry>>>,
    limit: usize,
}

impl Journal {
    pub fn new(limit: usize) -> Self {
        Journal {
            entries: Mutex::new(VecDeque::new()),
            limit,
        }
    }

    pub fn record(&self, entry: Arc<Entry>) {
        if self.limit == 0 {
            return;
        }
        let mut entries = lock(&self.entries);
        while entries.len() >= self.limit {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// A snapshot, oldest first (cheap: entries are shared, not copied).
    pub fn entries(&self) -> Vec<Arc<Entry>> {
        lock(&self.entries).iter().cloned().collect()
    }

    pub fn clear(&self) {
        lock(&self.entries).clear();
    }
}

/// Lock a mutex, ignoring poisoning: every critical section here is a few plain assignments
/// that cannot leave the data half-updated.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str) -> Arc<Entry> {
        Arc::new(Entry {
            method: "GET".into(),
            path: path.into(),
            query_string: String::new(),
            query: vec![],
            headers: vec![("accept".into(), "x".into())],
            body: Bytes::new(),
            json: None,
            time: 0.0,
            status: OnceLock::new(),
            error: OnceLock::new(),
        })
    }

    #[test]
    fn keeps_the_newest_entries_up_to_the_limit() {
        let journal = Journal::new(2);
        for p in ["/a", "/b", "/c"] {
            journal.record(entry(p));
        }
        let paths: Vec<_> = journal.entries().iter().map(|e| e.path.clone()).collect();
        assert_eq!(paths, ["/b", "/c"]);
        assert_eq!(journal.entries()[0].header("Accept"), Some("x"));
        journal.clear();
        assert!(journal.entries().is_empty());
    }
}
