//! Redis transport: a small RESP2 client, a throwaway server for tests and `just redis-up`, and how a
//! shared structure is reached ([`RemoteConfig`]). The backends built on it live in [`crate::remote`].
//!
//! The client is hand-rolled on purpose: the harness compares it against a raw pipeline of the same bytes
//! (the "≥ 90% of what the module sustains"), so commands are encoded straight from a key batch
//! into the socket buffer and integer-array replies are read without building a value tree.

pub mod client;
pub mod config;
pub mod server;
pub mod url;

pub use client::{Client, RedisUrl, Reply};
pub use config::{BitmapLayout, BitmapMode, RemoteConfig};
