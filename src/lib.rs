//! Core of `recurring_payments`: HAL documents, relation names, RFC 6570 templates, the token
//! lifecycle, the HTTP transport and the sandbox server. Nothing outside `py/` knows about Python.

pub mod auth;
pub mod client;
pub mod error;
pub mod hal;
pub mod media;
pub mod rels;
pub mod runtime;
pub mod sandbox;
pub mod template;
mod text;
mod tls;
pub mod transport;

#[cfg(feature = "python")]
mod py;
