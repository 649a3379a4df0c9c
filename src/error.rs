//! The library's error type. Every variant says what was wrong and, where it helps, what is allowed.

use std::path::PathBuf;

/// Errors raised by the library. The CLI wraps them with `anyhow` context.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value given by the user is out of range or unparsable; `what` names the flag or field.
    #[error("invalid {what}: {message}")]
    Invalid { what: String, message: String },
    /// An I/O error on a file; the path is part of the message.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A results, profile or input file whose content is malformed.
    #[error("{path}:{line}: {message}")]
    Format {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A saved filter's bytes are malformed.
    #[error("invalid filter file: {0}")]
    SavedFile(#[from] crate::persist::FormatError),
    /// A saved filter file at `path` is malformed.
    #[error("{path}: {source}")]
    SavedFileAt {
        path: PathBuf,
        #[source]
        source: crate::persist::FormatError,
    },
    /// JSON (de)serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// A Redis server failed or went away; `addr` is its `host:port`.
    #[error("redis at {addr}: {message}")]
    Remote { addr: String, message: String },
    /// Drawing a chart failed.
    #[error("chart {chart}: {message}")]
    Chart { chart: String, message: String },
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
