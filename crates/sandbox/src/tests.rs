//! The server end to end over a real socket, without Python: the Python suite checks every
//! rule; these make `cargo test` cover the core's wiring.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use super::store::HandlerReply;
use super::{Config, Sandbox};

fn request(base_url: &str, raw_head: &str, body: &str) -> (u16, String, String) {
    let addr = base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = format!(
        "{raw_head}\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn token(sandbox: &Sandbox, base_url: &str) -> String {
    sandbox.add_app("app", "secret").unwrap();
    let basic = base64::engine::general_purpose::STANDARD.encode("app:secret");
    let (status, _, body) = request(
        base_url,
        &format!(
            "POST /oauth/token HTTP/1.1\r\nAccept: application/json\r\nAuthorization: Basic {basic}\r\nContent-Type: application/x-www-form-urlencoded"
        ),
        "grant_type=client_credentials&scope=api",
    );
    assert_eq!(status, 200, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    body["access_token"].as_str().unwrap().to_owned()
}

#[test]
fn serves_and_stops() {
    let sandbox = Sandbox::new(Config::default());
    let urls = sandbox.start().unwrap();
    assert_eq!(sandbox.start().unwrap(), urls);
    let token = token(&sandbox, &urls.base_url);
    sandbox
        .add_resource("/things/1", &json!({"id": 1}))
        .unwrap();
    sandbox
        .route(
            "post",
            "/things/{id}",
            Arc::new(|request| {
                let id = request.param("id").unwrap_or("").to_owned();
                Box::pin(async move { Ok(HandlerReply::json(201, &json!({"id": id}))) })
            }),
        )
        .unwrap();
    let accept = format!("Accept: application/hal+json; profile=\"{}\"", urls.profile);
    let auth = format!("Authorization: Bearer {token}");

    let (status, head, body) = request(
        &urls.base_url,
        &format!("GET /things/1 HTTP/1.1\r\n{accept}\r\n{auth}"),
        "",
    );
    assert_eq!((status, body.as_str()), (200, r#"{"id":1}"#));
    assert!(head.contains("application/hal+json; profile="));

    let (status, _, body) = request(
        &urls.base_url,
        &format!("POST /things/7 HTTP/1.1\r\n{accept}\r\n{auth}\r\nContent-Type: application/json"),
        "{}",
    );
    assert_eq!((status, body.as_str()), (201, r#"{"id":"7"}"#));

    let (status, _, body) = request(&urls.base_url, &format!("GET / HTTP/1.1\r\n{auth}"), "");
    assert_eq!(status, 406);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["code"], 906);

    sandbox.drop_next(1, None);
    let (status, _, _) = request(
        &urls.base_url,
        &format!("GET / HTTP/1.1\r\n{accept}\r\n{auth}"),
        "",
    );
    assert_eq!(status, 0, "the connection is closed without an answer");
    assert_eq!(sandbox.requests().len(), 5);
    assert_eq!(sandbox.token_requests().len(), 1);

    sandbox.stop();
    assert!(sandbox.urls().is_none());
    let addr = urls.base_url.trim_start_matches("http://");
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_path_served_for_no_method_is_a_404_whatever_the_headers() {
    let sandbox = Sandbox::new(Config::default());
    let urls = sandbox.start().unwrap();
    let code = |raw_head: &str| {
        let (status, _, body) = request(&urls.base_url, raw_head, "");
        (
            status,
            serde_json::from_str::<Value>(&body).unwrap()["code"].clone(),
        )
    };
    // A client given the base URL + "/v1": its token request goes to /v1/oauth/token.
    let head = "POST /v1/oauth/token HTTP/1.1\r\nAccept: application/json";
    assert_eq!(code(head), (404, json!(902)));
    assert_eq!(code("DELETE /nothing HTTP/1.1"), (404, json!(902)));
    assert_eq!(
        code("PATCH /nothing HTTP/1.1\r\nContent-Type: text/plain"),
        (404, json!(902))
    );
    // A path that is served keeps the order of the other checks.
    assert_eq!(code("GET / HTTP/1.1"), (406, json!(906)));
    assert_eq!(code("DELETE / HTTP/1.1"), (405, json!(905)));
    sandbox.stop();
}

#[test]
fn serves_https_with_a_ca_of_its_own() {
    let sandbox = Sandbox::new(Config {
        tls: true,
        ..Config::default()
    });
    let urls = sandbox.start().unwrap();
    assert!(urls.base_url.starts_with("https://127.0.0.1:"), "{urls:?}");
    let ca_path = urls.ca_path.clone().unwrap();
    // The library's own wire, trusting the sandbox's CA or the system's store only.
    let trusting = |verify: rp_core::tls::Verify| {
        let wire = rp_core::hyper_wire::HyperWire::new(rp_core::hyper_wire::WireSettings {
            verify,
            connect_timeout: std::time::Duration::from_secs(5),
            proxy: rp_core::proxy::ProxySetting::Off,
            user_agent: http::HeaderValue::from_static("sandbox-tests"),
            max_response_size: 1 << 20,
            request_id_headers: std::sync::Arc::new([]),
        })
        .unwrap();
        let request = rp_core::wire::Outgoing {
            method: http::Method::GET,
            url: url::Url::parse(&format!("{}/", urls.base_url)).unwrap(),
            headers: http::HeaderMap::new(),
            body: None,
        };
        let limits = rp_core::wire::Limits {
            timeout: std::time::Duration::from_secs(5),
            connect_timeout: std::time::Duration::from_secs(5),
        };
        rp_core::runtime::block_on_here(async move {
            use rp_core::wire::Wire;
            wire.exchange(&request, rp_core::wire::Driver::ThisThread, limits)
                .await
                .map(|r| r.status)
        })
        .unwrap()
    };
    // Trusting the CA: the request reaches the sandbox's rules (no HAL Accept: 406).
    let ca = rp_core::tls::Verify::CaBundle(ca_path.to_string_lossy().into_owned());
    assert_eq!(trusting(ca).ok(), Some(406));
    // Trusting the system's store only: the handshake fails.
    assert!(trusting(rp_core::tls::Verify::System).is_err());
    sandbox.stop();
    assert!(!ca_path.exists(), "the CA file outlived the server");
}

/// A header of a raw answer head, by lower-case name.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn resources_carry_etags_and_patch_honours_if_match() {
    let sandbox = Sandbox::new(Config {
        demo: true,
        ..Config::default()
    });
    let urls = sandbox.start().unwrap();
    let token = token(&sandbox, &urls.base_url);
    sandbox
        .add_resource("/things/1", &json!({"id": 1}))
        .unwrap();
    let accept = format!("Accept: application/hal+json; profile=\"{}\"", urls.profile);
    let auth = format!("Authorization: Bearer {token}");
    let get = |path: &str| {
        request(
            &urls.base_url,
            &format!("GET {path} HTTP/1.1\r\n{accept}\r\n{auth}"),
            "",
        )
    };
    let patch = |path: &str, if_match: &str, body: &str| {
        let if_match = match if_match {
            "" => String::new(),
            tag => format!("\r\nIf-Match: {tag}"),
        };
        request(
            &urls.base_url,
            &format!(
                "PATCH {path} HTTP/1.1\r\n{accept}\r\n{auth}\r\nContent-Type: application/merge-patch+json{if_match}"
            ),
            body,
        )
    };

    // Static resources and the entry point: the ETag of the bytes served.
    let (status, head, body) = get("/things/1");
    assert_eq!(status, 200);
    assert_eq!(
        header(&head, "etag"),
        Some(super::etag::of(body.as_bytes()).as_str())
    );
    let (_, head, body) = get("/");
    assert_eq!(
        header(&head, "etag"),
        Some(super::etag::of(body.as_bytes()).as_str())
    );

    // A demo order: created (201), read, patched under If-Match.
    let (status, head, _) = request(
        &urls.base_url,
        &format!("POST /orders HTTP/1.1\r\n{accept}\r\n{auth}\r\nContent-Type: application/json"),
        r#"{"reference": "o-1"}"#,
    );
    assert_eq!(status, 201);
    let created = header(&head, "etag").unwrap().to_owned();
    let path = header(&head, "location")
        .unwrap()
        .trim_start_matches(&urls.base_url)
        .to_owned();
    let (_, head, _) = get(&path);
    assert_eq!(header(&head, "etag"), Some(created.as_str()));

    let (status, head, _) = patch(&path, &created, r#"{"started": true}"#);
    assert_eq!(status, 200);
    let patched = header(&head, "etag").unwrap().to_owned();
    assert_ne!(patched, created);
    let (status, _, body) = patch(&path, &created, r#"{"started": false}"#);
    assert_eq!(status, 412, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["code"], 911);
    let (_, head, body) = get(&path);
    assert_eq!(header(&head, "etag"), Some(patched.as_str()));
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["started"],
        true
    );
    assert_eq!(patch(&path, "*", "{}").0, 200);
    assert_eq!(patch("/orders/nope", "*", "{}").0, 412);
    assert_eq!(patch("/orders/nope", "", "{}").0, 404);
    sandbox.stop();
}

#[test]
fn misuse_is_an_argument_error_and_arms_nothing() {
    use super::error::SandboxError;
    let sandbox = Sandbox::new(Config::default());
    let argument = |outcome: Result<(), SandboxError>| match outcome {
        Err(SandboxError::Argument(message)) => message,
        other => panic!("not an argument error: {other:?}"),
    };
    assert!(argument(sandbox.fail_next(200, 1, None, Vec::new())).contains("400 to 599"));
    let framing = vec![("Content-Length".to_owned(), "3".to_owned())];
    assert!(argument(sandbox.fail_next(503, 1, None, framing)).starts_with("headers:"));
    assert!(argument(sandbox.add_app("a:b", "x")).starts_with("app_name"));
    assert!(argument(sandbox.add_admin("c", "", "p")).starts_with("login"));
    assert!(argument(sandbox.add_link("self", "/x", false, false)).starts_with("rel"));
    assert!(argument(sandbox.add_resource("x", &json!({}))).starts_with("path must"));
    let handler: super::store::Handler =
        Arc::new(|_| Box::pin(async { Ok(HandlerReply::json(200, &json!({}))) }));
    let bad_method = sandbox.route("DELETE", "/x", Arc::clone(&handler));
    assert!(argument(bad_method).starts_with("method"));
    assert!(argument(sandbox.route("GET", "/a{id}", handler)).starts_with("path_template"));
    // Nothing was armed: the next request is answered normally.
    assert_eq!(sandbox.shared().faults.take("/", false), (None, None));
}

#[test]
fn a_port_in_use_is_an_os_error() {
    let first = Sandbox::new(Config::default());
    let urls = first.start().unwrap();
    let port = urls.base_url.rsplit(':').next().unwrap().parse().unwrap();
    let second = Sandbox::new(Config {
        port,
        ..Config::default()
    });
    match second.start() {
        Err(super::error::SandboxError::Os { message, errno }) => {
            assert!(message.contains("cannot listen"), "{message}");
            assert!(errno.is_some());
        }
        other => panic!("not an OS error: {other:?}"),
    }
    first.stop();
}
