//! The loop of attempts (`rp_core::attempt_loop::send`) driven over a scripted `Wire`: each
//! exchange answers or fails as the test says, in the phase it says, so every retry and
//! `outcome_unknown` rule of docs/guarantees.md#no-double-send and docs/guarantees.md#outcome
//! is checked without a socket: GET retried after a wire failure and on 429/502/503/504
//! (`Retry-After` honoured), anything that wrote nothing retried whatever its method, a write
//! that may have been written never sent again, the deadline kept, every attempt logged.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::Method;

use rp_core::attempt_loop::{send, Deadline, Policy};
use rp_core::error::{Error, Result};
use rp_core::records::{Attempt, PENDING};
use rp_core::wire::{Driver, Limits, Outgoing, Phase, Response, Wire, WireError, WireFailure};

/// What one exchange of the scripted wire does.
#[derive(Clone)]
enum Step {
    /// A complete response with this status and these headers.
    Answer(u16, &'static [(&'static str, &'static str)]),
    /// A failure on the wire in this phase, a timeout or not.
    Fail(Phase, bool),
    /// A complete answer that the wire's limits refuse.
    Refuse(fn() -> Error),
    /// No answer: the exchange takes its whole `timeout`, then times out awaiting the head.
    Hang,
}

/// A `Wire` that plays `steps` in order (the last one again once they run out) and remembers
/// the limits each exchange was given.
struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    seen: Arc<Mutex<Vec<Limits>>>,
}

impl Scripted {
    fn new(steps: &[Step]) -> Self {
        Scripted {
            steps: Mutex::new(steps.iter().cloned().collect()),
            seen: Arc::default(),
        }
    }

    fn exchanges(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

impl Wire for Scripted {
    fn exchange(
        &self,
        request: &Outgoing,
        _driver: Driver,
        limits: Limits,
    ) -> impl Future<Output = std::result::Result<Response, WireError>> + Send {
        self.seen.lock().unwrap().push(limits);
        let step = {
            let mut steps = self.steps.lock().unwrap();
            if steps.len() > 1 {
                steps.pop_front().unwrap()
            } else {
                steps.front().cloned().unwrap()
            }
        };
        let url = request.url.clone();
        async move {
            match step {
                Step::Answer(status, headers) => {
                    let mut map = HeaderMap::new();
                    for (name, value) in headers {
                        map.insert(*name, HeaderValue::from_static(value));
                    }
                    Ok(Response {
                        status,
                        url,
                        headers: map,
                        body: Bytes::new(),
                        request_id: None,
                        after_processed_write: false,
                    })
                }
                Step::Fail(phase, timeout) => Err(WireError::Failed(WireFailure {
                    phase,
                    timeout,
                    detail: "scripted".into(),
                })),
                Step::Refuse(error) => Err(WireError::Refused(error())),
                Step::Hang => {
                    tokio::time::sleep(limits.timeout).await;
                    Err(WireError::Failed(WireFailure {
                        phase: Phase::AwaitingHead,
                        timeout: true,
                        detail: "scripted".into(),
                    }))
                }
            }
        }
    }
}

const POLICY: Policy = Policy {
    timeout: Duration::from_secs(10),
    connect_timeout: Duration::from_secs(5),
    retries: 2,
};
const OK: Step = Step::Answer(200, &[]);
const WRITTEN: [Phase; 3] = [Phase::Writing, Phase::AwaitingHead, Phase::ReadingBody];

async fn run(
    wire: &Scripted,
    method: Method,
    deadline: Duration,
) -> (Result<Response>, Vec<Attempt>) {
    let request = Outgoing {
        method,
        url: url::Url::parse("http://127.0.0.1:1/things").unwrap(),
        headers: HeaderMap::new(),
        body: None,
    };
    let mut log = Vec::new();
    let outcome = send(
        wire,
        &request,
        POLICY,
        Driver::ThisThread,
        &mut log,
        Deadline::after(deadline),
    )
    .await;
    (outcome, log)
}

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_get_is_sent_again_after_a_wire_failure_in_any_phase() {
    for phase in [
        Phase::BeforeWrite,
        Phase::Writing,
        Phase::AwaitingHead,
        Phase::ReadingBody,
    ] {
        let wire = Scripted::new(&[Step::Fail(phase, false), OK]);
        let (outcome, log) = run(&wire, Method::GET, LONG).await;
        assert_eq!(outcome.unwrap().status, 200, "{phase:?}");
        assert_eq!(wire.exchanges(), 2, "{phase:?}");
        assert_eq!(log.len(), 2);
    }
}

#[tokio::test]
async fn a_get_is_sent_again_on_429_502_503_504_and_not_on_other_statuses() {
    for status in [429, 502, 503, 504] {
        let wire = Scripted::new(&[Step::Answer(status, &[("retry-after", "0")]), OK]);
        let (outcome, _) = run(&wire, Method::GET, LONG).await;
        assert_eq!(outcome.unwrap().status, 200, "{status}");
        assert_eq!(wire.exchanges(), 2, "{status}");
    }
    for status in [400, 404, 500, 501] {
        let wire = Scripted::new(&[Step::Answer(status, &[]), OK]);
        let (outcome, _) = run(&wire, Method::GET, LONG).await;
        assert_eq!(outcome.unwrap().status, status);
        assert_eq!(wire.exchanges(), 1, "{status}");
    }
}

#[tokio::test]
async fn retries_stop_at_the_policy_and_give_the_last_answer() {
    let wire = Scripted::new(&[Step::Answer(503, &[("retry-after", "0")])]);
    let (outcome, log) = run(&wire, Method::GET, LONG).await;
    assert_eq!(outcome.unwrap().status, 503);
    assert_eq!(wire.exchanges(), 1 + POLICY.retries as usize);
    let numbers: Vec<u32> = log.iter().map(|a| a.attempt).collect();
    assert_eq!(numbers, [1, 2, 3]);
}

#[tokio::test]
async fn retry_after_is_waited_for() {
    let wire = Scripted::new(&[Step::Answer(503, &[("retry-after", "1")]), OK]);
    let started = Instant::now();
    let (outcome, _) = run(&wire, Method::GET, LONG).await;
    assert_eq!(outcome.unwrap().status, 200);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn what_wrote_nothing_is_sent_again_whatever_its_method() {
    for method in [Method::GET, Method::POST, Method::PATCH] {
        for timeout in [false, true] {
            let wire = Scripted::new(&[
                Step::Fail(Phase::BeforeWrite, timeout),
                Step::Answer(201, &[]),
            ]);
            let (outcome, _) = run(&wire, method.clone(), LONG).await;
            assert_eq!(outcome.unwrap().status, 201, "{method} timeout={timeout}");
            assert_eq!(wire.exchanges(), 2);
        }
    }
}

#[tokio::test]
async fn a_write_that_may_have_been_written_is_never_sent_again_and_its_outcome_is_unknown() {
    for method in [Method::POST, Method::PATCH] {
        for phase in WRITTEN {
            for timeout in [false, true] {
                let wire = Scripted::new(&[Step::Fail(phase, timeout), Step::Answer(201, &[])]);
                let (outcome, log) = run(&wire, method.clone(), LONG).await;
                let error = outcome.unwrap_err();
                assert!(
                    error.outcome_unknown(),
                    "{method} {phase:?} timeout={timeout}"
                );
                assert_eq!(matches!(error, Error::Timeout { .. }), timeout);
                assert_eq!(wire.exchanges(), 1, "{method} {phase:?}");
                assert_eq!(log.len(), 1);
            }
        }
        // A complete answer is never in doubt, and a write is not sent again on a 503.
        let wire = Scripted::new(&[
            Step::Answer(503, &[("retry-after", "0")]),
            Step::Answer(201, &[]),
        ]);
        let (outcome, _) = run(&wire, method.clone(), LONG).await;
        assert_eq!(outcome.unwrap().status, 503);
        assert_eq!(wire.exchanges(), 1);
    }
}

#[tokio::test]
async fn a_get_that_timed_out_after_writing_is_not_sent_again_and_its_outcome_is_known() {
    for phase in WRITTEN {
        let wire = Scripted::new(&[Step::Fail(phase, true), OK]);
        let (outcome, _) = run(&wire, Method::GET, LONG).await;
        let error = outcome.unwrap_err();
        assert!(matches!(error, Error::Timeout { .. }));
        assert!(!error.outcome_unknown());
        assert_eq!(wire.exchanges(), 1, "{phase:?}");
    }
}

#[tokio::test]
async fn a_refused_answer_is_sent_again_only_for_a_get_whose_body_failed_to_decode() {
    let transport = || Error::Transport {
        method: "GET".into(),
        url: "http://127.0.0.1:1/things".into(),
        message: "gzip".into(),
        outcome_unknown: false,
    };
    let wire = Scripted::new(&[Step::Refuse(transport), OK]);
    assert_eq!(run(&wire, Method::GET, LONG).await.0.unwrap().status, 200);
    assert_eq!(wire.exchanges(), 2);
    let wire = Scripted::new(&[Step::Refuse(transport), OK]);
    assert!(run(&wire, Method::POST, LONG).await.0.is_err());
    assert_eq!(wire.exchanges(), 1);
    let protocol = || Error::Protocol {
        method: Some("GET".into()),
        url: None,
        message: "over max_response_size".into(),
        response: None,
    };
    let wire = Scripted::new(&[Step::Refuse(protocol), OK]);
    assert!(run(&wire, Method::GET, LONG).await.0.is_err());
    assert_eq!(wire.exchanges(), 1);
}

#[tokio::test]
async fn an_attempt_is_cut_at_the_deadline() {
    let wire = Scripted::new(&[Step::Hang]);
    let started = Instant::now();
    let (outcome, _) = run(&wire, Method::POST, Duration::from_millis(300)).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    let limits = wire.seen.lock().unwrap()[0];
    assert!(limits.timeout <= Duration::from_millis(300), "{limits:?}");
    let error = outcome.unwrap_err();
    assert!(error.to_string().contains("total_timeout"), "{error}");
    assert!(
        error.outcome_unknown(),
        "the POST was written when it was cut"
    );
    assert_eq!(wire.exchanges(), 1);
}

#[tokio::test]
async fn no_pause_is_taken_that_would_pass_the_deadline() {
    let wire = Scripted::new(&[Step::Answer(503, &[("retry-after", "5")]), OK]);
    let started = Instant::now();
    let (outcome, _) = run(&wire, Method::GET, Duration::from_secs(1)).await;
    assert_eq!(outcome.unwrap().status, 503, "the last answer, at once");
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(wire.exchanges(), 1);
}

#[tokio::test]
async fn every_attempt_is_logged_with_its_outcome() {
    let wire = Scripted::new(&[
        Step::Fail(Phase::BeforeWrite, false),
        Step::Answer(503, &[("retry-after", "0")]),
        OK,
    ]);
    let (outcome, log) = run(&wire, Method::GET, LONG).await;
    assert_eq!(outcome.unwrap().status, 200);
    assert_eq!(log.len(), 3);
    assert_eq!(log[0].status, None);
    assert!(log[0]
        .error
        .as_deref()
        .unwrap()
        .contains("connection failed"));
    assert_eq!(log[0].error_kind, Some("TransportError"));
    assert_eq!(log[1].status, Some(503));
    assert_eq!(log[2].status, Some(200));
    for (n, attempt) in log.iter().enumerate() {
        assert_eq!(attempt.attempt as usize, n + 1);
        assert_eq!(attempt.method, "GET");
        assert_ne!(attempt.ended_unix_ns, PENDING);
        assert!(attempt.ended_unix_ns >= attempt.started_unix_ns);
    }
}
