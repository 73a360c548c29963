//! The single-flight token cache of one client identity (docs/concepts.md#tokens,
//! docs/guarantees.md "Failures are shared") and the leader's work in a flight (`lead`): ask the
//! credentials, obtain a token from the fleet's store or the token endpoint.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::watch;

use super::credentials::{AskCredentials, Basis, Source};
use super::sealed::Sealer;
use super::store::{SharedTokens, StoreEvent, StoreSpec};
use super::token::Token;
use crate::error::Result;

/// The cached token of one client, with at most one token request (a "flight") in flight.
///
/// Every caller that needs a token while a flight is under way waits for that flight and gets
/// its outcome, success or failure (docs/guarantees.md#single-flight): N waiters of a failing
/// token endpoint cost one token request, not N in a row. Waiters may live on other threads
/// with their own current-thread runtimes (sync client) or on the shared runtime (async
/// client): they wait on a tokio `watch`, which wakes across runtimes.
#[derive(Default)]
pub(crate) struct TokenCache {
    /// Held only to read or swap the token or the flight, never across an await.
    state: Mutex<State>,
    /// The fleet's store (`token_store=`), asked by the leader of a flight; `None`: in process.
    store: Option<SharedTokens>,
}

/// A token as the store holds it: sealed, under the key of the credentials that fetched it.
#[derive(Clone)]
pub(crate) struct Sealed {
    sealer: Arc<Sealer>,
    value: Vec<u8>,
}

/// What the leader of a flight brings back: the token, and its sealed form if the store has it.
pub(crate) struct Landed {
    pub(crate) token: Token,
    pub(crate) sealed: Option<Sealed>,
}

impl Landed {
    pub(crate) fn fetched(token: Token) -> Landed {
        Landed {
            token,
            sealed: None,
        }
    }
}

/// What the leader of a flight works with: the store (if any) and what it must skip.
pub(crate) struct Lead<'a> {
    store: Option<&'a SharedTokens>,
    /// `None`: a renewal (`authenticate`), whatever is cached or stored.
    leeway: Option<f64>,
    /// The sealed token a 401 refused here: never taken from the store again.
    rejected: Option<Vec<u8>>,
    pub(crate) events: &'a mut Vec<StoreEvent>,
}

impl Lead<'_> {
    /// A token for these credentials: from the fleet's store under their key (or fetched by
    /// `fetch` and stored there), else fetched.
    pub(crate) async fn obtain<F, Fut>(
        &mut self,
        basis: &Basis,
        base_url: &str,
        deadline: Instant,
        fetch: F,
    ) -> Result<Landed>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Token>>,
    {
        // The sealer only with a store: deriving its key (PBKDF2) costs ~20 ms, a process's
        // first token would otherwise pay it for nothing.
        let store = self
            .store
            .and_then(|store| Some((store, basis.sealer(base_url)?)));
        let Some((store, sealer)) = store else {
            return fetch().await.map(Landed::fetched);
        };
        let rejected = self.rejected.as_deref();
        let (token, sealed) = store
            .obtain(&sealer, self.leeway, rejected, fetch, self.events, deadline)
            .await?;
        Ok(Landed {
            token,
            sealed: sealed.map(|value| Sealed { sealer, value }),
        })
    }
}

/// Fetches the token of a flight with the credentials given (`lead` runs the flight).
pub(crate) trait Requester {
    fn obtain(&mut self, basis: Arc<Basis>) -> impl Future<Output = Result<Landed>> + Send;
}

/// The leader's work in a flight: ask the source for credentials (a provider is asked here,
/// once), obtain a token with them; if the token endpoint refuses a provider's credentials,
/// ask it once more, and if it now returns other credentials, obtain a token with those. At
/// most two token requests.
pub(crate) async fn lead<Q: Requester>(
    source: &Source,
    ask: Option<&dyn AskCredentials>,
    requester: &mut Q,
) -> Result<Landed> {
    let basis = source.basis(ask).await?;
    let first = requester.obtain(basis.clone()).await;
    let refused = matches!(&first, Err(e) if e.is_refusal());
    if !(refused && matches!(source, Source::Provided(_))) {
        return first;
    }
    let again = source.basis(ask).await?;
    if again.credentials == basis.credentials {
        return first;
    }
    requester.obtain(again).await
}

#[derive(Default)]
struct State {
    current: Option<Arc<Token>>,
    /// `current` as the store holds it (sealed), for the compare-and-delete after a 401.
    current_sealed: Option<Sealed>,
    /// The last sealed token a 401 refused: not taken from the store again.
    rejected_sealed: Option<Vec<u8>>,
    flight: Option<Flight>,
    /// Tells flights apart, so a finished or abandoned flight never clears its successor.
    flights_started: u64,
}

/// The flight under way: its outcome is published once, when its leader lands it.
struct Flight {
    id: u64,
    outcome: watch::Receiver<Option<FlightResult>>,
}

/// What a token flight ends with, handed to its leader and every waiter.
type FlightResult = Result<Arc<Token>>;

/// What a caller does about a token.
enum Role<'a> {
    Cached(Arc<Token>),
    Wait(watch::Receiver<Option<FlightResult>>),
    Lead(Leader<'a>),
}

/// The caller that sends the token request of a flight. Dropped without landing (its future
/// cancelled: task cancelled, Ctrl-C, deadline), it withdraws the flight and closes the
/// channel: the waiters wake with no outcome and one of them starts a new flight.
struct Leader<'a> {
    cache: &'a TokenCache,
    id: u64,
    outcome: Option<watch::Sender<Option<FlightResult>>>,
}

impl Leader<'_> {
    /// Store the token (if any), end the flight and hand its outcome to every waiter.
    fn land(mut self, landed: Result<Landed>) -> FlightResult {
        let mut state = self.cache.lock();
        let outcome = landed.map(|landed| {
            let token = Arc::new(landed.token);
            state.current = Some(token.clone());
            state.current_sealed = landed.sealed;
            token
        });
        state.end_flight(self.id);
        if let Some(sender) = self.outcome.take() {
            sender.send_replace(Some(outcome.clone()));
        }
        outcome
    }
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        if let Some(sender) = self.outcome.take() {
            // Withdraw the flight before closing it, so no caller joins a dead flight.
            self.cache.lock().end_flight(self.id);
            drop(sender);
        }
    }
}

impl State {
    fn end_flight(&mut self, id: u64) {
        if self.flight.as_ref().is_some_and(|f| f.id == id) {
            self.flight = None;
        }
    }
}

impl TokenCache {
    /// A cache in front of the fleet's store (built in each process that uses it).
    pub fn with_store(spec: &StoreSpec) -> TokenCache {
        TokenCache {
            state: Mutex::default(),
            store: Some(spec.tokens()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Nothing panics while holding it; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn current(&self) -> Option<Arc<Token>> {
        self.lock().current.clone()
    }

    /// The cached token if it is fresh (`get`'s first answer, without a future): a warm call
    /// awaits no flight's state.
    pub(crate) fn fresh(&self, leeway: f64) -> Option<Arc<Token>> {
        self.lock()
            .current
            .as_ref()
            .filter(|t| t.is_fresh(leeway))
            .cloned()
    }

    /// A fresh token: the cached one, or the outcome of the flight under way (joined), or of a
    /// new flight this caller leads with `lead` (see `auth::lead`). A token a flight brought is
    /// used by all its waiters even when it is no longer fresh (`expires_in: 0`); only later
    /// callers start a new flight. `events` receives the store commands this caller sent (as
    /// leader).
    pub(crate) async fn get<'a, F, Fut>(
        &'a self,
        leeway: f64,
        events: &'a mut Vec<StoreEvent>,
        lead: F,
    ) -> Result<Arc<Token>>
    where
        F: FnOnce(Lead<'a>) -> Fut,
        Fut: Future<Output = Result<Landed>>,
    {
        self.obtain(Some(leeway), events, lead).await
    }

    /// A new token whatever is cached (`client.authenticate()`). A flight already under way is
    /// joined rather than doubled: its answer is as good as a second request's (the
    /// server gives the same token while it is valid) and tells as much about the credentials.
    /// With a store, the new token is stored for the fleet.
    pub(crate) async fn renew<'a, F, Fut>(
        &'a self,
        events: &'a mut Vec<StoreEvent>,
        lead: F,
    ) -> Result<Arc<Token>>
    where
        F: FnOnce(Lead<'a>) -> Fut,
        Fut: Future<Output = Result<Landed>>,
    {
        self.obtain(None, events, lead).await
    }

    /// `leeway: None` ignores the cached token.
    async fn obtain<'a, F, Fut>(
        &'a self,
        leeway: Option<f64>,
        events: &'a mut Vec<StoreEvent>,
        lead: F,
    ) -> Result<Arc<Token>>
    where
        F: FnOnce(Lead<'a>) -> Fut,
        Fut: Future<Output = Result<Landed>>,
    {
        let leader = loop {
            match self.role(leeway) {
                Role::Cached(token) => return Ok(token),
                Role::Lead(leader) => break leader,
                Role::Wait(mut flight) => {
                    let landed = flight.wait_for(Option::is_some).await;
                    if let Some(outcome) = landed.ok().and_then(|o| o.clone()) {
                        return outcome;
                    }
                    // The leader was cancelled before landing: look again (and maybe lead).
                }
            }
        };
        let rejected = match &self.store {
            Some(_) => self.lock().rejected_sealed.clone(),
            None => None,
        };
        let landed = lead(Lead {
            store: self.store.as_ref(),
            leeway,
            rejected,
            events,
        })
        .await;
        leader.land(landed)
    }

    fn role(&self, leeway: Option<f64>) -> Role<'_> {
        let mut state = self.lock();
        if let Some(leeway) = leeway {
            if let Some(token) = state.current.as_ref().filter(|t| t.is_fresh(leeway)) {
                return Role::Cached(token.clone());
            }
        }
        if let Some(flight) = &state.flight {
            return Role::Wait(flight.outcome.clone());
        }
        state.flights_started += 1;
        let id = state.flights_started;
        let (sender, receiver) = watch::channel(None);
        state.flight = Some(Flight {
            id,
            outcome: receiver,
        });
        Role::Lead(Leader {
            cache: self,
            id,
            outcome: Some(sender),
        })
    }

    /// Forget `rejected` after a 401, unless another caller has replaced it already; and
    /// remove it from the store if the store still holds it (not a successor).
    /// `deadline`: the call's, which the store's command does not run past.
    pub async fn invalidate(
        &self,
        rejected: &Arc<Token>,
        events: &mut Vec<StoreEvent>,
        deadline: Instant,
    ) {
        let sealed = {
            let mut state = self.lock();
            if state
                .current
                .as_ref()
                .is_some_and(|t| Arc::ptr_eq(t, rejected))
            {
                state.current = None;
                let sealed = state.current_sealed.take();
                if let Some(sealed) = &sealed {
                    state.rejected_sealed = Some(sealed.value.clone());
                }
                sealed
            } else {
                None
            }
        };
        if let (Some(store), Some(sealed)) = (&self.store, sealed) {
            store
                .discard(&sealed.sealer, &sealed.value, events, deadline)
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::credentials::{CredentialSource, Credentials};
    use super::super::token::tests::token;
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A call's deadline that no test reaches.
    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    fn refused() -> Error {
        Error::Timeout {
            method: "POST".into(),
            url: "http://h/oauth/token".into(),
            message: "timed out".into(),
            outcome_unknown: false,
        }
    }

    /// `callers` tasks asking `cache` for a token at once; each fetch counts in `fetches`,
    /// takes `pause` and then gives `answer()`.
    async fn crowd(
        cache: &Arc<TokenCache>,
        fetches: &Arc<AtomicUsize>,
        callers: usize,
        pause: Duration,
        answer: fn() -> Result<Token>,
    ) -> Vec<Result<Arc<Token>>> {
        let mut tasks = Vec::new();
        for _ in 0..callers {
            let (cache, fetches) = (cache.clone(), fetches.clone());
            tasks.push(tokio::spawn(async move {
                cache
                    .get(30.0, &mut Vec::new(), |_| async {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(pause).await;
                        answer().map(Landed::fetched)
                    })
                    .await
            }));
        }
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.unwrap());
        }
        outcomes
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_token_request_for_many_waiters() {
        let (cache, fetches) = Default::default();
        let outcomes = crowd(&cache, &fetches, 32, Duration::from_millis(50), || {
            Ok(token(960.0))
        })
        .await;
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failure_is_shared_by_every_waiter_then_a_new_flight_starts() {
        let (cache, fetches) = Default::default();
        let outcomes = crowd(&cache, &fetches, 16, Duration::from_millis(100), || {
            Err(refused())
        })
        .await;
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        assert_eq!(outcomes.len(), 16);
        assert!(outcomes
            .iter()
            .all(|o| matches!(o, Err(Error::Timeout { .. }))));
        assert!(cache.current().is_none());
        // The flight is over: the next caller starts its own and can succeed.
        let outcomes = crowd(&cache, &fetches, 4, Duration::from_millis(50), || {
            Ok(token(960.0))
        })
        .await;
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    /// As the sync client does: each caller on its own thread and current-thread runtime.
    #[test]
    fn waiters_on_other_runtimes_share_the_failure() {
        let cache = Arc::new(TokenCache::default());
        let fetches = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (cache, fetches) = (cache.clone(), fetches.clone());
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    runtime.block_on(cache.get(30.0, &mut Vec::new(), |_| async {
                        fetches.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        Err::<Landed, _>(refused())
                    }))
                })
            })
            .collect();
        for thread in threads {
            assert!(matches!(thread.join().unwrap(), Err(Error::Timeout { .. })));
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_leader_is_taken_over_by_a_waiter() {
        let cache = Arc::new(TokenCache::default());
        let fetches = Arc::new(AtomicUsize::new(0));
        let (leader_cache, leader_fetches) = (cache.clone(), fetches.clone());
        let leader = tokio::spawn(async move {
            leader_cache
                .get(30.0, &mut Vec::new(), |_| async {
                    leader_fetches.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Result<Landed>>().await
                })
                .await
        });
        while fetches.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let waiters = {
            let (cache, fetches) = (cache.clone(), fetches.clone());
            tokio::spawn(async move {
                crowd(&cache, &fetches, 16, Duration::from_millis(50), || {
                    Ok(token(960.0))
                })
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        leader.abort();
        assert!(leader.await.unwrap_err().is_cancelled());
        let outcomes = waiters.await.unwrap();
        assert!(outcomes.iter().all(Result::is_ok), "no fake failure");
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_token_of_no_lifetime_serves_its_waiters() {
        let (cache, fetches) = Default::default();
        let outcomes = crowd(&cache, &fetches, 16, Duration::from_millis(100), || {
            Ok(token(0.0))
        })
        .await;
        assert!(outcomes.iter().all(Result::is_ok));
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // A caller arriving later finds it stale and starts a new flight.
        crowd(&cache, &fetches, 1, Duration::ZERO, || Ok(token(0.0))).await;
        assert_eq!(fetches.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn renew_joins_the_flight_under_way() {
        let (cache, fetches): (Arc<TokenCache>, Arc<AtomicUsize>) = Default::default();
        let outcomes = {
            let (cache, fetches) = (cache.clone(), fetches.clone());
            tokio::spawn(async move {
                crowd(&cache, &fetches, 1, Duration::from_millis(200), || {
                    Ok(token(960.0))
                })
                .await
            })
        };
        while fetches.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let renewed = cache
            .renew(&mut Vec::new(), |_| async {
                fetches.fetch_add(1, Ordering::SeqCst);
                Ok(Landed::fetched(token(960.0)))
            })
            .await
            .unwrap();
        let joined = outcomes.await.unwrap().pop().unwrap().unwrap();
        assert!(Arc::ptr_eq(&renewed, &joined));
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // With no flight under way it fetches, whatever is cached.
        let renewed = cache
            .renew(&mut Vec::new(), |_| async {
                Ok(Landed::fetched(token(960.0)))
            })
            .await
            .unwrap();
        assert!(!Arc::ptr_eq(&renewed, &joined));
    }

    #[tokio::test]
    async fn invalidate_only_drops_the_rejected_token() {
        let cache = TokenCache::default();
        let first = cache
            .get(30.0, &mut Vec::new(), |_| async {
                Ok(Landed::fetched(token(960.0)))
            })
            .await
            .unwrap();
        let second = cache
            .renew(&mut Vec::new(), |_| async {
                Ok(Landed::fetched(token(960.0)))
            })
            .await
            .unwrap();
        cache.invalidate(&first, &mut Vec::new(), far()).await;
        assert!(Arc::ptr_eq(&cache.current().unwrap(), &second));
        cache.invalidate(&second, &mut Vec::new(), far()).await;
        assert!(cache.current().is_none());
    }

    /// A provider that answers `secrets` in turn (the last one from then on), counting asks.
    struct Secrets {
        answers: Mutex<Vec<&'static str>>,
        asks: AtomicUsize,
    }

    impl Secrets {
        fn new(answers: &[&'static str]) -> Arc<Secrets> {
            let mut answers = answers.to_vec();
            answers.reverse();
            Arc::new(Secrets {
                answers: Mutex::new(answers),
                asks: AtomicUsize::new(0),
            })
        }
    }

    impl AskCredentials for Secrets {
        fn ask(&self) -> std::pin::Pin<Box<dyn Future<Output = Result<Credentials>> + Send + '_>> {
            self.asks.fetch_add(1, Ordering::SeqCst);
            let mut answers = self.answers.lock().unwrap();
            let secret = if answers.len() > 1 {
                answers.pop().unwrap()
            } else {
                answers[0]
            };
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(Credentials::App {
                    app_name: "app".into(),
                    app_secret: secret.into(),
                })
            })
        }
    }

    /// A token endpoint that knows one secret, counting requests.
    struct Endpoint {
        secret: &'static str,
        requests: Arc<AtomicUsize>,
    }

    impl Requester for Endpoint {
        async fn obtain(&mut self, basis: Arc<Basis>) -> Result<Landed> {
            self.requests.fetch_add(1, Ordering::SeqCst);
            match &basis.credentials {
                Credentials::App { app_secret, .. } if app_secret == self.secret => {
                    Ok(Landed::fetched(token(960.0)))
                }
                _ => Err(Error::Http(Box::new(crate::error::HttpFailure {
                    status: 401,
                    method: "POST".into(),
                    url: "http://h/oauth/token".into(),
                    headers: Vec::new(),
                    body: String::new(),
                    authentication: true,
                    request_id: None,
                    outcome_unknown: false,
                }))),
            }
        }
    }

    fn provided() -> Source {
        Source::new(CredentialSource::Provider { name: "p".into() }).unwrap()
    }

    /// One flight against an endpoint that knows `secret`: (outcome, asks, token requests).
    async fn flight(answers: &[&'static str], secret: &'static str) -> (bool, usize, usize) {
        let (source, secrets) = (provided(), Secrets::new(answers));
        let requests = Arc::new(AtomicUsize::new(0));
        let mut endpoint = Endpoint {
            secret,
            requests: requests.clone(),
        };
        let outcome = lead(&source, Some(&*secrets), &mut endpoint).await;
        if let Err(e) = &outcome {
            assert!(e.is_refusal(), "{e:?}");
        }
        let asks = secrets.asks.load(Ordering::SeqCst);
        (outcome.is_ok(), asks, requests.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn a_refused_provider_is_asked_once_more_and_tried_with_new_credentials() {
        // Rotated just after it was read: the second answer is the new secret.
        assert_eq!(flight(&["old", "new"], "new").await, (true, 2, 2));
        // Still the old one: no second request.
        assert_eq!(flight(&["old", "old"], "new").await, (false, 2, 1));
        // New credentials refused too: two requests at most.
        assert_eq!(flight(&["old", "other"], "new").await, (false, 2, 2));
        // Accepted at once: one ask, one request.
        assert_eq!(flight(&["new"], "new").await, (true, 1, 1));
    }

    #[tokio::test]
    async fn without_a_store_a_token_derives_no_store_keys() {
        let basis = Basis::new(Credentials::App {
            app_name: "app".into(),
            app_secret: "s".into(),
        })
        .unwrap();
        let mut events = Vec::new();
        let mut lead = Lead {
            store: None,
            leeway: Some(30.0),
            rejected: None,
            events: &mut events,
        };
        let fetched = lead.obtain(&basis, "http://h/", far(), || async { Ok(token(960.0)) });
        assert!(fetched.await.is_ok());
        // PBKDF2 for keys nobody uses was ~20 ms of a process's first token.
        assert!(!basis.sealer_derived());
    }

    #[tokio::test]
    async fn fixed_credentials_refused_are_not_tried_again() {
        let source = Source::new(CredentialSource::Fixed(Credentials::App {
            app_name: "app".into(),
            app_secret: "old".into(),
        }))
        .unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let mut endpoint = Endpoint {
            secret: "new",
            requests: requests.clone(),
        };
        assert!(lead(&source, None, &mut endpoint).await.is_err());
        assert_eq!(requests.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_provider_is_asked_once_per_flight_by_its_leader() {
        let cache = Arc::new(TokenCache::default());
        let source = Arc::new(provided());
        let secrets = Secrets::new(&["s"]);
        let requests = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..32 {
            let (cache, source) = (cache.clone(), source.clone());
            let (secrets, requests) = (secrets.clone(), requests.clone());
            tasks.push(tokio::spawn(async move {
                cache
                    .get(30.0, &mut Vec::new(), |_| async {
                        let mut endpoint = Endpoint {
                            secret: "s",
                            requests,
                        };
                        lead(&source, Some(&*secrets), &mut endpoint).await
                    })
                    .await
            }));
        }
        for task in tasks {
            assert!(task.await.unwrap().is_ok());
        }
        assert_eq!(secrets.asks.load(Ordering::SeqCst), 1);
        assert_eq!(requests.load(Ordering::SeqCst), 1);
    }
}
