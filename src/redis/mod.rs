//! Redis transport: the connection every backend uses ([`Conn`], over the `redis` crate, to one server or
//! a cluster, with reconnect and resend), throwaway servers and clusters for tests and `just redis-up`, and
//! how a shared structure is reached ([`RemoteConfig`]). The backends built on it live in
//! [`crate::remote`].
//!
//! [`raw`] is the one hand-rolled piece: a bare socket that writes pre-encoded `BF.MADD` commands and skims
//! their replies. It is the sweep's yardstick (what the module sustains with no client cost), which no
//! client library can be, since measuring a library's overhead needs something without it.

pub mod cluster;
pub mod config;
pub mod conn;
pub mod endpoint;
pub mod raw;
mod round_trips;
pub mod server;
pub mod url;

pub use config::{BitmapLayout, BitmapMode, RemoteConfig};
pub use conn::{Conn, Endpoint, Master, WaitReplicas};
pub use url::RedisUrl;
