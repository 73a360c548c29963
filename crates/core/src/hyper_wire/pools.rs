//! The connection pools of the hyper wire: one per process (the shared runtime's) and one per
//! thread (`Driver::ThisThread`) for each TLS, connect and proxy setting (proxy.rs decides the
//! routes), kept while a client with those settings lives.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use hyper_util::client::proxy::matcher::Matcher;

use super::connect::Connector;
use super::http_client::HttpClient;
use crate::error::{Error, Result};
use crate::proxy::{ProxySetting, Routes};
use crate::runtime::{PerProcess, ThreadOwned};
use crate::tls::Verify;
use crate::wire::Driver;

/// What a pool's connections depend on: TLS, the connect timeout and where they are routed
/// (proxies resolved from the setting and, when trusted, the environment).
type PoolKey = (Verify, Duration, Routes);

/// Held by every wire built with the same TLS, connect and proxy settings (one per key in a
/// process). The pools built for a key live as long as its lease: when the last client using
/// them is dropped, so are they and their idle connections (docs/guarantees.md#connections; 150
/// clients with distinct settings used to keep 300 sockets open).
pub(super) struct PoolLease {
    key: PoolKey,
    /// The key's routes as hyper-util matches them; `None` when every request goes straight.
    pub(super) routes: Option<Arc<Matcher>>,
    /// The process's shared pool for these settings (`Driver::Shared`), reached without the
    /// registry's lock or hashing its key; built again after a fork.
    shared: PerProcess<Arc<HttpClient>>,
}

impl std::fmt::Debug for PoolLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The routes' Debug shows no credentials (proxy.rs); the matcher's is not shown.
        f.debug_struct("PoolLease").field("key", &self.key).finish()
    }
}

/// A thread's pool and the lease that keeps it.
struct Pool {
    lease: Weak<PoolLease>,
    client: Arc<HttpClient>,
}

impl Pool {
    fn alive(&self) -> bool {
        self.lease.strong_count() > 0
    }
}

/// The leases of this process, by settings: clients built with the same settings share one.
type Leases = HashMap<PoolKey, Weak<PoolLease>>;
static LEASES: PerProcess<Mutex<Leases>> = PerProcess::new();

/// A thread's pools, found by their lease's address, not by hashing its key on every request:
/// a few per thread, and no other lease can have a listed address while its pool's `Weak`
/// keeps that allocation.
type ThreadPools = Vec<Pool>;

thread_local! {
    /// `Driver::ThisThread` pools; dropped with the thread (after a fork, leaked in the child).
    static THREAD_POOLS: std::cell::RefCell<Option<ThreadOwned<ThreadPools>>> =
        const { std::cell::RefCell::new(None) };
}

fn leases() -> Result<std::sync::MutexGuard<'static, Leases>> {
    LEASES
        .get_or_try_init(|| Ok::<_, Error>(Mutex::new(HashMap::new())))?
        .lock()
        .map_err(|_| Error::Internal("connection pool registry poisoned".into()))
}

/// The lease for these settings: the one other clients already hold, or a new one.
pub(super) fn lease_for(
    verify: &Verify,
    connect_timeout: Duration,
    proxy: &ProxySetting,
) -> Result<Arc<PoolLease>> {
    let key = (verify.clone(), connect_timeout, Routes::resolve(proxy));
    let mut leases = leases()?;
    if let Some(lease) = leases.get(&key).and_then(Weak::upgrade) {
        return Ok(lease);
    }
    // Build the pool now so a bad CA bundle fails at construction; before the lease, whose
    // drop takes the registry's lock that this thread holds (a failure here deadlocked).
    let routes = key.2.matcher().map(Arc::new);
    let client = build_client(&key, routes.clone())?;
    let shared = PerProcess::new();
    shared.get_or_try_init(|| Ok::<_, Error>(client))?;
    let lease = Arc::new(PoolLease {
        key: key.clone(),
        routes,
        shared,
    });
    leases.insert(key, Arc::downgrade(&lease));
    Ok(lease)
}

impl Drop for PoolLease {
    /// The last client with these settings is gone: forget the lease; its shared pool goes
    /// with it (`shared`, this process's only). Thread pools are swept by their thread
    /// (`thread_client_in`). A lock is held for a map removal, never across an await.
    fn drop(&mut self) {
        if let Some(leases) = LEASES.get() {
            if let Ok(mut leases) = leases.lock() {
                if leases.get(&self.key).is_some_and(|l| l.strong_count() == 0) {
                    leases.remove(&self.key);
                }
            }
        }
    }
}

/// The pooled client for `lease`'s settings and this driver, built once per process
/// (shared) or per thread.
pub(super) fn pooled_client(lease: &Arc<PoolLease>, driver: Driver) -> Result<Arc<HttpClient>> {
    if driver == Driver::ThisThread {
        let gone = || Error::Internal("this thread's connection pool is gone".into());
        return THREAD_POOLS
            .try_with(|cell| {
                let mut slot = cell.try_borrow_mut().map_err(|_| gone())?;
                let pools = ThreadOwned::get_or_build(&mut slot, || Ok(Vec::new()))?;
                thread_client_in(pools, lease)
            })
            .map_err(|_| gone())?;
    }
    let shared = lease
        .shared
        .get_or_try_init(|| build_client(&lease.key, lease.routes.clone()))?;
    Ok(shared.clone())
}

/// Drop this thread's pools that no client uses any more and close their idle connections:
/// for a sync client's `close` on the thread that used it. Otherwise they would wait for this
/// thread's next new pool (or its exit), their connections open until then, since those are
/// driven only while the thread waits on a request.
pub fn release_unused_here() {
    let unused: Vec<Pool> = THREAD_POOLS
        .try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return Vec::new(); // in a request on this thread (a signal handler's close)
            };
            let Some(pools) = ThreadOwned::get_mut(&mut slot) else {
                return Vec::new();
            };
            pools.extract_if(.., |pool| !pool.alive()).collect()
        })
        .unwrap_or_default();
    if unused.is_empty() {
        return;
    }
    // Dropped on this thread's runtime, which then runs the connections' tasks, woken by
    // their pool's end, to theirs: one turn to see it, one to close.
    let _ = crate::runtime::block_on_here(async move {
        drop(unused);
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
    });
}

/// This thread's client for `lease`, built and added on first use (or after a fork). Adding
/// one sweeps the pools nobody holds any more.
fn thread_client_in(pools: &mut ThreadPools, lease: &Arc<PoolLease>) -> Result<Arc<HttpClient>> {
    let of_lease = |pool: &&Pool| std::ptr::eq(pool.lease.as_ptr(), Arc::as_ptr(lease));
    if let Some(pool) = pools.iter().find(of_lease) {
        return Ok(pool.client.clone());
    }
    pools.retain(Pool::alive);
    let client = build_client(&lease.key, lease.routes.clone())?;
    pools.push(Pool {
        lease: Arc::downgrade(lease),
        client: client.clone(),
    });
    Ok(client)
}

fn build_client((verify, _, _): &PoolKey, routes: Option<Arc<Matcher>>) -> Result<Arc<HttpClient>> {
    // One TLS configuration per process and setting, shared by every pool (tls.rs).
    let tls = crate::tls::client_config(verify)?;
    // No connect timeout here: each attempt bounds its connects (connect_deadline.rs), with
    // the call's own setting when it has one, so a derived client needs no pool of its own.
    let connector = Connector::new(tls, routes);
    let connector = tower_layer::Layer::layer(&crate::connect_deadline::Layer, connector);
    // Redirects are followed by the client, hop by hop (client.rs).
    Ok(Arc::new(HttpClient::new(connector)))
}
