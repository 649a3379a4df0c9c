//! One connection to where a shared structure lives, a single server or a Redis Cluster, through the
//! `redis` crate: its pipelines, its cluster routing (slot map, MOVED/ASK, per-node pipelines sent to all
//! nodes before any reply is read) and its URL parsing.
//!
//! What this file adds is the fault policy the crate leaves to its caller. A round trip that fails because
//! a server went away (refused, reset, timed out, `LOADING`, `CLUSTERDOWN`, `TRYAGAIN`) is sent again on a
//! fresh connection, with a growing pause, until [`Conn::retry_for`] has passed. Only idempotent round
//! trips may go through [`Conn::pipeline`] and [`Conn::query`]: every command the backends send is (adding
//! a key or setting a bit twice leaves the structure as once). A server error (a wrong type, a full
//! filter) is never retried. When the time is up, the error names the node that does not answer and, on a
//! cluster, the slots it served.

pub use super::endpoint::{Endpoint, Master};
use crate::{Error, Result};
use redis::cluster::{ClusterClient, ClusterConnection};
use redis::{Cmd, ConnectionLike, ErrorKind, FromRedisValue, RedisError, ServerErrorKind, Value};
use std::time::{Duration, Instant};

/// How long a connect attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one reply may take before the server is declared gone: the retry time, within 10–60 s (a
/// stopped server must not outlast `--retry-secs` by a minute; a slow command, a `DEL` of a large set, must
/// not pass for a lost server).
fn reply_timeout(retry_for: Duration) -> Duration {
    retry_for.clamp(Duration::from_secs(10), Duration::from_secs(60))
}
/// The default time a round trip is retried for while its server is away.
pub const DEFAULT_RETRY_FOR: Duration = Duration::from_secs(30);

pub(super) enum Inner {
    Server(redis::Connection),
    Cluster(Box<ClusterConnection>),
}

/// A connection with the retry policy of this file's doc.
pub struct Conn {
    pub(super) endpoint: Endpoint,
    pub(super) inner: Option<Inner>,
    pub(super) retry_for: Duration,
    /// The masters seen at the last successful topology read (cluster) or the server.
    pub(super) masters: Vec<Master>,
    /// Round trips sent again after a lost server.
    pub(super) resent: u64,
    /// A second connection to a cluster, on its own thread, for the round trip that runs beside this
    /// one's.
    pub(super) twin: Option<Twin>,
    /// `WAIT` after each pipeline, on every master it wrote to (`--wait-replicas`).
    pub(super) wait: Option<WaitReplicas>,
}

/// How a write is acknowledged on a cluster with replicas: after its pipeline, `WAIT replicas timeout_ms`
/// on every master the pipeline wrote to, on the same connection, so a write counts as done only once
/// that many replicas of its master hold it. Redis replicates asynchronously: without this, a write a
/// master acknowledged and lost before its replica copied it is gone after the replica's promotion (the
/// Redis Cluster specification). A shortfall (a master without enough replicas answering, as just after
/// a failover) is retried like a lost server, the whole round trip sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitReplicas {
    pub replicas: u32,
    pub timeout_ms: u64,
}

impl Conn {
    /// Connects, with round trips retried for [`DEFAULT_RETRY_FOR`].
    pub fn connect(endpoint: &Endpoint) -> Result<Conn> {
        Conn::connect_retrying(endpoint, DEFAULT_RETRY_FOR)
    }

    /// Connects; round trips are retried for `retry_for` while a server is away. The first connect is
    /// not: a server that refuses it is a wrong address far more often than a restart, and is said at
    /// once. A server still loading its data, or a cluster not yet `ok`, is waited for.
    pub fn connect_retrying(endpoint: &Endpoint, retry_for: Duration) -> Result<Conn> {
        let mut conn = Conn {
            endpoint: endpoint.clone(),
            inner: None,
            retry_for,
            masters: Vec::new(),
            resent: 0,
            twin: None,
            wait: None,
        };
        let started = Instant::now();
        loop {
            match conn.open() {
                Ok(inner) => {
                    conn.inner = Some(inner);
                    break;
                }
                Err(e) if starting(&e) && started.elapsed() < retry_for => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => return Err(conn.error(format!("cannot connect: {e}"))),
            }
        }
        conn.masters = conn.read_masters()?;
        Ok(conn)
    }

    /// How long a round trip is retried while its server is away.
    pub fn retry_for(&self) -> Duration {
        self.retry_for
    }

    /// Where this connection goes.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Makes every later pipeline wait for `wait`'s replicas (cluster only: see [`WaitReplicas`]).
    pub fn wait_for_replicas(&mut self, wait: Option<WaitReplicas>) {
        self.wait = wait;
    }

    /// Round trips sent again after a server was lost.
    pub fn resent(&self) -> u64 {
        self.resent
    }

    /// An error about this endpoint.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Remote {
            addr: self.endpoint.addr(),
            message: message.into(),
        }
    }

    /// The masters (one server: itself, with every slot).
    pub fn masters(&self) -> &[Master] {
        &self.masters
    }

    /// One command, retried while the server is away.
    pub fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T> {
        let what = command_name(cmd);
        let value = self.with_retry(&what, |inner| match inner {
            Inner::Server(c) => c.req_command(cmd),
            Inner::Cluster(c) => c.req_command(cmd),
        })?;
        redis::from_redis_value(value).map_err(|e| self.error(format!("{what}: {e}")))
    }

    /// Idempotent commands in one round trip (per node, on a cluster), their replies in order; the whole
    /// round trip is sent again while a server is away. A server's error reply to any command fails it.
    /// The commands are encoded once, whatever the retries.
    pub fn pipeline(&mut self, cmds: Vec<Cmd>) -> Result<Vec<Value>> {
        let Some(first) = cmds.first() else {
            return Ok(Vec::new());
        };
        let what = command_name(first);
        if self.endpoint.is_cluster() {
            let mut pipe = redis::cluster::cluster_pipe();
            for cmd in &cmds {
                pipe.add_command(cmd.clone());
            }
            let wait = self.wait;
            return self.with_retry(&what, |inner| match inner {
                Inner::Cluster(c) => match pipe.query(c.as_mut()) {
                    // The crate's cluster pipeline reports a redirection inside a pipeline as a failure
                    // (redis 1.8: replies carry the error as a value, so its retry list stays empty);
                    // sent one by one, each command follows MOVED (refreshing the slot map) and ASK.
                    Err(e) if redirected(&e) => cmds
                        .iter()
                        .map(|cmd| c.req_command(cmd).and_then(|v| v.extract_error()))
                        .collect::<redis::RedisResult<Vec<Value>>>()
                        .and_then(|replies| wait_replicas(c, wait).map(|()| replies)),
                    Ok(replies) => wait_replicas(c, wait).map(|()| replies),
                    other => other,
                },
                Inner::Server(_) => unreachable!("a cluster endpoint opens a cluster connection"),
            });
        }
        if cmds.len() == 1 {
            let packed = cmds[0].get_packed_command();
            return self.with_retry(&what, |inner| match inner {
                Inner::Server(c) => c.req_packed_command(&packed).and_then(|v| match v {
                    Value::ServerError(e) => Err(e.into()),
                    v => Ok(vec![v]),
                }),
                Inner::Cluster(_) => unreachable!("a server endpoint opens a server connection"),
            });
        }
        let mut pipe = redis::pipe();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        self.with_retry(&what, |inner| match inner {
            Inner::Server(c) => pipe.query(c),
            Inner::Cluster(_) => unreachable!("a server endpoint opens a server connection"),
        })
    }

    /// A command on one node (a cluster's master by address; one server: the server).
    pub fn on_node<T: FromRedisValue>(&mut self, node: &Master, cmd: &Cmd) -> Result<T> {
        let what = command_name(cmd);
        let (host, port) = (node.host.clone(), node.port);
        let value = self.with_retry(&what, |inner| match inner {
            Inner::Server(c) => c.req_command(cmd),
            Inner::Cluster(c) => c.route_command(
                cmd,
                redis::cluster_routing::RoutingInfo::SingleNode(
                    redis::cluster_routing::SingleNodeRoutingInfo::ByAddress {
                        host: host.clone(),
                        port,
                    },
                ),
            ),
        })?;
        redis::from_redis_value(value).map_err(|e| Error::Remote {
            addr: node.addr(),
            message: format!("{what}: {e}"),
        })
    }

    /// Whether every master has the module `name` loaded (`MODULE LIST`: one map or flat list of
    /// field/value pairs per module, `name` among them).
    pub fn has_module(&mut self, name: &str) -> Result<bool> {
        let text = |v: &Value| match v {
            Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Value::SimpleString(s) => Some(s.clone()),
            _ => None,
        };
        for node in self.masters.clone() {
            let modules: Vec<Value> = self.on_node(&node, redis::cmd("MODULE").arg("LIST"))?;
            let loaded = modules.iter().any(|m| {
                let pairs: Vec<(&Value, &Value)> = match m {
                    Value::Array(fields) => fields
                        .chunks(2)
                        .filter_map(|kv| Some((kv.first()?, kv.get(1)?)))
                        .collect(),
                    Value::Map(fields) => fields.iter().map(|(k, v)| (k, v)).collect(),
                    _ => Vec::new(),
                };
                pairs.iter().any(|(k, v)| {
                    text(k).as_deref() == Some("name") && text(v).as_deref() == Some(name)
                })
            });
            if !loaded {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// A numeric field of `INFO section`, summed over the masters.
    pub fn info_field(&mut self, section: &str, field: &str) -> Result<u64> {
        let mut total = 0;
        for node in self.masters.clone() {
            let text: String = self.on_node(&node, redis::cmd("INFO").arg(section))?;
            total += text
                .lines()
                .find_map(|l| {
                    l.strip_prefix(field)?
                        .strip_prefix(':')?
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
                .ok_or_else(|| self.error(format!("INFO {section} has no {field}")))?;
        }
        Ok(total)
    }

    /// `MEMORY USAGE key` (0 for a missing key).
    pub fn memory_usage(&mut self, key: &[u8]) -> Result<u64> {
        // SAMPLES 0: every element counted (the default samples 5 of a set's members).
        let bytes: Option<u64> = self.query(
            redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(key)
                .arg("SAMPLES")
                .arg(0),
        )?;
        Ok(bytes.unwrap_or(0))
    }

    /// Reads the masters and their slots (`CLUSTER SLOTS`); one server is its own master.
    fn read_masters(&mut self) -> Result<Vec<Master>> {
        let Endpoint::Cluster(_) = &self.endpoint else {
            let url = self.endpoint.first();
            return Ok(vec![Master {
                host: url.host.clone(),
                port: url.port,
                slots: vec![(0, 16383)],
            }]);
        };
        let slots: Vec<Value> = self.query(redis::cmd("CLUSTER").arg("SLOTS"))?;
        let masters = parse_slots(slots);
        if masters.is_empty() {
            return Err(self.error("CLUSTER SLOTS lists no master"));
        }
        Ok(masters)
    }

    /// Runs `work` on a live connection; a lost server is reconnected and `work` run again until
    /// `retry_for` has passed.
    pub(super) fn with_retry<T>(
        &mut self,
        what: &str,
        mut work: impl FnMut(&mut Inner) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(20);
        let mut attempts = 0u32;
        loop {
            let outcome = match self.inner.as_mut() {
                Some(inner) => work(inner),
                None => self.open().and_then(|mut inner| {
                    let v = work(&mut inner);
                    self.inner = Some(inner);
                    v
                }),
            };
            match outcome {
                Ok(v) => {
                    if attempts > 0 {
                        self.resent += 1;
                    }
                    return Ok(v);
                }
                Err(e) if server_away(&e) && started.elapsed() < self.retry_for => {
                    attempts += 1;
                    self.inner = None;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                Err(e) if server_away(&e) => return Err(self.gone(what, &e, started.elapsed())),
                Err(e) => return Err(self.error(format!("{what}: {e}"))),
            }
        }
    }

    /// The error for a server that stayed away: which nodes do not answer, and their slots.
    pub(super) fn gone(&self, what: &str, e: &RedisError, waited: Duration) -> Error {
        let masters = self.current_masters();
        let down: Vec<&Master> = masters
            .iter()
            .filter(|m| !answers(&m.host, m.port))
            .collect();
        let waited = format!("{:.0} s", waited.as_secs_f64());
        match (&self.endpoint, down.as_slice()) {
            (Endpoint::Cluster(_), []) => self.error(format!(
                "{what}: {e} (retried for {waited}; every master answers a connect)"
            )),
            (Endpoint::Cluster(_), down) => {
                let names = down
                    .iter()
                    .map(|m| format!("{} (slots {})", m.addr(), m.slot_ranges()))
                    .collect::<Vec<_>>()
                    .join(", ");
                Error::Remote {
                    addr: down[0].addr(),
                    message: format!(
                        "{what}: node {names} does not answer (retried for {waited}): {e}"
                    ),
                }
            }
            (Endpoint::Server(_), _) => self.error(format!("{what}: {e} (retried for {waited})")),
        }
    }

    /// The masters as a node that answers sees them now (slots may have moved since connecting; a
    /// master that is down keeps its slots in the map), else as last read.
    fn current_masters(&self) -> Vec<Master> {
        let Endpoint::Cluster(nodes) = &self.endpoint else {
            return self.masters.clone();
        };
        let known = nodes
            .iter()
            .map(|u| (u.host.clone(), u.port))
            .chain(self.masters.iter().map(|m| (m.host.clone(), m.port)));
        for (host, port) in known {
            let Ok(client) = redis::Client::open(format!("redis://{host}:{port}")) else {
                continue;
            };
            let Ok(mut c) = client.get_connection_with_timeout(Duration::from_millis(500)) else {
                continue;
            };
            if let Ok(slots) = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query::<Vec<Value>>(&mut c)
            {
                let masters = parse_slots(slots);
                if !masters.is_empty() {
                    return masters;
                }
            }
        }
        self.masters.clone()
    }

    pub(super) fn open(&self) -> redis::RedisResult<Inner> {
        match &self.endpoint {
            Endpoint::Server(url) => {
                let client = redis::Client::open(url.connection_text())?;
                let c = client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
                c.set_read_timeout(Some(reply_timeout(self.retry_for)))?;
                c.set_write_timeout(Some(reply_timeout(self.retry_for)))?;
                // A server still loading its data answers LOADING; wait here, as for any away server.
                let mut c = c;
                redis::cmd("PING").query::<()>(&mut c)?;
                Ok(Inner::Server(c))
            }
            Endpoint::Cluster(nodes) => {
                let client = ClusterClient::builder(nodes.iter().map(|n| n.connection_text()))
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(reply_timeout(self.retry_for))
                    .retries(8)
                    .build()?;
                Ok(Inner::Cluster(Box::new(client.get_connection()?)))
            }
        }
    }
}

/// Whether `e` says a server is away (and a fresh connection may find it back), not that it refused.
pub(super) fn server_away(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_refusal()
        || e.is_connection_dropped()
        || e.is_timeout()
        || matches!(
            e.kind(),
            ErrorKind::ClusterConnectionNotFound
                | ErrorKind::Server(
                    ServerErrorKind::ClusterDown
                        | ServerErrorKind::TryAgain
                        | ServerErrorKind::BusyLoading
                        | ServerErrorKind::MasterDown
                )
        )
}

/// `WAIT` on every master, through the connections that wrote (the crate sends `WAIT` to all primaries
/// and keeps the smallest count); a master that had fewer replicas take its writes in time is an error
/// the caller retries as a lost server. Masters this round trip did not write to answer at once.
fn wait_replicas(c: &mut ClusterConnection, wait: Option<WaitReplicas>) -> redis::RedisResult<()> {
    let Some(wait) = wait else {
        return Ok(());
    };
    let acked: i64 = c
        .req_command(redis::cmd("WAIT").arg(wait.replicas).arg(wait.timeout_ms))
        .and_then(|v| redis::from_redis_value(v).map_err(Into::into))?;
    if acked < i64::from(wait.replicas) {
        return Err(RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "WAIT: a master had {acked} of {} replicas take its writes within {} ms",
                wait.replicas, wait.timeout_ms
            ),
        )));
    }
    Ok(())
}

/// Whether `e` is a MOVED or ASK redirection (slots moving between masters).
fn redirected(e: &RedisError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Server(ServerErrorKind::Moved | ServerErrorKind::Ask)
    )
}

/// Whether `e` says a server is up but not ready (loading its data, a cluster converging).
fn starting(e: &RedisError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Server(
            ServerErrorKind::ClusterDown | ServerErrorKind::TryAgain | ServerErrorKind::BusyLoading
        )
    )
}

/// The masters of a `CLUSTER SLOTS` reply (each range's first node), their ranges sorted, in slot order.
fn parse_slots(slots: Vec<Value>) -> Vec<Master> {
    let mut masters: Vec<Master> = Vec::new();
    for range in slots {
        let Value::Array(parts) = range else { continue };
        let (Some(Value::Int(a)), Some(Value::Int(b)), Some(Value::Array(node))) =
            (parts.first(), parts.get(1), parts.get(2))
        else {
            continue;
        };
        let host = match node.first() {
            Some(Value::BulkString(h)) => String::from_utf8_lossy(h).into_owned(),
            _ => continue,
        };
        let Some(Value::Int(port)) = node.get(1) else {
            continue;
        };
        let (port, range) = (*port as u16, (*a as u16, *b as u16));
        match masters
            .iter_mut()
            .find(|m| m.host == host && m.port == port)
        {
            Some(m) => m.slots.push(range),
            None => masters.push(Master {
                host,
                port,
                slots: vec![range],
            }),
        }
    }
    for m in &mut masters {
        m.slots.sort_unstable();
    }
    masters.sort_by(|a, b| a.slots.cmp(&b.slots));
    masters
}

/// Whether a TCP connect to `host:port` succeeds now.
fn answers(host: &str, port: u16) -> bool {
    use std::net::ToSocketAddrs;
    let Ok(mut addrs) = (host, port).to_socket_addrs() else {
        return false;
    };
    addrs.any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_millis(500)).is_ok())
}

/// The command's name, for errors.
pub(crate) fn command_name(cmd: &Cmd) -> String {
    cmd.args_iter()
        .next()
        .map(|a| match a {
            redis::Arg::Simple(b) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        })
        .unwrap_or_default()
}

/// A second cluster connection on its own thread: round trips go in through one channel, their replies
/// come out of another, so it runs beside the caller's own round trip.
pub(super) struct Twin {
    commands: std::sync::mpsc::Sender<Vec<Cmd>>,
    /// Each round trip's replies, and how many times it was sent again.
    replies: std::sync::mpsc::Receiver<(Result<Vec<Value>>, u64)>,
    /// The endpoint, for the error of a thread that ended.
    addr: String,
}

impl Twin {
    pub(super) fn start(mut conn: Conn) -> Twin {
        let (commands, work) = std::sync::mpsc::channel::<Vec<Cmd>>();
        let (done, replies) = std::sync::mpsc::channel();
        let addr = conn.endpoint().addr();
        // Ends when the sender is dropped (with the owning `Conn`).
        std::thread::spawn(move || {
            for cmds in work {
                let before = conn.resent;
                let replies = conn.pipeline(cmds);
                if done.send((replies, conn.resent - before)).is_err() {
                    break;
                }
            }
        });
        Twin {
            commands,
            replies,
            addr,
        }
    }

    fn ended(&self) -> Error {
        Error::Remote {
            addr: self.addr.clone(),
            message: "the second connection's thread ended".into(),
        }
    }

    pub(super) fn send(&self, cmds: Vec<Cmd>) -> Result<()> {
        self.commands.send(cmds).map_err(|_| self.ended())
    }

    pub(super) fn receive(&self) -> (Result<Vec<Value>>, u64) {
        self.replies
            .recv()
            .unwrap_or_else(|_| (Err(self.ended()), 0))
    }
}
