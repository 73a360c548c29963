//! Credentials (`credentials.rs`: given, or asked of a provider), tokens (`token.rs`) and the
//! single-flight token cache (`cache.rs`, docs/concepts.md#tokens), in front of an optional token
//! store shared by a fleet of processes (docs/guides/fleets.md: `store.rs`).

mod cache;
mod credentials;
mod redis_store;
mod sealed;
mod store;
mod token;

pub(crate) use cache::{lead, Landed, Lead, Requester, TokenCache};
pub use credentials::{AskCredentials, CredentialSource, Credentials};
pub(crate) use credentials::{Basis, Source};
pub use store::{StoreEvent, StoreSpec};
pub use token::Token;
