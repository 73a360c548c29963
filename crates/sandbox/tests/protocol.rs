//! The protocol's rules (docs/concepts.md#tokens, docs/guarantees.md) checked in `cargo test`:
//! `rp_core::client::Client` against a real sandbox on loopback, with what the server received read
//! from its journal. Here because the sandbox depends on the core (a dev-dependency of the core on
//! the sandbox would build the core twice).

// The helpers below are test code too: a setup step that fails stops the test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::HeaderValue;
use serde_json::json;

use rp_core::auth::{CredentialSource, Credentials};
use rp_core::client::{Client, ClientConfig};
use rp_core::error::{Error, Result};
use rp_core::hyper_wire::WireSettings;
use rp_core::proxy::ProxySetting;
use rp_core::records::Attempt;
use rp_core::request::{CallOptions, Request, Target, Variables};
use rp_core::runtime::block_on_here;
use rp_core::tls::Verify;
use rp_core::wire::{Driver, Response};
use rp_sandbox::faults::Raw;
use rp_sandbox::store::HandlerReply;
use rp_sandbox::{Config, Sandbox, Urls};

/// A running sandbox that knows the app, serves `/things/1` and creates things at `/things`
/// (answered 201).
fn sandbox_on(port: u16) -> (Sandbox, Urls) {
    let sandbox = Sandbox::new(Config {
        port,
        ..Config::default()
    });
    let urls = sandbox.start().unwrap();
    sandbox.add_app("app", "secret").unwrap();
    sandbox
        .add_resource("/things/1", &json!({"id": 1}))
        .unwrap();
    sandbox
        .route(
            "post",
            "/things",
            Arc::new(|_| Box::pin(async { Ok(HandlerReply::json(201, &json!({"id": 2}))) })),
        )
        .unwrap();
    (sandbox, urls)
}

fn sandbox() -> (Sandbox, Urls) {
    sandbox_on(0)
}

/// A client of `base_url` with `retries` and an attempt timeout of `timeout` seconds.
fn client(base_url: &str, profile: &str, retries: u32, timeout: f64) -> Client {
    Client::new(ClientConfig {
        base_url: format!("{base_url}/"),
        profile: profile.to_owned(),
        credentials: CredentialSource::Fixed(Credentials::App {
            app_name: "app".into(),
            app_secret: "secret".into(),
        }),
        timeout,
        retries,
        token_leeway: 30.0,
        allow_http: false,
        total_timeout: 10.0,
        headers: Vec::new(),
        token_store: None,
        wire: WireSettings {
            verify: Verify::Off,
            connect_timeout: Duration::from_secs(2),
            proxy: ProxySetting::Off,
            user_agent: HeaderValue::from_static("rp-protocol-tests"),
            max_response_size: 1 << 20,
            request_id_headers: Arc::new([]),
        },
    })
    .unwrap()
}

fn client_of(urls: &Urls, retries: u32) -> Client {
    client(&urls.base_url, &urls.profile, retries, 5.0)
}

fn request(method: &str, href: &str, options: Option<CallOptions>) -> Request {
    let target = Target::new(href.to_owned(), None, Variables::default(), None).unwrap();
    let mut request = Request::new(method, target).unwrap();
    if method == "POST" {
        request.body = Some(Bytes::from_static(b"{\"name\":\"thing\"}"));
    }
    request.options = options.map(Arc::new);
    request
}

/// One call on this thread's runtime: its outcome and its attempts.
fn call(client: &Client, request: Request) -> (Result<Response>, Vec<Attempt>) {
    let prepared = client.prepare(request).unwrap();
    let mut log = Vec::new();
    let mut store_log = Vec::new();
    let outcome =
        block_on_here(client.send(prepared, Driver::ThisThread, None, &mut log, &mut store_log))
            .unwrap();
    (outcome, log)
}

/// What the server received, token requests left out: (method, path, Authorization).
fn received(sandbox: &Sandbox) -> Vec<(String, String, String)> {
    sandbox
        .requests()
        .iter()
        .filter(|e| !e.is_token_request())
        .map(|e| {
            let auth = e.header("authorization").unwrap_or_default().to_owned();
            (e.method.clone(), e.path.clone(), auth)
        })
        .collect()
}

fn methods_and_paths(sandbox: &Sandbox) -> Vec<(String, String)> {
    received(sandbox)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect()
}

fn pair(method: &str, path: &str) -> (String, String) {
    (method.to_owned(), path.to_owned())
}

fn outcome_unknown(outcome: &Result<Response>) -> bool {
    outcome.as_ref().err().is_some_and(Error::outcome_unknown)
}

/// A body that is cut after 10 of its 200 bytes (`Content-Length` announces them all).
fn cut_body() -> Raw {
    Raw {
        status: 200,
        headers: Vec::new(),
        body: Bytes::from(format!("{{\"pad\":\"{}\"}}", "x".repeat(190))),
        repeat: 1,
        cut_after: Some(10),
        chunk_delay: Duration::ZERO,
        chunked: false,
    }
}

/// A loopback port where nothing listens (bound, then released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_post_answered_303_is_followed_by_a_get_and_never_sent_again() {
    let (sandbox, urls) = sandbox();
    sandbox
        .route(
            "post",
            "/orders",
            Arc::new(|_| {
                Box::pin(async {
                    Ok(HandlerReply::json(303, &json!({})).with_header("location", "/things/1"))
                })
            }),
        )
        .unwrap();
    let client = client_of(&urls, 2);

    let (outcome, _) = call(&client, request("POST", "/orders", None));
    let response = outcome.unwrap();
    assert_eq!(response.status, 200);
    assert!(response.after_processed_write);
    assert_eq!(
        methods_and_paths(&sandbox),
        [pair("POST", "/orders"), pair("GET", "/things/1")]
    );
    let get = &sandbox.requests()[2];
    assert!(get.body.is_empty(), "the GET after a 303 carries no body");
    assert_eq!(get.header("content-type"), None);

    // The GET fails and is retried as a GET: the POST was processed and is never sent again,
    // so the call's outcome is unknown.
    sandbox.clear_requests();
    sandbox
        .fail_next(503, 3, Some("/things/1"), Vec::new())
        .unwrap();
    let (outcome, _) = call(&client, request("POST", "/orders", None));
    match &outcome {
        Err(Error::Http(failure)) => assert_eq!(failure.status, 503),
        other => panic!("expected the GET's 503, got {other:?}"),
    }
    assert!(outcome_unknown(&outcome));
    assert_eq!(
        methods_and_paths(&sandbox),
        [
            pair("POST", "/orders"),
            pair("GET", "/things/1"),
            pair("GET", "/things/1"),
            pair("GET", "/things/1"),
        ]
    );
}

#[test]
fn a_401_on_the_second_hop_replays_that_hop_only() {
    let (sandbox, urls) = sandbox();
    // The POST is processed, then every token issued so far stops being accepted: the GET
    // that follows the 303 carries a token the server now refuses.
    sandbox
        .route(
            "post",
            "/orders",
            Arc::new(|request| {
                let shared = Arc::clone(&request.shared);
                Box::pin(async move {
                    let now = shared.clock.now();
                    let mut tokens = shared.tokens.lock().unwrap_or_else(PoisonError::into_inner);
                    tokens.expire_all(now);
                    Ok(HandlerReply::json(303, &json!({})).with_header("location", "/things/1"))
                })
            }),
        )
        .unwrap();
    let client = client_of(&urls, 2);

    let (outcome, _) = call(&client, request("POST", "/orders", None));
    assert_eq!(outcome.unwrap().status, 200);
    let sent = received(&sandbox);
    let hops: Vec<_> = sent.iter().map(|(m, p, _)| pair(m, p)).collect();
    assert_eq!(
        hops,
        [
            pair("POST", "/orders"),
            pair("GET", "/things/1"),
            pair("GET", "/things/1"),
        ]
    );
    assert_eq!(sandbox.token_requests().len(), 2);
    // The first two hops carried the first token, the replayed GET a new one.
    assert_eq!(sent[0].2, sent[1].2);
    assert_ne!(sent[1].2, sent[2].2);
    assert!(sent[2].2.starts_with("Bearer "));
}

#[test]
fn a_failing_token_request_is_shared_by_every_waiter() {
    let (sandbox, urls) = sandbox();
    // Slow enough that every call is waiting while the one token request is under way.
    sandbox.delay_next(Duration::from_millis(200), 1, Some("/oauth/token"));
    sandbox
        .fail_next(503, 8, Some("/oauth/token"), Vec::new())
        .unwrap();
    let client = client_of(&urls, 2);

    let one = || call_async(&client);
    let outcomes = block_on_here(async { tokio::join!(one(), one(), one(), one()) }).unwrap();
    let outcomes = [outcomes.0, outcomes.1, outcomes.2, outcomes.3];

    assert_eq!(sandbox.token_requests().len(), 1);
    assert!(
        received(&sandbox).is_empty(),
        "no call went on without a token"
    );
    let first = outcomes[0].as_ref().err().map(ToString::to_string);
    for outcome in &outcomes {
        match outcome {
            Err(Error::Http(failure)) => {
                assert_eq!(failure.status, 503);
                assert!(!failure.outcome_unknown);
            }
            other => panic!("expected the token request's 503, got {other:?}"),
        }
        assert_eq!(outcome.as_ref().err().map(ToString::to_string), first);
    }
}

async fn call_async(client: &Client) -> Result<Response> {
    let prepared = client.prepare(request("GET", "/things/1", None)).unwrap();
    let mut log = Vec::new();
    let mut store_log = Vec::new();
    client
        .send(prepared, Driver::ThisThread, None, &mut log, &mut store_log)
        .await
}

#[test]
fn a_post_whose_connect_is_refused_is_sent_again_once_the_server_listens() {
    let port = free_port();
    let (sandbox, urls) = sandbox_on(port);
    let client = client_of(&urls, 3);
    assert_eq!(
        call(&client, request("GET", "/things/1", None))
            .0
            .unwrap()
            .status,
        200
    );
    sandbox.stop();
    sandbox.clear_requests();

    // Refused, and not retried when no retry is allowed: nothing was sent, the outcome is known.
    let no_retry = CallOptions {
        retries: Some(0),
        ..CallOptions::default()
    };
    let (outcome, log) = call(&client, request("POST", "/things", Some(no_retry)));
    match &outcome {
        Err(Error::Transport { message, .. }) => assert!(message.starts_with("connection failed")),
        other => panic!("expected a refused connection, got {other:?}"),
    }
    assert!(!outcome_unknown(&outcome));
    assert_eq!(log.len(), 1);

    // The server listens again while the client waits to retry (its first pause is ~0.1 s).
    let restart = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        sandbox.start().unwrap();
        sandbox
    });
    let (outcome, log) = call(&client, request("POST", "/things", None));
    let sandbox = restart.join().unwrap();
    assert_eq!(outcome.unwrap().status, 201);
    // Refused at least once (more if this thread was slow to start the server), then sent.
    let (last, refused) = log.split_last().unwrap();
    assert!(!refused.is_empty(), "{log:?}");
    for attempt in refused {
        let error = attempt.error.as_deref().unwrap_or_default();
        assert!(error.contains("connection failed"), "{error}");
    }
    assert_eq!(last.status, Some(201));
    assert_eq!(methods_and_paths(&sandbox), [pair("POST", "/things")]);
}

#[test]
fn a_post_whose_connection_closes_after_it_was_read_is_not_sent_again() {
    let (sandbox, urls) = sandbox();
    let client = client_of(&urls, 3);
    sandbox.drop_next(1, Some("/things"));
    let (outcome, log) = call(&client, request("POST", "/things", None));
    match &outcome {
        Err(Error::Transport { .. }) => {}
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert!(
        outcome_unknown(&outcome),
        "the POST may have been processed"
    );
    assert_eq!(methods_and_paths(&sandbox), [pair("POST", "/things")]);
    assert_eq!(log.iter().filter(|a| !a.token).count(), 1);

    // A GET is safe to send again.
    sandbox.clear_requests();
    sandbox.drop_next(1, Some("/things/1"));
    let (outcome, _) = call(&client, request("GET", "/things/1", None));
    assert_eq!(outcome.unwrap().status, 200);
    assert_eq!(
        methods_and_paths(&sandbox),
        [pair("GET", "/things/1"), pair("GET", "/things/1")]
    );
}

#[test]
fn a_slow_head_is_a_timeout_after_the_post_was_written() {
    let (sandbox, urls) = sandbox();
    let client = client(&urls.base_url, &urls.profile, 3, 0.25);
    // A token first, so that the delay below meets the POST.
    assert_eq!(
        call(&client, request("GET", "/things/1", None))
            .0
            .unwrap()
            .status,
        200
    );
    sandbox.clear_requests();
    sandbox.delay_next(Duration::from_millis(700), 1, Some("/things"));
    let started = Instant::now();
    let (outcome, log) = call(&client, request("POST", "/things", None));
    match &outcome {
        Err(Error::Timeout { message, .. }) => assert!(!message.starts_with("connect timeout")),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(outcome_unknown(&outcome), "the POST was written");
    assert!(started.elapsed() < Duration::from_millis(650));
    assert_eq!(log.len(), 1);
    assert_eq!(methods_and_paths(&sandbox), [pair("POST", "/things")]);
}

#[test]
fn a_body_cut_midway_fails_a_post_and_retries_a_get() {
    let (sandbox, urls) = sandbox();
    let client = client_of(&urls, 3);
    sandbox
        .respond_next(cut_body(), 1, Some("/things"))
        .unwrap();
    let (outcome, _) = call(&client, request("POST", "/things", None));
    match &outcome {
        Err(Error::Transport { message, .. }) => {
            assert!(message.starts_with("response body failed"), "{message}")
        }
        other => panic!("expected a body cut short, got {other:?}"),
    }
    assert!(outcome_unknown(&outcome), "the POST was answered, in part");
    assert_eq!(methods_and_paths(&sandbox), [pair("POST", "/things")]);

    sandbox.clear_requests();
    sandbox
        .respond_next(cut_body(), 1, Some("/things/1"))
        .unwrap();
    let (outcome, log) = call(&client, request("GET", "/things/1", None));
    assert_eq!(outcome.unwrap().status, 200);
    assert_eq!(log.len(), 2);
    assert_eq!(
        methods_and_paths(&sandbox),
        [pair("GET", "/things/1"), pair("GET", "/things/1")]
    );
}
