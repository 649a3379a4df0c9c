//! A throwaway Redis Cluster for tests, the sweep and `scripts/redis-cluster.sh`: N `redis-server`
//! processes in cluster mode ([`Server`] with `cluster-enabled yes`) on free loopback ports whose bus ports
//! (port + 10000) were free too, joined by `redis-cli --cluster create … --cluster-yes` (the tool Redis
//! ships for it), then waited for until every node reports `cluster_state:ok` and the same slot map
//! (`CLUSTER INFO` and `CLUSTER SLOTS`, asked through the `redis` crate).
//! Dropping the handle kills every node.
//!
//! Faults for tests: [`Cluster::kill`] and [`Cluster::restart`] a node (its data comes back from its
//! append-only file when the cluster is durable), [`Cluster::reshard`] moves slots between masters with
//! `redis-cli --cluster reshard` while clients keep writing.

use super::server::{Server, ServerOptions};
use super::RedisUrl;
use crate::{Error, Result};
use std::process::Command;
use std::time::{Duration, Instant};

/// A running throwaway cluster.
pub struct Cluster {
    nodes: Vec<Server>,
    masters: usize,
}

impl Cluster {
    /// Starts `masters` masters with `replicas` replicas each.
    pub fn start(masters: usize, replicas: usize, options: ServerOptions) -> Result<Cluster> {
        if masters < 3 {
            return Err(Error::invalid(
                "--masters",
                format!("Redis Cluster needs at least 3 masters, got {masters}"),
            ));
        }
        let options = ServerOptions {
            cluster: true,
            ..options
        };
        let nodes = (0..masters * (1 + replicas))
            .map(|_| Server::start_with(options))
            .collect::<Result<Vec<_>>>()?;
        let cluster = Cluster { nodes, masters };
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for n in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", n.port()));
        }
        create.args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"]);
        cluster.run("redis-cli --cluster create", &mut create)?;
        cluster.wait_ok(Duration::from_secs(60))?;
        cluster.wait_replicas_synced(Duration::from_secs(60))?;
        Ok(cluster)
    }

    /// Every node's URL (masters first, as created).
    pub fn urls(&self) -> Vec<RedisUrl> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// The URLs as `--redis-cluster` takes them.
    pub fn flag(&self) -> String {
        self.urls()
            .iter()
            .map(|u| u.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// How many masters the cluster was created with.
    pub fn masters(&self) -> usize {
        self.masters
    }

    /// Node `i`.
    pub fn node(&self, i: usize) -> &Server {
        &self.nodes[i]
    }

    /// Kills node `i` (SIGKILL: no shutdown save).
    pub fn kill(&mut self, i: usize) {
        self.nodes[i].kill();
    }

    /// Waits until every replica has its master's data (`INFO replication`: `master_link_status:up`):
    /// a replica still in its first sync cannot be promoted when its master fails.
    pub fn wait_replicas_synced(&self, limit: Duration) -> Result<()> {
        let started = Instant::now();
        loop {
            let synced = (0..self.nodes.len()).all(|i| {
                let url = self.nodes[i].url();
                let info: Option<String> = redis::Client::open(url.connection_text())
                    .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
                    .and_then(|mut c| redis::cmd("INFO").arg("replication").query(&mut c))
                    .ok();
                info.is_some_and(|i| {
                    !i.contains("role:slave") || i.contains("master_link_status:up")
                })
            });
            if synced {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(Error::invalid(
                    "redis",
                    format!("the replicas did not sync within {} s", limit.as_secs()),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts node `i` again on its port, directory and cluster config, and waits for the cluster.
    pub fn restart(&mut self, i: usize) -> Result<()> {
        self.nodes[i].restart()?;
        self.wait_ok(Duration::from_secs(60))
    }

    /// Moves `slots` slots from node `from` to node `to` (`redis-cli --cluster reshard`), keys included.
    pub fn reshard(&self, from: usize, to: usize, slots: u32) -> Result<()> {
        let id = |i: usize| -> Result<String> { self.cluster(i, "MYID") };
        let (from_id, to_id) = (id(from)?, id(to)?);
        let mut reshard = Command::new("redis-cli");
        reshard
            .arg("--cluster")
            .arg("reshard")
            .arg(format!("127.0.0.1:{}", self.nodes[from].port()))
            .args(["--cluster-from", &from_id, "--cluster-to", &to_id])
            .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
            .args(["--cluster-pipeline", "100"]);
        self.run("redis-cli --cluster reshard", &mut reshard)?;
        self.wait_ok(Duration::from_secs(60))
    }

    /// `CLUSTER what` on node `i`, through the `redis` crate (a short connection of its own).
    fn cluster<T: redis::FromRedisValue>(&self, i: usize, what: &str) -> Result<T> {
        let url = self.nodes[i].url();
        let failed = |e: redis::RedisError| Error::Remote {
            addr: url.addr(),
            message: format!("CLUSTER {what}: {e}"),
        };
        let client = redis::Client::open(url.connection_text()).map_err(failed)?;
        let mut c = client
            .get_connection_with_timeout(Duration::from_secs(2))
            .map_err(failed)?;
        redis::cmd("CLUSTER")
            .arg(what)
            .query(&mut c)
            .map_err(failed)
    }

    fn run(&self, what: &str, command: &mut Command) -> Result<String> {
        let out = command
            .output()
            .map_err(|e| Error::invalid("redis", format!("cannot run {what}: {e}")))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() || text.contains("[ERR]") {
            return Err(Error::invalid(
                "redis",
                format!(
                    "{what} failed ({}): {} {}",
                    out.status,
                    text.lines().rev().take(5).collect::<Vec<_>>().join(" | "),
                    String::from_utf8_lossy(&out.stderr)
                ),
            ));
        }
        Ok(text)
    }

    /// Waits until every running node says `cluster_state:ok` and all agree on the slot map.
    fn wait_ok(&self, limit: Duration) -> Result<()> {
        let started = Instant::now();
        loop {
            let states: Vec<Option<(bool, String)>> = (0..self.nodes.len())
                .map(|i| {
                    let info: String = self.cluster(i, "INFO").ok()?;
                    let slots: Vec<redis::Value> = self.cluster(i, "SLOTS").ok()?;
                    // Each range with its nodes, in an order that does not depend on the node asked.
                    let mut ranges: Vec<String> = slots.iter().map(|r| format!("{r:?}")).collect();
                    ranges.sort_unstable();
                    Some((info.contains("cluster_state:ok"), ranges.join(",")))
                })
                .collect();
            let ok = states.iter().all(|s| matches!(s, Some((true, _))))
                && states
                    .windows(2)
                    .all(|w| w[0].as_ref().map(|s| &s.1) == w[1].as_ref().map(|s| &s.1));
            if ok {
                return Ok(());
            }
            if started.elapsed() > limit {
                return Err(Error::invalid(
                    "redis",
                    format!(
                        "the cluster did not reach cluster_state:ok within {} s: {}",
                        limit.as_secs(),
                        self.nodes[0].log_tail()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// For tests: a cluster of `masters` masters (with the module when `with_module`, durable when
/// `durable`), or `None` with a loud message when Redis pieces are missing and
/// [`super::server::REQUIRE_VAR`] is not set. With it set, a missing piece panics.
pub fn cluster_for_test(masters: usize, with_module: bool, durable: bool) -> Option<Cluster> {
    // The same checks as for one server (binary, module), and redis-cli for `--cluster create`.
    let probe = super::server::server_for_test(with_module)?;
    drop(probe);
    if Command::new("redis-cli").arg("--version").output().is_err() {
        let why = "redis-cli is not installed (apt-get install -y redis-tools)";
        if super::server::required() {
            panic!("{} is set but {why}", super::server::REQUIRE_VAR);
        }
        eprintln!(
            "\n*** SKIPPED: {why}; set {}=1 to make this a failure ***\n",
            super::server::REQUIRE_VAR
        );
        return None;
    }
    match Cluster::start(
        masters,
        0,
        ServerOptions {
            module: with_module,
            durable,
            cluster: true,
        },
    ) {
        Ok(c) => Some(c),
        Err(e) => panic!("cannot start a test cluster: {e}"),
    }
}
