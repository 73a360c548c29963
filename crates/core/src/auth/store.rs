//! Where a client's token lives beyond its process (docs/guides/fleets.md): the seam `TokenCache`
//! uses. The key names and sealing key are those of the credentials a flight uses (`Basis`).
//!
//! Without a store (`token_store=None`) the in-process cache is all there is. With Redis, the
//! leader of a process's in-process flight asks the store first; a renewal takes a lock, so one
//! process of the fleet fetches while the others poll for its token. Any failure of the store
//! falls back to fetching in-process: the store may make requests cheaper, never fail them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use super::redis_store::{RedisConfig, RedisStore, StoreFailure};
use super::sealed::Sealer;
use super::Token;
use crate::error::Result;
use crate::runtime::PerProcess;

/// One command sent to the token store, for the logs and for telemetry spans
/// (`recurring_payments.token_store`): what, when, how long, and how it ended.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    /// `get`, `lock`, `set`, `unlock` or `discard`.
    pub op: &'static str,
    pub started: SystemTime,
    pub elapsed: Duration,
    /// A stable kind (`timeout`, `connection_refused`, `connection`, `tls`, `server`,
    /// `protocol`), `None` on success.
    pub error_type: Option<&'static str>,
    /// What went wrong, without the URL or any secret.
    pub message: Option<String>,
    /// The client's first store failure in a minute: logged as a WARNING (the others DEBUG).
    pub warn: bool,
}

/// Interval between WARNINGs of one client about its store.
const WARNING_INTERVAL: Duration = Duration::from_secs(60);
/// First and longest pause between two looks at a renewal led by another process.
const FIRST_POLL: Duration = Duration::from_millis(5);
const LONGEST_POLL: Duration = Duration::from_millis(100);

/// The store settings of a client, shared by every identity derived from it (`with_options`),
/// with the process's one connection to Redis.
#[derive(Clone)]
pub struct StoreSpec {
    redis: RedisConfig,
    connection: Arc<PerProcess<RedisStore>>,
    leeway: f64,
}

impl std::fmt::Debug for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoreSpec({:?})", self.redis)
    }
}

impl StoreSpec {
    /// `url`: `redis://…` or `rediss://…`. The keys are derived per credentials (`Basis`).
    pub fn new(
        url: &str,
        leeway: f64,
        op_timeout: Duration,
        lock_ttl: Duration,
    ) -> Result<StoreSpec> {
        Ok(StoreSpec {
            redis: RedisConfig::new(url, op_timeout, lock_ttl)?,
            connection: Arc::new(PerProcess::new()),
            leeway,
        })
    }

    /// The store as one identity's token cache uses it, on this process's connection.
    pub(super) fn tokens(&self) -> SharedTokens {
        let made = self
            .connection
            .get_or_try_init(|| Ok::<_, ()>(RedisStore::new(self.redis.clone())));
        let store = match made {
            Ok(store) => store.clone(),
            Err(()) => RedisStore::new(self.redis.clone()),
        };
        SharedTokens {
            store,
            leeway: self.leeway,
            last_warning: Mutex::new(None),
        }
    }
}

/// A client's token store in one process: the process's Redis connection and the client's
/// warning clock.
pub(crate) struct SharedTokens {
    store: RedisStore,
    leeway: f64,
    last_warning: Mutex<Option<Instant>>,
}

/// What the leader does after looking at the store.
enum Next {
    /// The store had a fresh token.
    Stored(Token, Vec<u8>),
    /// Fetch it: saving it for the fleet and releasing our lock, or not.
    Fetch { save: bool, lock_id: Option<String> },
}

impl SharedTokens {
    /// A token for the leader of this process's flight, and its sealed form when the store
    /// holds it. `leeway: None` (renew) fetches whatever the store holds. `rejected` is the
    /// sealed token a 401 refused here: never taken from the store again.
    ///
    /// `deadline` is the caller's call's: the store is waited for (a renewal led by another
    /// process, slow commands) during half of what is left of it at most, the rest being for
    /// the token request and the call's own request, and no command runs past it
    /// (docs/guarantees.md, docs/guides/fleets.md: the store may make requests cheaper, never fail
    /// them).
    pub(super) async fn obtain<F, Fut>(
        &self,
        sealer: &Sealer,
        leeway: Option<f64>,
        rejected: Option<&[u8]>,
        fetch: F,
        events: &mut Vec<StoreEvent>,
        deadline: Instant,
    ) -> Result<(Token, Option<Vec<u8>>)>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Token>>,
    {
        let now = Instant::now();
        let patience = now + deadline.saturating_duration_since(now) / 2;
        let next = match leeway {
            Some(leeway) => self.look(sealer, leeway, rejected, events, patience).await,
            None => Next::Fetch {
                save: true,
                lock_id: None,
            },
        };
        let (save, lock_id) = match next {
            Next::Stored(token, sealed) => return Ok((token, Some(sealed))),
            Next::Fetch { save, lock_id } => (save, lock_id),
        };
        let outcome = fetch().await;
        let mut sealed = None;
        if let (Ok(token), true) = (&outcome, save) {
            // Stored until the token is due for renewal (the leeway of docs/concepts.md#tokens, at
            // most half its life).
            let leeway = self.leeway.min(token.expires_in / 2.0);
            let ttl = token.remaining() - leeway;
            if ttl > 0.001 {
                if let Ok(value) = sealer.seal(token) {
                    let ttl = Duration::from_secs_f64(ttl);
                    let stored = self.store.set(sealer.key(), value.clone(), ttl);
                    if self.call("set", events, deadline, stored).await.is_ok() {
                        sealed = Some(value);
                    }
                }
            }
        }
        if let Some(id) = lock_id {
            self.unlock(sealer, &id, events, deadline).await;
        }
        outcome.map(|token| (token, sealed))
    }

    /// The stored token if there is one, fresh, that opens, and not the one a 401 refused.
    async fn stored(
        &self,
        sealer: &Sealer,
        leeway: f64,
        rejected: Option<&[u8]>,
        events: &mut Vec<StoreEvent>,
        until: Instant,
    ) -> std::result::Result<Option<(Token, Vec<u8>)>, ()> {
        let stored = self.store.get(sealer.key());
        Ok(self
            .call("get", events, until, stored)
            .await?
            .filter(|sealed| Some(sealed.as_slice()) != rejected)
            .and_then(|sealed| {
                let token = sealer.open(&sealed).filter(|t| t.is_fresh(leeway))?;
                Some((token, sealed))
            }))
    }

    /// Release our renewal lock (only if it is still ours: it may have expired and been taken).
    async fn unlock(
        &self,
        sealer: &Sealer,
        lock_id: &str,
        events: &mut Vec<StoreEvent>,
        until: Instant,
    ) {
        let released = self.store.delete_if(sealer.lock(), lock_id.as_bytes());
        let _ = self.call("unlock", events, until, released).await;
    }

    /// Take the stored token, or the lock to renew it, or wait for the process that holds the
    /// lock, until `patience` runs out. A holder that dies leaves a lock that expires after
    /// `lock_ttl`: the one poller whose `SET NX` comes first takes it over, and the others wait
    /// for its token. (Each poller giving up `lock_ttl` after it began had them all fetch at
    /// once, a few ms after the dead lock expired.) Past `patience`, the token is fetched
    /// without the lock and stored for the fleet.
    async fn look(
        &self,
        sealer: &Sealer,
        leeway: f64,
        rejected: Option<&[u8]>,
        events: &mut Vec<StoreEvent>,
        patience: Instant,
    ) -> Next {
        let fallback = Next::Fetch {
            save: false,
            lock_id: None,
        };
        let lock_id = sealer.lock_id();
        let mut pause = FIRST_POLL;
        loop {
            if Instant::now() >= patience {
                return Next::Fetch {
                    save: true,
                    lock_id: None,
                };
            }
            match self
                .stored(sealer, leeway, rejected, events, patience)
                .await
            {
                Err(()) => return fallback,
                Ok(Some((token, sealed))) => return Next::Stored(token, sealed),
                Ok(None) => {}
            }
            let taken = self
                .store
                .set_nx(sealer.lock(), &lock_id, self.store.lock_ttl());
            match self.call("lock", events, patience, taken).await {
                Err(()) => return fallback,
                Ok(true) => {
                    // Look again: a holder may have stored its token and released the lock
                    // between our look and our lock; fetching then would renew twice.
                    return match self
                        .stored(sealer, leeway, rejected, events, patience)
                        .await
                    {
                        Ok(Some((token, sealed))) => {
                            self.unlock(sealer, &lock_id, events, patience).await;
                            Next::Stored(token, sealed)
                        }
                        Ok(None) | Err(()) => Next::Fetch {
                            save: true,
                            lock_id: Some(lock_id),
                        },
                    };
                }
                Ok(false) => {
                    let left = patience.saturating_duration_since(Instant::now());
                    tokio::time::sleep(pause.min(left)).await;
                    pause = (pause * 2).min(LONGEST_POLL);
                }
            }
        }
    }

    /// After a 401: remove `sealed` from the store if it is still the token stored.
    pub(super) async fn discard(
        &self,
        sealer: &Sealer,
        sealed: &[u8],
        events: &mut Vec<StoreEvent>,
        deadline: Instant,
    ) {
        let removed = self.store.delete_if(sealer.key(), sealed);
        let _ = self.call("discard", events, deadline, removed).await;
    }

    /// Await one store command, cut at `until` (a failure like the store's own timeout), and
    /// record it in `events`.
    async fn call<T>(
        &self,
        op: &'static str,
        events: &mut Vec<StoreEvent>,
        until: Instant,
        command: impl std::future::Future<Output = std::result::Result<T, StoreFailure>>,
    ) -> std::result::Result<T, ()> {
        let started = SystemTime::now();
        let clock = Instant::now();
        let outcome = match tokio::time::timeout_at(until.into(), command).await {
            Ok(outcome) => outcome,
            Err(_) => Err(StoreFailure {
                kind: "timeout",
                message: "no answer in the time the call could give the store".into(),
            }),
        };
        let (error_type, message, warn) = match &outcome {
            Ok(_) => (None, None, false),
            Err(failure) => (
                Some(failure.kind),
                Some(failure.message.clone()),
                self.may_warn(),
            ),
        };
        events.push(StoreEvent {
            op,
            started,
            elapsed: clock.elapsed(),
            error_type,
            message,
            warn,
        });
        outcome.map_err(|_| ())
    }

    /// True at most once a minute.
    fn may_warn(&self) -> bool {
        let mut last = self
            .last_warning
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let due = last.is_none_or(|at| at.elapsed() >= WARNING_INTERVAL);
        if due {
            *last = Some(Instant::now());
        }
        due
    }
}
