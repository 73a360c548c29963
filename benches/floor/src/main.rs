//! `bench-floor BASE_URL PROFILE TOKEN N [CA_BUNDLE]`: the benchmark's follow (lib.rs) on
//! reqwest as published, configured as the library configures it (crates/core/src/transport.rs:
//! its rustls configuration handed in, HTTP/2 by ALPN, gzip, no proxy, no redirects, TCP_NODELAY,
//! obs-fold unfolded), on a current-thread tokio runtime.

use std::time::{Duration, Instant};

use floor::{read_mandate, Args, Follow, USER_AGENT, WARMUP};

async fn get(client: &reqwest::Client, url: &str, accept: &str, auth: &str) -> bytes::Bytes {
    let response = client
        .get(url)
        .header("accept", accept)
        .header("authorization", auth)
        .header("user-agent", USER_AGENT)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    response.bytes().await.unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args = Args::parse("bench-floor");
    let (accept, auth) = (args.accept(), args.authorization());
    let client = reqwest::Client::builder()
        .no_proxy()
        .http1_allow_obsolete_multiline_headers_in_responses(true)
        .pool_idle_timeout(Duration::from_secs(60))
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(floor::tls_config(args.ca.as_deref()))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let root = get(&client, &args.root_url(), &accept, &auth).await;
    let root = serde_json::from_slice(&root).unwrap_or_else(|e| panic!("entry point: {e}"));
    let follow = Follow::from_root(&root);
    let one = |i: usize| {
        let url = follow.url(i);
        let (client, accept, auth) = (&client, &accept, &auth);
        async move {
            let body = get(client, &url, accept, auth).await;
            read_mandate(&url, &body);
        }
    };
    for i in 0..WARMUP {
        one(i).await;
    }
    let start = Instant::now();
    for i in 0..args.n {
        one(i).await;
    }
    floor::report(start, args.n);
}
