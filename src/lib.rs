//! Core of `recurring_payments`: HAL documents, relation names, RFC 6570 templates, the token
//! lifecycle, the HTTP transport and the sandbox server. Nothing outside `py/` knows about Python.

pub mod error;
pub mod hal;
pub mod rels;
pub mod runtime;
pub mod template;
mod text;

#[cfg(feature = "python")]
mod py;
