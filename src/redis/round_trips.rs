//! Many round trips with the next one on the wire while this one's replies are read ([`Conn::round_trips`]),
//! and their resend after a lost server. On one server this uses the crate's `send_packed_command` and
//! `recv_response`; on a cluster, whose connection only sends and reads together, a second connection on
//! its own thread (`Twin`, in `conn`) runs the round trip beside this one's.
//!
//! Invariant: replies are handed to the caller in round-trip order, and a round trip whose replies were
//! not read is sent again (it is idempotent) before anything after it is read.

use super::conn::{command_name, server_away, Conn, Inner, Twin};
use crate::Result;
use redis::{Cmd, RedisError, Value};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

impl Conn {
    /// `count` round trips of idempotent commands: `encode(i)` gives round trip i's commands and
    /// `read(i, replies)` takes its replies, in order. On one server, with `depth` 2, round trip i + 1 is
    /// encoded and sent before i's replies are read, so the client's encoding and parsing overlap the server's work (one
    /// round trip waits in the socket while the server runs the other); on a cluster each round trip is
    /// one [`Conn::pipeline`]. A lost server is reconnected and every round trip not yet read is sent
    /// again, in order, for [`Conn::retry_for`].
    pub fn round_trips(
        &mut self,
        count: usize,
        depth: usize,
        mut encode: impl FnMut(usize) -> Vec<Cmd>,
        mut read: impl FnMut(usize, Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        if self.endpoint.is_cluster() {
            return self.cluster_round_trips(count, depth, encode, read);
        }
        if self.inner.is_none() {
            // A connection lost by an earlier call: open one (this is no resend).
            self.with_retry("connecting", |_| Ok(()))?;
        }
        // (index, packed commands, command count, name) of each round trip sent and not yet read.
        let mut in_flight: VecDeque<(usize, Vec<u8>, usize, String)> = VecDeque::new();
        let mut next = 0;
        while next < count || !in_flight.is_empty() {
            while next < count && in_flight.len() < depth.max(1) {
                let cmds = encode(next);
                let what = cmds.first().map(command_name).unwrap_or_default();
                let mut packed = Vec::new();
                for cmd in &cmds {
                    cmd.write_packed_command(&mut packed);
                }
                let sent = match self.inner.as_mut() {
                    Some(Inner::Server(c)) => c.send_packed_command(&packed),
                    _ => Err(lost()),
                };
                in_flight.push_back((next, packed, cmds.len(), what));
                next += 1;
                if let Err(e) = sent {
                    self.resend(e, &in_flight)?;
                }
            }
            let Some((i, _, commands, what)) = in_flight.front() else {
                break;
            };
            let (i, commands, what) = (*i, *commands, what.clone());
            let received: redis::RedisResult<Vec<Value>> = match self.inner.as_mut() {
                Some(Inner::Server(c)) => (0..commands)
                    .map(|_| c.recv_response().and_then(|v| v.extract_error()))
                    .collect(),
                _ => Err(lost()),
            };
            match received {
                Ok(replies) => {
                    in_flight.pop_front();
                    if let Err(e) = read(i, replies) {
                        // Round trips still on the wire would be read by the next call.
                        if !in_flight.is_empty() {
                            self.inner = None;
                        }
                        return Err(e);
                    }
                }
                Err(e) if server_away(&e) => self.resend(e, &in_flight)?,
                Err(e) => {
                    // Replies may still wait in the socket: the next call starts on a fresh connection.
                    self.inner = None;
                    return Err(self.error(format!("{what}: {e}")));
                }
            }
        }
        Ok(())
    }

    /// [`Conn::round_trips`] on a cluster: the crate's cluster connection has no way to send without
    /// reading, so with `depth` 2 round trips i and i + 1 run at once, on this connection and on a second
    /// one on its own thread ([`Twin`]); their replies are read in order.
    fn cluster_round_trips(
        &mut self,
        count: usize,
        depth: usize,
        mut encode: impl FnMut(usize) -> Vec<Cmd>,
        mut read: impl FnMut(usize, Vec<Value>) -> Result<()>,
    ) -> Result<()> {
        if depth < 2 || count < 2 {
            for i in 0..count {
                let replies = self.pipeline(encode(i))?;
                read(i, replies)?;
            }
            return Ok(());
        }
        if self.twin.is_none() {
            let mut twin = Conn::connect_retrying(&self.endpoint, self.retry_for)?;
            twin.wait_for_replicas(self.wait);
            self.twin = Some(Twin::start(twin));
        }
        let mut outcome = Ok(());
        for i in (0..count).step_by(2) {
            let first = encode(i);
            let second = (i + 1 < count).then(|| encode(i + 1));
            let beside = match (second, self.twin.as_ref()) {
                (Some(cmds), Some(twin)) => Some(twin.send(cmds)),
                _ => None,
            };
            let first = self.pipeline(first);
            let second = match (beside, self.twin.as_ref()) {
                (Some(Ok(())), Some(twin)) => {
                    let (replies, resent) = twin.receive();
                    self.resent += resent;
                    Some(replies)
                }
                (Some(Err(e)), _) => Some(Err(e)),
                _ => None,
            };
            outcome = first
                .and_then(|replies| read(i, replies))
                .and_then(|()| match second {
                    None => Ok(()),
                    Some(replies) => replies.and_then(|r| read(i + 1, r)),
                });
            if outcome.is_err() {
                // The twin's connection may be in any state: the next call starts a fresh one.
                self.twin = None;
                break;
            }
        }
        outcome
    }

    /// After `e` lost the server: reconnects and sends every round trip not yet read again, in order,
    /// until one attempt goes through or [`Conn::retry_for`] has passed.
    fn resend(
        &mut self,
        e: RedisError,
        in_flight: &VecDeque<(usize, Vec<u8>, usize, String)>,
    ) -> Result<()> {
        let what = in_flight.front().map(|f| f.3.clone()).unwrap_or_default();
        if !server_away(&e) {
            return Err(self.error(format!("{what}: {e}")));
        }
        let started = Instant::now();
        let mut pause = Duration::from_millis(20);
        let mut last = e;
        loop {
            self.inner = None;
            if started.elapsed() >= self.retry_for {
                return Err(self.gone(&what, &last, started.elapsed()));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
            let sent = self.open().and_then(|mut inner| {
                if let Inner::Server(c) = &mut inner {
                    for (_, packed, _, _) in in_flight {
                        c.send_packed_command(packed)?;
                    }
                }
                self.inner = Some(inner);
                Ok(())
            });
            match sent {
                Ok(()) => {
                    self.resent += 1;
                    return Ok(());
                }
                Err(e) if server_away(&e) => last = e,
                Err(e) => return Err(self.error(format!("{what}: {e}"))),
            }
        }
    }
}

/// The error of a round trip whose connection is gone.
fn lost() -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        "the connection was lost",
    ))
}
