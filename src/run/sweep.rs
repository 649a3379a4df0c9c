//! The shared-filter sweep (`bench --redis URL`): every Redis backend at every batch size, on the same keys
//! as an in-process `bloom`, measuring keys/s (insert, member and non-member lookups), the server's bytes
//! per key (`MEMORY USAGE`, and the change of `used_memory`), and the observed rate against theory.
//!
//! `redis-bloom` is also driven by a raw pipeline: the same `BF.MADD` commands, encoded before the clock
//! starts, written to a bare socket, with replies skimmed line by line, which is what the module sustains
//! at that batch size without any client cost. If the server goes away, the point in progress is recorded
//! as failed with the server's address and what happened; completed points stay in the results.

use super::resume::{Completed, WorkId};
use super::{PassKeys, Runner, BATCH_KEYS};
use crate::kind::Role;
use crate::kind::{BuildConfig, Kind};
use crate::membership::CallPath;
use crate::membership::Membership;
use crate::redis::raw::Client;
use crate::redis::{BitmapMode, Conn, Endpoint, RemoteConfig};
use crate::registry::role_id;
use crate::remote::redis_bloom;
use crate::results::{sweep_cell_id, Record, SkipSubject, SkippedCell, SweepRecord, SweepSeries};
use crate::stats::wilson;
use crate::{Error, Result};
use std::time::{Duration, Instant};

/// Turns a backend's latched failure into an error naming the server and the phase.
fn check(s: &dyn Membership, endpoint: &Endpoint, phase: &str) -> Result<()> {
    match s.failure() {
        None => Ok(()),
        Some(f) => {
            let addr = endpoint.addr();
            let detail = f
                .strip_prefix(&format!("redis at {addr}: "))
                .unwrap_or(&f)
                .to_string();
            Err(Error::Remote {
                addr,
                message: format!("{phase}: {detail}"),
            })
        }
    }
}

impl Runner<'_> {
    /// Runs the sweep of [`crate::run::RunPlan::sweep`] (nothing when no server was given), skipping the
    /// points `done` holds (resume).
    pub fn run_sweep(&mut self, done: &Completed) -> Result<()> {
        let Some(plan) = self.plan.sweep.clone() else {
            return Ok(());
        };
        let n = plan.keys;
        // The server runs on this machine: a key-making thread would take its core (and our client's
        // numbers would then trail the raw baseline, which makes its keys untimed on one thread too).
        self.generate_alongside = false;
        let is_done = |point: &str| {
            done.has(&WorkId::SweepPoint {
                point: point.to_string(),
                n,
            })
        };
        for role in [Role::ReferenceBloom, Role::GrowingFilter] {
            let series = SweepSeries::in_process(role_id(role));
            if !is_done(&sweep_cell_id(&series, 0)) {
                let config = self.config(self.source.distinct_members(n));
                self.sweep_point(&series, crate::registry::role(role), &config, None)?;
            }
        }
        for endpoint in &plan.endpoints {
            self.sweep_endpoint(&plan, endpoint, &is_done)?;
        }
        Ok(())
    }

    /// Every backend at every batch size on one endpoint.
    fn sweep_endpoint(
        &mut self,
        plan: &super::plan::SweepPlan,
        endpoint: &Endpoint,
        is_done: &dyn Fn(&str) -> bool,
    ) -> Result<()> {
        let n = plan.keys;
        // A server lost before the sweep's first point fails every point, with the reason; the grid's
        // results and the report stay.
        let (has_module, lost) = match Conn::connect_retrying(endpoint, plan.retry_for)
            .and_then(|mut c| c.has_module(redis_bloom::MODULE))
        {
            Ok(m) => (m, None),
            Err(e) => (true, Some(e.to_string())),
        };
        for kind in &plan.kinds {
            // On a cluster the bitmap runs in its atomic mode only: the other two are measured on one
            // server, and the cluster adds routing, not a new way to move bits.
            let has_modes = kind.server().is_some_and(|s| s.has_write_modes);
            let modes: &[BitmapMode] = match (has_modes, endpoint) {
                (true, Endpoint::Server(_)) => &BitmapMode::ALL,
                _ => &[BitmapMode::Bitfield],
            };
            for mode in modes {
                let series = SweepSeries::remote(
                    kind.id(),
                    has_modes.then_some(*mode),
                    endpoint.is_cluster(),
                );
                for &batch in &plan.batches {
                    let id = SkipSubject::SweepPoint {
                        series: series.clone(),
                        batch_keys: batch as u64,
                    };
                    if is_done(&id.to_string()) {
                        continue;
                    }
                    if let Some(e) = &lost {
                        self.point_failed(id, n, e)?;
                        continue;
                    }
                    if kind.server().is_some_and(|s| s.module.is_some()) && !has_module {
                        let reason = format!(
                            "the server at {} has no RedisBloom module (MODULE LIST shows no 'bf')",
                            endpoint.addr()
                        );
                        self.point_skipped(id, n, reason)?;
                        continue;
                    }
                    let mut config = self.config(self.source.distinct_members(n));
                    let mut remote =
                        RemoteConfig::new(endpoint.clone(), format!("dedupbench:sweep:{series}"));
                    remote.batch_keys = batch;
                    remote.retry_for = plan.retry_for;
                    remote.bitmap.mode = *mode;
                    config.remote = Some(remote);
                    match self.sweep_point(&series, *kind, &config, Some(batch)) {
                        Ok(()) => {}
                        Err(e) if self.stopped() => return Err(e),
                        Err(e @ Error::Remote { .. }) => {
                            self.point_failed(id, n, &e.to_string())?
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(())
    }

    /// Records a point that was not measured, with the reason.
    fn point_skipped(&mut self, id: SkipSubject, n: u64, reason: String) -> Result<()> {
        self.record(Record::SweepSkipped(SkippedCell {
            subject: id,
            n,
            projected_bytes: 0.0,
            budget_bytes: 0,
            reason,
            cause: crate::results::SkipCause::Server,
        }))
    }

    /// Records a point whose server failed; the run then exits 1.
    fn point_failed(&mut self, id: SkipSubject, n: u64, error: &str) -> Result<()> {
        self.failures.push(format!("{id}: {error}"));
        self.point_skipped(id, n, format!("failed, nothing measured is kept: {error}"))
    }

    /// Measures one point: build with n members, query every member, query non-members, read the bytes.
    fn sweep_point(
        &mut self,
        series: &SweepSeries,
        kind: &dyn Kind,
        config: &BuildConfig,
        batch: Option<usize>,
    ) -> Result<()> {
        let started = Instant::now();
        // Keys inserted (a URL file's lines may repeat: the structures are sized for the distinct ones).
        let n = self
            .plan
            .sweep
            .as_ref()
            .map(|p| p.keys)
            .unwrap_or(config.expected_keys);
        let remote = config.remote.clone();
        let url = remote.as_ref().map(|r| r.endpoint.clone());
        // One connection of our own for the server's used_memory before and after, and its masters.
        let mut server = match &remote {
            Some(r) => Some(Conn::connect_retrying(&r.endpoint, r.retry_for)?),
            None => None,
        };
        let used_memory = |server: &mut Option<Conn>| -> Result<i64> {
            match server {
                Some(c) => Ok(c.info_field("memory", "used_memory")? as i64),
                None => Ok(0),
            }
        };
        let used_before = used_memory(&mut server)?;
        let label = sweep_cell_id(series, batch.unwrap_or(0) as u64);
        let mut s = kind.build(config)?;
        let phase_check = |s: &dyn Membership, phase: &str| match &url {
            Some(u) => check(s, u, phase),
            None => Ok(()),
        };
        let build = self.pass(
            &label,
            "insert",
            Some(s.as_mut()),
            None,
            PassKeys::Members(n),
            CallPath::Batched,
        )?;
        phase_check(s.as_ref(), "inserting")?;
        let members = self.pass(
            &label,
            "query members",
            None,
            Some(s.as_ref()),
            PassKeys::Members(n),
            CallPath::Batched,
        )?;
        phase_check(s.as_ref(), "querying members")?;
        // Enough for the sweep's count of false positives, not clamped to the point's n: a small sweep's
        // rates must still tell a rate 20% off.
        let queries = self.plan.queries_for(
            crate::run::RunPlan::SWEEP_FALSE_POSITIVES,
            kind.predicted_fpr(config),
        );
        let deadline =
            Some(Instant::now() + Duration::from_secs_f64(self.plan.query_time_cap_s.max(10.0)));
        let non_members = self.pass(
            &label,
            "query non-members",
            None,
            Some(s.as_ref()),
            // The sweep's points insert their own members (--redis-keys), which a non-member file was
            // not checked against: generated non-members, disjoint by construction.
            PassKeys::GeneratedNonMembers {
                count: queries,
                deadline,
            },
            CallPath::Batched,
        )?;
        phase_check(s.as_ref(), "querying non-members")?;
        let server_bytes = s.bytes_held();
        let n_distinct = self.source.distinct_members(n);
        let expected_fpr = s.expected_fpr(n_distinct);
        let fill_fpr = s.fill_fpr();
        let geometry = s.geometry();
        let shard_loads = s.shard_loads().unwrap_or_default();
        let resent_round_trips = s.resent_round_trips();
        phase_check(s.as_ref(), "reading its size")?;
        let used_after = used_memory(&mut server)?;
        drop(s);
        let raw_insert_keys_per_s = match (&remote, kind.id()) {
            (Some(r), id) if id == role_id(Role::SharedBloom) && !r.endpoint.is_cluster() => {
                Some(self.raw_bloom_inserts(r, config)?)
            }
            _ => None,
        };
        // Our hash is part of a point's cost only where the client needs it (on a cluster it picks the
        // shard of every key).
        let client_hash = !kind.server().is_some_and(|s| s.hashes_keys)
            || url.as_ref().is_some_and(Endpoint::is_cluster);
        let per_s = |t: &super::PassTiming| {
            let ns = t.probe_ns + if client_hash { t.hash_ns } else { 0 };
            t.keys as f64 / (ns.max(1) as f64 / 1e9)
        };
        let interval = wilson(non_members.hits, non_members.keys, 0.95);
        let false_negatives = members.keys - members.hits;
        if false_negatives > 0 {
            self.failures
                .push(format!("{label}: {false_negatives} false negatives"));
        }
        self.record(Record::Sweep(SweepRecord {
            series: series.clone(),
            structure: kind.id().to_string(),
            batch_keys: batch.unwrap_or(0) as u64,
            server: url.as_ref().map(|u| u.addr()).unwrap_or_default(),
            masters: server.as_ref().map_or(0, |c| c.masters().len() as u32),
            shard_loads,
            resent_round_trips,
            n,
            n_reported_new: build.hits,
            geometry,
            insert_keys_per_s: per_s(&build),
            member_query_keys_per_s: per_s(&members),
            non_member_query_keys_per_s: per_s(&non_members),
            raw_insert_keys_per_s,
            server_bytes,
            used_memory_delta_bytes: if url.is_some() {
                used_after - used_before
            } else {
                server_bytes as i64
            },
            bytes_per_key: server_bytes as f64 / n_distinct.max(1) as f64,
            n_member_queries: members.keys,
            false_negatives,
            n_non_member_queries: non_members.keys,
            n_false_positives: non_members.hits,
            observed_fpr: non_members.hits as f64 / non_members.keys.max(1) as f64,
            observed_fpr_wilson95: interval,
            expected_fpr,
            theory_in_interval: interval.contains(expected_fpr),
            fill_fpr,
            wall_s: started.elapsed().as_secs_f64(),
        }))
    }

    /// Inserts the same members into a fresh `BF.RESERVE … NONSCALING` filter through a bare socket, with
    /// the same round trips as the client (one `BF.MADD` of `batch_keys` keys each, two on the wire at
    /// once, drained at the end of each key batch): every command is encoded before the clock starts and
    /// replies are skimmed (checked for errors, never parsed into
    /// values). What is left is the module's own cost plus the network. Returns keys per second.
    fn raw_bloom_inserts(&mut self, remote: &RemoteConfig, config: &BuildConfig) -> Result<f64> {
        let n = self
            .plan
            .sweep
            .as_ref()
            .map(|p| p.keys)
            .unwrap_or(config.expected_keys);
        let key = format!("{}:raw", remote.key);
        // Set-up and clean-up go through the client (which waits out a loading server); only the timed
        // commands take the bare socket. DEL and BF.RESERVE travel together: resent whole, they are
        // idempotent.
        let mut setup = Conn::connect_retrying(&remote.endpoint, remote.retry_for)?;
        let mut reserve = redis::cmd("BF.RESERVE");
        reserve
            .arg(&key)
            .arg(config.fpr.to_string())
            .arg(config.expected_keys.max(1))
            .arg("NONSCALING");
        setup.pipeline(vec![redis::cmd("DEL").arg(&key).clone(), reserve])?;
        let mut client = Client::connect(remote.endpoint.first())?;
        let per = remote.batch_keys.max(1);
        let mut timed_ns = 0u64;
        let mut commands: Vec<(Vec<u8>, usize)> = Vec::new();
        // The raw pipeline hashes nothing: the server does.
        let mut members = self.source.members(n)?.with_batch_keys(BATCH_KEYS);
        self.progress.start(
            &format!(
                "{} raw pipeline",
                sweep_cell_id(&crate::analysis::sweep::shared_bloom(), per as u64)
            ),
            n,
        );
        loop {
            if self.stopped() {
                return Err(super::interrupted_error());
            }
            let added = members.make(&mut self.batch)?;
            if added == 0 {
                break;
            }
            commands.clear();
            let mut start = 0;
            while start < self.batch.len() {
                let stop = (start + per).min(self.batch.len());
                let mut madd = redis::cmd("BF.MADD");
                madd.arg(&key);
                for j in start..stop {
                    madd.arg(self.batch.key(j));
                }
                commands.push((madd.get_packed_command(), stop - start));
                start = stop;
            }
            // Two round trips on the wire, as the client keeps them: command i + 1 is sent before i's
            // reply is read, so the server never waits for the client.
            let t0 = Instant::now();
            for (i, (bytes, _)) in commands.iter().enumerate() {
                client.send(bytes)?;
                if i > 0 {
                    client.skim("BF.MADD")?;
                }
            }
            if !commands.is_empty() {
                client.skim("BF.MADD")?;
            }
            timed_ns += t0.elapsed().as_nanos() as u64;
            self.progress.advance(added as u64);
        }
        self.progress.finish();
        drop(client);
        setup.query::<()>(redis::cmd("DEL").arg(&key))?;
        Ok(n as f64 / (timed_ns.max(1) as f64 / 1e9))
    }
}
