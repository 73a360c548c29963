//! The sandbox's virtual clock: real monotonic time plus an offset that tests move forward, so
//! token expiry can be exercised without sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Clock {
    origin: Instant,
    /// Nanoseconds added by `advance`; never decreases, so virtual time stays monotonic.
    offset_nanos: AtomicU64,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock {
    pub fn new() -> Self {
        Clock {
            origin: Instant::now(),
            offset_nanos: AtomicU64::new(0),
        }
    }

    /// Virtual time elapsed since the clock was created.
    pub fn now(&self) -> Duration {
        self.origin.elapsed() + Duration::from_nanos(self.offset_nanos.load(Ordering::Acquire))
    }

    /// Move virtual time forward (saturating: u64 nanoseconds is ~584 years).
    pub fn advance(&self, by: Duration) {
        let add = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        let _ = self
            .offset_nanos
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                Some(old.saturating_add(add))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_moves_time_forward() {
        let clock = Clock::new();
        let before = clock.now();
        clock.advance(Duration::from_secs(1000));
        assert!(clock.now() >= before + Duration::from_secs(1000));
        clock.advance(Duration::MAX);
        assert!(clock.now() > Duration::from_secs(1 << 33));
    }
}
