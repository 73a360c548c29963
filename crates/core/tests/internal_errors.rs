//! Internal failures are `Error::Internal`, never a configuration error: nothing the caller set
//! can fix them. Here, a request from a thread-local destructor that runs after the thread's
//! I/O runtime is gone.

use std::cell::RefCell;
use std::sync::mpsc;

use rp_core::error::Error;
use rp_core::runtime::block_on_here;

struct AtThreadExit(RefCell<Option<mpsc::Sender<Result<(), Error>>>>);

impl Drop for AtThreadExit {
    fn drop(&mut self) {
        if let Some(report) = self.0.borrow_mut().take() {
            let _ = report.send(block_on_here(async {}));
        }
    }
}

thread_local! {
    static AT_EXIT: AtThreadExit = const { AtThreadExit(RefCell::new(None)) };
}

#[test]
fn a_request_after_the_thread_runtime_is_gone_is_internal() {
    let (report, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        // Thread locals are destroyed in the reverse order of their first use: ours is
        // destroyed after the runtime's.
        AT_EXIT.with(|at_exit| *at_exit.0.borrow_mut() = Some(report));
        block_on_here(async {}).unwrap();
    })
    .join()
    .unwrap();
    let outcome = outcome.recv().unwrap();
    assert!(
        matches!(&outcome, Err(Error::Internal(m)) if m.contains("gone")),
        "{outcome:?}"
    );
}
