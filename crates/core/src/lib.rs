//! The PyO3-free core of `recurring_payments`: HAL documents, relation names, RFC 6570
//! templates, the token lifecycle and the request path. `cargo test` tests it without Python;
//! the bindings (`crates/python`) only wrap it.

pub mod attempt_loop;
pub mod auth;
pub mod client;
mod connect_deadline;
pub mod error;
pub mod hal;
pub mod hyper_wire;
pub mod media;
pub mod proxy;
pub mod records;
pub mod rels;
pub mod reply;
pub mod request;
pub mod runtime;
pub mod template;
pub mod text;
pub mod tls;
pub mod transport;
pub mod url;
pub mod url_text;
pub mod wire;
