//! The PyO3 bindings: the only code that knows about Python. Thin by design: each function
//! converts its arguments, calls the core, and converts the result or the error.

mod aio;
mod call;
mod client;
mod client_async;
mod construct;
mod convert;
mod document;
mod errors;
mod generic_getattr;
mod kept;
mod link;
mod observed;
mod provider;
mod rels;
mod reply;
mod resource;
mod sandbox;
mod shutdown;
mod telemetry;
mod template;
mod token;
mod untracked;

// gil_used: a free-threaded CPython turns the GIL back on when it imports us (README,
// "Supported versions"): the bindings were written and tested with the GIL only.
#[pyo3::pymodule(gil_used = true)]
mod _core {
    #[pymodule_export]
    use super::call::CallOptions;
    #[pymodule_export]
    use super::client::NativeClient;
    #[pymodule_export]
    use super::document::{Document, Links};
    #[pymodule_export]
    use super::link::LinkCore;
    #[pymodule_export]
    use super::rels::{RelCache, RelIndex};
    #[pymodule_export]
    use super::resource::{resource_items, ResourceCore};
    #[pymodule_export]
    use super::sandbox::request::SandboxRequest;
    #[pymodule_export]
    use super::sandbox::SandboxServer;
    #[pymodule_export]
    use super::telemetry::{AttemptRecord, StoreRecord};
    #[pymodule_export]
    use super::template::expand_target;
    #[pymodule_export]
    use super::template::expand_uri_template;
    #[pymodule_export]
    use super::template::template_variables;
    #[pymodule_export]
    use super::token::PyToken;
    #[pymodule_export]
    use super::untracked::track;

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        super::errors::bind(m.py())?;
        super::shutdown::register(m)
    }
}
