//! The attempts of a call, observed (DEBUG lines, telemetry) also when the call is dropped
//! before it ends: its awaiting task cancelled, or its sync wait interrupted (a
//! KeyboardInterrupt). Every attempt that happened is a span (docs/guides/observability-otel.md);
//! the one under way ends then, failed (`records::cancel_pending`). They were dropped with the
//! call's future.

use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::{PyKeyboardInterrupt, PySystemExit};
use pyo3::prelude::*;

use rp_core::auth::StoreEvent;
use rp_core::records;
use rp_core::records::Attempt;

use super::aio;
use super::reply::{observe, Observers};

/// What a call's future records, and where it goes if the future is dropped unfinished.
pub(crate) struct Observed<'a> {
    pub log: Vec<Attempt>,
    pub store_log: Vec<StoreEvent>,
    dropped: Option<Dropped<'a>>,
}

enum Dropped<'a> {
    /// The sync face: the calling thread observes them after its wait (`Slot::observe`).
    Slot(&'a Slot),
    /// The async face: the completion thread observes them, with the GIL.
    Later(Observers),
}

/// A dropped call's attempts and store commands.
type Records = (Vec<Attempt>, Vec<StoreEvent>);

/// Where a sync call's unfinished attempts wait for the calling thread (on its stack: the
/// wait borrows it).
#[derive(Default)]
pub(crate) struct Slot(Mutex<Option<Records>>);

impl<'a> Observed<'a> {
    /// For a sync call, whose thread reads `slot` when its wait is interrupted.
    pub(crate) fn into_slot(slot: &'a Slot) -> Observed<'a> {
        Observed::with(Dropped::Slot(slot))
    }

    /// For an async call: the observers of its completion, used by the drop instead.
    pub(crate) fn later(observers: Observers) -> Observed<'static> {
        Observed::with(Dropped::Later(observers))
    }

    fn with(dropped: Dropped<'a>) -> Observed<'a> {
        Observed {
            log: Vec::new(),
            store_log: Vec::new(),
            dropped: Some(dropped),
        }
    }

    /// The call ended: its records, and the async face's observers, for its completion.
    pub(crate) fn finish(mut self) -> (Vec<Attempt>, Vec<StoreEvent>, Option<Observers>) {
        let observers = match self.dropped.take() {
            Some(Dropped::Later(observers)) => Some(observers),
            _ => None,
        };
        let log = std::mem::take(&mut self.log);
        (log, std::mem::take(&mut self.store_log), observers)
    }
}

impl Drop for Observed<'_> {
    fn drop(&mut self) {
        let Some(dropped) = self.dropped.take() else {
            return; // finished
        };
        if self.log.is_empty() && self.store_log.is_empty() {
            return;
        }
        let (mut log, store_log) = (
            std::mem::take(&mut self.log),
            std::mem::take(&mut self.store_log),
        );
        match dropped {
            Dropped::Slot(Slot(slot)) => {
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some((log, store_log));
            }
            // On a runtime worker: no Python here; the completion thread takes the GIL.
            Dropped::Later(observers) => {
                records::cancel_pending(&mut log, "CancelledError");
                aio::observe_later(Box::new(move |py| {
                    let (recorder, template) =
                        (observers.recorder.as_ref(), observers.template.as_deref());
                    let logger = observers.logger.bind(py);
                    observe(logger, recorder, template, &log, &store_log);
                }));
            }
        }
    }
}

impl Slot {
    /// After a sync wait ended by `interrupted`: observe what the dropped call had recorded.
    pub(crate) fn observe(
        &self,
        py: Python<'_>,
        logger: &Py<PyAny>,
        recorder: Option<&Py<PyAny>>,
        template: Option<&str>,
        interrupted: &PyErr,
    ) {
        let taken = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        let Some((mut log, store_log)) = taken else {
            return;
        };
        let kind = if interrupted.is_instance_of::<PyKeyboardInterrupt>(py) {
            "KeyboardInterrupt"
        } else if interrupted.is_instance_of::<PySystemExit>(py) {
            "SystemExit"
        } else {
            "Interrupted"
        };
        records::cancel_pending(&mut log, kind);
        observe(logger.bind(py), recorder, template, &log, &store_log);
    }
}
