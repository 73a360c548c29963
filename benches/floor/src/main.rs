//! `bench-floor BASE_URL PROFILE TOKEN N`: N sequential follows of the entry point's templated
//! `bench-mandate` link, as the Python clients do them (expand, GET, parse the JSON, read
//! `status` and the `creditor` href), over one keep-alive connection, after a warm-up of
//! WARMUP follows. Prints microseconds per follow on stdout (benches/bench.py runs it once per
//! round, interleaved with the Python clients).

use std::time::Instant;

use serde_json::Value;

const WARMUP: usize = 200;

async fn get(client: &reqwest::Client, url: &str, accept: &str, auth: &str) -> Value {
    let response = client
        .get(url)
        .header("accept", accept)
        .header("authorization", auth)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let body = response.bytes().await.unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{url}: {e}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, profile, token, n] = &args[..] else {
        panic!("usage: bench-floor BASE_URL PROFILE TOKEN N");
    };
    let n: usize = n.parse().unwrap_or_else(|e| panic!("N: {e}"));
    let accept = format!("application/hal+json; profile=\"{profile}\"");
    let auth = format!("Bearer {token}");
    let client = reqwest::Client::new();
    let root = get(&client, &format!("{base}/"), &accept, &auth).await;
    let links = root["_links"].as_object().unwrap_or_else(|| panic!("no _links"));
    let (_, link) = links
        .iter()
        .find(|(rel, _)| rel.ends_with("bench-mandate"))
        .unwrap_or_else(|| panic!("no bench-mandate link"));
    let template = link["href"].as_str().unwrap_or_else(|| panic!("no href")).to_owned();
    let ids: Vec<String> = (0..16).map(|i| format!("MD{i:04}")).collect();
    let follow = |i: usize| {
        let url = template.replace("{id}", &ids[i % ids.len()]);
        let (client, accept, auth) = (&client, &accept, &auth);
        async move {
            let doc = get(client, &url, accept, auth).await;
            let status = doc["status"].as_str().unwrap_or_default().len();
            let creditor = doc["_links"]["creditor"]["href"].as_str().unwrap_or_default().len();
            assert!(status > 0 && creditor > 0);
        }
    };
    for i in 0..WARMUP {
        follow(i).await;
    }
    let start = Instant::now();
    for i in 0..n {
        follow(i).await;
    }
    println!("{:.2}", start.elapsed().as_secs_f64() * 1e6 / n as f64);
}
