//! Core of `recurring_payments`: HAL documents, relation names, RFC 6570 templates, the token
//! lifecycle, the HTTP transport and the sandbox server. Nothing outside `py/` knows about Python.

pub mod error;
pub mod runtime;
pub mod sandbox;
pub mod template;

#[cfg(feature = "python")]
mod py;
