//! The Redis side of fleet mode (docs/guides/fleets.md): a connection per process, every command
//! run on our runtime (crates/core/src/runtime.rs) and bounded by `connect_timeout`.
//!
//! The connection is a multiplexed one that we drop after any failure and open again on the
//! next use, rather than redis's ConnectionManager: its background reconnection would keep
//! retrying a Redis that is down, where we only need a fresh try at the next renewal.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::{AsyncConnectionConfig, RedisError};

use crate::error::{Error, Result};
use crate::runtime;

/// What every process of a client shares: where Redis is and how long to wait for it.
#[derive(Clone)]
pub struct RedisConfig {
    client: redis::Client,
    /// A store command taking longer than this counts as a failure (`connect_timeout`).
    pub op_timeout: Duration,
    /// Expiry of the renewal lock (the client's `timeout`).
    pub lock_ttl: Duration,
}

impl std::fmt::Debug for RedisConfig {
    // The URL may hold a password: never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisConfig(op_timeout={:?})", self.op_timeout)
    }
}

impl RedisConfig {
    /// `url` is `redis://…` or `rediss://…`; it is never quoted in an error (a password).
    pub fn new(url: &str, op_timeout: Duration, lock_ttl: Duration) -> Result<RedisConfig> {
        let lower = url
            .get(..9)
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if !(lower.starts_with("redis://") || lower.starts_with("rediss://")) {
            return Err(Error::Configuration(
                "token_store must be a redis:// or rediss:// URL".into(),
            ));
        }
        if lower.starts_with("rediss://") {
            // redis's rustls takes the process's default provider: make it ring, ours. A
            // provider installed already (by the application) is kept.
            let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        }
        let client = redis::Client::open(url)
            .map_err(|_| Error::Configuration("token_store is not a valid Redis URL".into()))?;
        // redis parses `rediss://…#insecure` (no certificate checks), then fails every
        // connection for want of its `tls-rustls-insecure` feature: say so once, here.
        if let redis::ConnectionAddr::TcpTls { insecure: true, .. } =
            client.get_connection_info().addr()
        {
            return Err(Error::Configuration(
                "token_store: certificate checks cannot be turned off (#insecure)".into(),
            ));
        }
        Ok(RedisConfig {
            client,
            op_timeout,
            lock_ttl,
        })
    }
}

/// The connection of one process (built in the process that uses it, after a fork too); its
/// clones share it.
#[derive(Clone)]
pub struct RedisStore {
    config: RedisConfig,
    connection: Arc<Mutex<Option<MultiplexedConnection>>>,
}

/// Why a store command failed, in words that hold no secret, and a stable kind for telemetry.
#[derive(Debug, Clone)]
pub struct StoreFailure {
    pub kind: &'static str,
    pub message: String,
}

impl RedisStore {
    pub fn new(config: RedisConfig) -> RedisStore {
        RedisStore {
            config,
            connection: Arc::new(Mutex::new(None)),
        }
    }

    pub fn lock_ttl(&self) -> Duration {
        self.config.lock_ttl
    }

    /// `GET key`.
    pub async fn get(&self, key: &str) -> std::result::Result<Option<Vec<u8>>, StoreFailure> {
        let mut command = redis::cmd("GET");
        command.arg(key);
        self.run(command).await
    }

    /// `SET key value PX ttl`.
    pub async fn set(
        &self,
        key: &str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> std::result::Result<(), StoreFailure> {
        let mut command = redis::cmd("SET");
        command.arg(key).arg(value).arg("PX").arg(millis(ttl));
        self.run::<Option<String>>(command).await.map(|_| ())
    }

    /// `SET key value NX PX ttl`: true when this caller took it.
    pub async fn set_nx(
        &self,
        key: &str,
        value: &str,
        ttl: Duration,
    ) -> std::result::Result<bool, StoreFailure> {
        let mut command = redis::cmd("SET");
        command
            .arg(key)
            .arg(value)
            .arg("NX")
            .arg("PX")
            .arg(millis(ttl));
        Ok(self.run::<Option<String>>(command).await?.is_some())
    }

    /// Delete `key` only if it still holds `expected` (atomically, in a Lua script).
    pub async fn delete_if(
        &self,
        key: &str,
        expected: &[u8],
    ) -> std::result::Result<bool, StoreFailure> {
        const SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
             return redis.call('DEL', KEYS[1]) else return 0 end";
        let mut command = redis::cmd("EVAL");
        command.arg(SCRIPT).arg(1).arg(key).arg(expected);
        Ok(self.run::<i64>(command).await? == 1)
    }

    /// Run `command` on our runtime within `op_timeout`: the connection's driver task is
    /// spawned where the connection is opened, and only that runtime is always running (a sync
    /// caller's own runtime runs only while that caller waits).
    async fn run<T>(&self, command: redis::Cmd) -> std::result::Result<T, StoreFailure>
    where
        T: redis::FromRedisValue + Send + 'static,
    {
        let runtime = runtime::runtime().map_err(|_| StoreFailure {
            kind: "runtime",
            message: "the I/O runtime is not available".into(),
        })?;
        let slot = self.connection.clone();
        let client = self.config.client.clone();
        let limit = self.config.op_timeout;
        let task = runtime.spawn(async move {
            let attempt = async {
                let mut connection = connect(&slot, &client, limit).await?;
                let value = connection.req_packed_command(&command).await?;
                redis::from_redis_value::<T>(value.extract_error()?).map_err(RedisError::from)
            };
            match tokio::time::timeout(limit, attempt).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => {
                    forget(&slot);
                    Err(describe(&error))
                }
                Err(_) => {
                    forget(&slot);
                    Err(StoreFailure {
                        kind: "timeout",
                        message: format!(
                            "timed out: no answer within {:.1} s",
                            limit.as_secs_f64()
                        ),
                    })
                }
            }
        });
        match task.await {
            Ok(outcome) => outcome,
            Err(_) => Err(StoreFailure {
                kind: "runtime",
                message: "the store command was cancelled".into(),
            }),
        }
    }
}

async fn connect(
    slot: &Mutex<Option<MultiplexedConnection>>,
    client: &redis::Client,
    limit: Duration,
) -> std::result::Result<MultiplexedConnection, RedisError> {
    let cached = lock(slot).clone();
    if let Some(connection) = cached {
        return Ok(connection);
    }
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(limit))
        .set_response_timeout(Some(limit));
    let connection = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    *lock(slot) = Some(connection.clone());
    Ok(connection)
}

/// After a failure the next command opens a new connection (Redis restarted, failed over).
fn forget(slot: &Mutex<Option<MultiplexedConnection>>) {
    lock(slot).take();
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Words for a Redis error, without its URL (which may hold a password).
fn describe(error: &RedisError) -> StoreFailure {
    let (kind, message) = if let Some(tls) = tls_failure(error) {
        // rustls's words name the certificate's fault (issuer, name, expiry), never a secret.
        ("tls", format!("TLS handshake failed: {tls}"))
    } else if error.is_timeout() {
        ("timeout", "timed out".to_owned())
    } else if error.is_connection_refusal() {
        ("connection_refused", "connection refused".to_owned())
    } else if error.is_io_error() || error.is_connection_dropped() {
        ("connection", "connection failed or dropped".to_owned())
    } else if let Some(code) = error.code() {
        ("server", format!("Redis answered {code}"))
    } else {
        ("protocol", format!("Redis error ({:?})", error.kind()))
    };
    StoreFailure { kind, message }
}

/// The rustls error under a failed `rediss://` handshake: tokio-rustls hands it to redis inside
/// an `io::Error`, which redis keeps as its source behind an `Arc`.
fn tls_failure(error: &RedisError) -> Option<&tokio_rustls::rustls::Error> {
    use std::error::Error as _;
    let source = error.source()?;
    let io = match source.downcast_ref::<Arc<dyn std::error::Error + Send + Sync>>() {
        Some(shared) => shared.downcast_ref::<std::io::Error>()?,
        None => source.downcast_ref::<std::io::Error>()?,
    };
    io.get_ref()?.downcast_ref::<tokio_rustls::rustls::Error>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_rustls::rustls::{CertificateError, Error as TlsError};

    #[test]
    fn a_refused_certificate_is_described_as_tls() {
        let refused = TlsError::InvalidCertificate(CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, refused);
        let failure = describe(&RedisError::from(io));
        assert_eq!(failure.kind, "tls");
        assert!(failure.message.starts_with("TLS handshake failed: "));
        assert!(
            failure.message.contains("UnknownIssuer"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn other_io_errors_are_not_tls() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(describe(&RedisError::from(reset)).kind, "connection");
    }

    #[test]
    fn insecure_is_refused() {
        let second = Duration::from_secs(1);
        for url in [
            "rediss://127.0.0.1:6380/0#insecure",
            "rediss://:pw@h:1/#insecure",
        ] {
            match RedisConfig::new(url, second, second) {
                Err(Error::Configuration(message)) => assert!(message.contains("#insecure")),
                other => panic!("{url}: {other:?}"),
            }
        }
        assert!(RedisConfig::new("rediss://127.0.0.1:6380/0", second, second).is_ok());
    }
}
