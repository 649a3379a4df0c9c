//! Where a shared structure lives ([`Endpoint`]: one server or a cluster's nodes) and a cluster's masters
//! with their slots ([`Master`]), as errors and records name them.

use super::RedisUrl;
use crate::{Error, Result};

/// Where a shared structure lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// One server.
    Server(RedisUrl),
    /// A Redis Cluster, reached through any of these nodes.
    Cluster(Vec<RedisUrl>),
}

impl Endpoint {
    /// Parses `--redis-cluster`'s comma-separated node URLs.
    pub fn cluster(text: &str) -> Result<Endpoint> {
        let nodes = text
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| RedisUrl::parse_for("--redis-cluster", t))
            .collect::<Result<Vec<_>>>()?;
        if let Some(url) = nodes.iter().find(|u| u.db != 0) {
            return Err(Error::invalid(
                "--redis-cluster",
                format!(
                    "{url} names database {}; a cluster has only database 0",
                    url.db
                ),
            ));
        }
        if nodes.is_empty() {
            return Err(Error::invalid(
                "--redis-cluster",
                "names no node; expected redis://host:port[,redis://host:port…]",
            ));
        }
        Ok(Endpoint::Cluster(nodes))
    }

    /// The first node given (the server itself, for one server).
    pub fn first(&self) -> &RedisUrl {
        match self {
            Endpoint::Server(url) => url,
            Endpoint::Cluster(nodes) => &nodes[0],
        }
    }

    /// Whether this is a cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self, Endpoint::Cluster(_))
    }

    /// `host:port`, or `cluster host:port,…`, as errors and records name it.
    pub fn addr(&self) -> String {
        match self {
            Endpoint::Server(url) => url.addr(),
            Endpoint::Cluster(nodes) => format!(
                "cluster {}",
                nodes.iter().map(|n| n.addr()).collect::<Vec<_>>().join(",")
            ),
        }
    }
}

/// A master of a cluster and the slot ranges it serves (one server: all slots).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Master {
    pub host: String,
    pub port: u16,
    pub slots: Vec<(u16, u16)>,
}

impl Master {
    /// `host:port`.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The slot ranges as `a-b,c-d`.
    pub fn slot_ranges(&self) -> String {
        self.slots
            .iter()
            .map(|(a, b)| format!("{a}-{b}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether it serves `slot`.
    pub fn serves(&self, slot: u16) -> bool {
        self.slots.iter().any(|&(a, b)| (a..=b).contains(&slot))
    }
}
