//! The flags that say where a shared filter lives (`--redis` or `--redis-cluster`, `--shards`,
//! `--retry-secs`), shared by `shared` and `dedup`.

use clap::Args;
use dedupbench::redis::{Endpoint, RedisUrl, RemoteConfig};
use dedupbench::{Error, Result};
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct RedisTarget {
    /// The Redis server (redis://host:port[/db]).
    #[arg(long, conflicts_with = "redis_cluster")]
    pub redis: Option<String>,
    /// A Redis Cluster (redis://host:port[,redis://host:port…]): the filter is split into --shards
    /// sub-filters spread over its masters.
    #[arg(long)]
    pub redis_cluster: Option<String>,
    /// Sub-filters on a cluster (default: 3 per master); every worker must give the same.
    #[arg(long, requires = "redis_cluster", value_parser = dedupbench::units::count_arg_as::<usize>)]
    pub shards: Option<usize>,
    /// Seconds a round trip is retried (on a fresh connection) while a server is away.
    #[arg(long, default_value_t = 30)]
    pub retry_secs: u64,
    /// On a cluster with replicas: after each round trip, `WAIT N` on every master, so a URL is written
    /// out (acknowledged) only once N replicas of its master hold it and a failover cannot lose it
    /// (Redis replicates asynchronously). A master short of N replicas is retried like a lost server.
    #[arg(long, requires = "redis_cluster", value_parser = dedupbench::units::count_arg_as::<u32>)]
    pub wait_replicas: Option<u32>,
    /// Milliseconds one `WAIT` may take before it counts as short of replicas.
    #[arg(long, requires = "wait_replicas", default_value_t = 1000)]
    pub wait_timeout_ms: u64,
}

impl RedisTarget {
    /// Where the filter lives, if a server or cluster was given.
    pub fn endpoint(&self) -> Result<Option<Endpoint>> {
        match (&self.redis, &self.redis_cluster) {
            (Some(url), _) => Ok(Some(Endpoint::Server(RedisUrl::parse(url)?))),
            (None, Some(urls)) => Ok(Some(Endpoint::cluster(urls)?)),
            (None, None) => Ok(None),
        }
    }

    /// The remote part of a build config for the filter `name`, if a server or cluster was given.
    pub fn remote(&self, name: &str) -> Result<Option<RemoteConfig>> {
        let Some(endpoint) = self.endpoint()? else {
            return Ok(None);
        };
        if self.retry_secs > 3600 {
            return Err(Error::invalid(
                "--retry-secs",
                format!("must be at most 3600, got {}", self.retry_secs),
            ));
        }
        // clap's `requires` does not hold beside `--redis` (it conflicts with the cluster flag).
        if matches!(endpoint, Endpoint::Server(_)) {
            if self.shards.is_some() {
                return Err(Error::invalid(
                    "--shards",
                    "splits a filter over a cluster's masters; give --redis-cluster, not --redis",
                ));
            }
            if self.wait_replicas.is_some() {
                return Err(Error::invalid(
                    "--wait-replicas",
                    "applies to a cluster (--redis-cluster), whose failovers this tool follows; one server's replicas are promoted by Sentinel, which it does not follow",
                ));
            }
        }
        let mut remote = RemoteConfig::new(endpoint, name);
        remote.shards = self.shards;
        remote.retry_for = Duration::from_secs(self.retry_secs);
        remote.wait = match self.wait_replicas {
            Some(0) => {
                return Err(Error::invalid(
                    "--wait-replicas",
                    "must be at least 1 (leave it out to acknowledge on the master alone)",
                ))
            }
            Some(replicas) => Some(dedupbench::redis::WaitReplicas {
                replicas,
                timeout_ms: self.wait_timeout_ms.clamp(1, 60_000),
            }),
            None => None,
        };
        Ok(Some(remote))
    }
}
