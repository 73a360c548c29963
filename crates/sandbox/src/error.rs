//! The sandbox's own errors. None is a client error: a test that misuses the fake, or a port
//! that is taken, is not something a `recurring_payments` client did. The Python bindings raise
//! them as `ValueError`, `OSError` and `recurring_payments.InternalError`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxError {
    /// A bad argument to a sandbox method; the message names the argument and what it accepts.
    Argument(String),
    /// The operating system refused: the port is taken, the host does not resolve, a file
    /// cannot be written. `errno` is the OS error number when there is one.
    Os { message: String, errno: Option<i32> },
    /// The sandbox cannot work in this process's state (its I/O runtime cannot start, the
    /// crypto library failed): the core's `Error::Internal`.
    Internal(String),
}

impl SandboxError {
    pub fn argument(message: impl Into<String>) -> Self {
        SandboxError::Argument(message.into())
    }

    /// `what` failed with the OS error `e`.
    pub fn os(what: impl fmt::Display, e: &std::io::Error) -> Self {
        SandboxError::Os {
            message: format!("{what}: {e}"),
            errno: e.raw_os_error(),
        }
    }
}

impl From<rp_core::error::Error> for SandboxError {
    fn from(error: rp_core::error::Error) -> Self {
        SandboxError::Internal(error.to_string())
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Argument(m) | SandboxError::Internal(m) => f.write_str(m),
            SandboxError::Os { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for SandboxError {}

pub type Result<T, E = SandboxError> = std::result::Result<T, E>;
