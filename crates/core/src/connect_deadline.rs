//! A new connection must be up before its attempt ends, or the attempt fails as a connect
//! failure: nothing of the request was written, so a POST is known not to have arrived and
//! may be sent again (docs/guarantees.md#no-double-send).
//!
//! A timer around the whole request cuts it with one error for every phase: a connect still
//! under way when `timeout` or the call's deadline came would read as "timed out" after the
//! request had started, and a POST that never had a connection would be `outcome_unknown` and
//! not retried. The connector layer here cuts the connect itself a little before the attempt's
//! end, so the error is a connect error, which hyper-util and `hyper_wire::classify` tell apart.
//!
//! The same bound applies `connect_timeout` (the client's, or a derived client's): the pools
//! are not built per setting, and a call's own setting needs no pool of its own.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

tokio::task_local! {
    /// When the connect of the attempt being polled must be over (`hyper_wire`'s exchange).
    static CONNECT_BY: ConnectBy;
}

#[derive(Debug, Clone, Copy)]
struct ConnectBy {
    at: Instant,
    /// `Some(connect_timeout)` when that setting, not the attempt's end, sets `at`.
    limit: Option<Duration>,
}

/// How long before the attempt's end its connect is cut, so that cut and the attempt's timer
/// never fire in the same timer tick (1 ms).
const MARGIN: Duration = Duration::from_millis(5);

/// Run `attempt`, whose timer ends `timeout` from now, with its connects bounded to end first,
/// and each within `connect_timeout`.
pub async fn within<F: Future>(
    timeout: Duration,
    connect_timeout: Duration,
    attempt: F,
) -> F::Output {
    let attempt_end = timeout.saturating_sub(MARGIN);
    let by = if connect_timeout < attempt_end {
        ConnectBy {
            at: Instant::now() + connect_timeout,
            limit: Some(connect_timeout),
        }
    } else {
        ConnectBy {
            at: Instant::now() + attempt_end,
            limit: None,
        }
    };
    CONNECT_BY.scope(by, attempt).await
}

/// The connector layer (hyper_wire/pools.rs wraps its connector in it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Layer;

impl<S> tower_layer::Layer<S> for Layer {
    type Service = Bounded<S>;

    fn layer(&self, inner: S) -> Bounded<S> {
        Bounded(inner)
    }
}

/// The connector, each connect bounded by the end of the attempt that started it.
#[derive(Debug, Clone)]
pub struct Bounded<S>(S);

impl<S, R> tower_service::Service<R> for Bounded<S>
where
    S: tower_service::Service<R, Error = BoxError>,
    S::Future: Send + 'static,
    S::Response: 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, target: R) -> Self::Future {
        // Read when the connect starts, inside the attempt's poll; a connect that hyper-util
        // finishes in the background (another connection was free first) keeps this bound.
        let by = CONNECT_BY.try_with(|by| *by).ok();
        let connecting = self.0.call(target);
        Box::pin(async move {
            let Some(by) = by else {
                return connecting.await; // not sent by `within` (none is, today)
            };
            match tokio::time::timeout_at(by.at, connecting).await {
                Ok(connected) => connected,
                Err(_) => {
                    let message = match by.limit {
                        Some(limit) => {
                            format!("connect_timeout of {:.3} s exceeded", limit.as_secs_f64())
                        }
                        None => "the attempt's time ran out while connecting".to_owned(),
                    };
                    let error = std::io::Error::new(std::io::ErrorKind::TimedOut, message);
                    Err(Box::new(error) as BoxError)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_service::Service;

    /// A connector whose connect never completes.
    #[derive(Clone)]
    struct Hanging;

    impl Service<()> for Hanging {
        type Response = ();
        type Error = BoxError;
        type Future = Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, (): ()) -> Self::Future {
            Box::pin(std::future::pending())
        }
    }

    fn connect() -> <Bounded<Hanging> as Service<()>>::Future {
        tower_layer::Layer::layer(&Layer, Hanging).call(())
    }

    /// As a timer polled before the request would: the timer first (ending with the attempt), then the
    /// request, whose connect must have failed by then.
    #[tokio::test(start_paused = true)]
    async fn a_connect_fails_as_a_timeout_before_its_attempt_timer_fires() {
        let attempt = Duration::from_millis(50);
        let started = Instant::now();
        let timer = tokio::time::sleep(attempt);
        let outcome = within(attempt, Duration::from_secs(10), async {
            tokio::select! {
                biased;
                () = timer => None,
                connected = connect() => Some(connected),
            }
        })
        .await;
        let error = outcome
            .expect("the attempt's timer fired first")
            .unwrap_err();
        let io = error.downcast_ref::<std::io::Error>().unwrap();
        assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), attempt - MARGIN);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connect_is_cut_at_connect_timeout_when_that_comes_first() {
        let started = Instant::now();
        let limit = Duration::from_millis(200);
        // The connect starts inside the attempt, as the wire's does.
        let error = within(Duration::from_secs(5), limit, async { connect().await })
            .await
            .unwrap_err();
        assert_eq!(started.elapsed(), limit);
        assert!(error
            .to_string()
            .contains("connect_timeout of 0.200 s exceeded"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_connect_outside_an_attempt_is_not_bounded() {
        let hour = Duration::from_secs(3600);
        assert!(tokio::time::timeout(hour, connect()).await.is_err()); // still connecting
    }

    #[tokio::test(start_paused = true)]
    async fn a_connect_keeps_the_bound_of_the_attempt_that_started_it() {
        // Started inside an attempt, finished outside it (hyper-util's background connect).
        let bound = Duration::from_millis(50);
        #[allow(clippy::async_yields_async)] // the point: the connect is awaited afterwards
        let connecting = within(bound, Duration::from_secs(10), async { connect() }).await;
        let started = Instant::now();
        assert!(connecting.await.is_err());
        assert!(started.elapsed() <= Duration::from_millis(45));
    }
}
