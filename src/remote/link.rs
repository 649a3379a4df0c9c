//! The connection latch and parameter claim every Redis backend uses.
//!
//! Invariant: two workers never use one structure with different parameters (`NAME:params`, `SET NX`).

use crate::redis::{Client, Reply};
use crate::Result;
use std::sync::Mutex;

/// Where a shared structure's parameters live: `NAME:params`.
pub fn params_key(name: &str) -> String {
    format!("{name}:params")
}

/// Stores a structure's parameters under `NAME:params` unless they are there (`SET NX`); when they are,
/// they must be the same, so two workers never use one structure with different parameters. Returns
/// whether this call created them.
pub fn claim_params(client: &mut Client, name: &str, params: &str) -> Result<bool> {
    let key = params_key(name);
    if client.call(&[b"SET", key.as_bytes(), params.as_bytes(), b"NX"])? != Reply::Bulk(None) {
        return Ok(true);
    }
    let stored = client.call(&[b"GET", key.as_bytes()])?;
    let stored = String::from_utf8_lossy(stored.bytes().unwrap_or_default()).into_owned();
    if stored != params {
        return Err(client.error(format!(
            "filter '{name}' was created with \"{stored}\"; this worker asks for \"{params}\". \
             Use the same --structure, --expected, --fpr and --seed, or another name"
        )));
    }
    Ok(false)
}

/// For workers that only read: the structure must exist (its parameters key is there).
pub fn require_existing(client: &mut Client, name: &str) -> Result<()> {
    let key = params_key(name);
    if client.call(&[b"EXISTS", key.as_bytes()])?.int() == Some(0) {
        return Err(client.error(format!(
            "there is no shared filter named '{name}' ({key} is missing); insert into it first"
        )));
    }
    Ok(())
}

/// A connection shared by a backend's `&self` and `&mut self` methods, with a latch for the first error.
///
/// The [`crate::structures::Membership`] trait answers counts, not results, so a backend that loses its
/// server records the error here, answers 0 from then on, and the harness reads
/// [`crate::structures::Membership::failure`] after every pass: a cell built on a partial filter is reported
/// as failed, never as a measurement.
pub struct Link {
    client: Mutex<Client>,
    failure: Mutex<Option<String>>,
}

impl Link {
    /// Wraps a connected client.
    pub fn new(client: Client) -> Self {
        Link {
            client: Mutex::new(client),
            failure: Mutex::new(None),
        }
    }

    /// Runs `work` on the connection unless an earlier call failed; a failure is latched and gives
    /// `T::default()`.
    pub fn run<T: Default>(&self, work: impl FnOnce(&mut Client) -> Result<T>) -> T {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if failure.is_some() {
            return T::default();
        }
        let mut client = self.client.lock().unwrap_or_else(|p| p.into_inner());
        match work(&mut client) {
            Ok(v) => v,
            Err(e) => {
                *failure = Some(e.to_string());
                T::default()
            }
        }
    }

    /// The first error, if any call failed.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The server's `host:port`.
    pub fn addr(&self) -> String {
        self.client
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .addr()
            .to_string()
    }
}
