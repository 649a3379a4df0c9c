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
    SavedFile(#[from] FormatError),
    /// A saved filter file at `path` is malformed.
    #[error("{path}: {source}")]
    SavedFileAt {
        path: PathBuf,
        #[source]
        source: FormatError,
    },
    /// JSON (de)serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// A Redis server failed or went away; `addr` is its `host:port`.
    #[error("redis at {addr}: {message}")]
    Remote { addr: String, message: String },
    /// An external peer's program (Python, Java) failed or answered what it was not asked.
    #[error("external peer {id}: {message}")]
    External { id: String, message: String },
    /// Drawing a chart failed.
    #[error("chart {chart}: {message}")]
    Chart { chart: String, message: String },
    /// A page template failed to render.
    #[error("template {name}: {message}")]
    Template { name: String, message: String },
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

/// Text read from a file, made safe to print: control characters escaped as Rust writes them
/// (`\u{1b}`), so bytes from a file never drive the terminal; everything else as it is.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// What is wrong with a saved filter file's content ([`crate::persist`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FormatError {
    #[error("not a dedupbench filter file (bad magic bytes)")]
    BadMagic,
    #[error("truncated: the header is incomplete")]
    Truncated,
    #[error("format version {found}; this build reads version {expected}")]
    Version { found: u32, expected: u32 },
    #[error("checksum mismatch: the file is corrupt or truncated")]
    Checksum,
    #[error("kind id is not UTF-8")]
    KindNotUtf8,
    #[error("hash '{found}' is not one this build knows; known hashes: {known}")]
    Hash { found: String, known: String },
    /// A hash this build knows but does not build structures with (`HashFn::usable`).
    #[error("saved with hash {0}")]
    HashNotUsable(String),
    #[error("kind '{id}' cannot be loaded; savable kinds: {savable}")]
    NotSavable { id: String, savable: String },
    /// A structure's parameters or arrays are inconsistent.
    #[error("{0}")]
    Corrupt(String),
}
