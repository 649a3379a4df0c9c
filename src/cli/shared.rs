//! `dedupbench shared`: one worker's view of a filter shared through Redis (one server or a cluster). Several processes started with
//! the same `--name`, `--expected`, `--fpr` and `--seed` use one filter; `redis-bitmap` stores its
//! parameters on the server and refuses a worker whose parameters differ. Prints one JSON line.

use super::redis_target::RedisTarget;
use super::RunFailed;
use anyhow::{bail, Result};
use clap::Args;
use dedupbench::hash::HashFn;
use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::kind::BuildConfig;
use dedupbench::kind::Role;
use dedupbench::redis::BitmapMode;
use dedupbench::registry::role_id;
use dedupbench::registry::{find, remote_kinds};
use dedupbench::remote::worker::{self, WorkerOp};
use dedupbench::units::{count_arg, count_arg_as, expected_arg, fpr_arg, hash_arg};
use dedupbench::Error;

#[derive(Args, Debug)]
pub struct SharedArgs {
    #[command(flatten)]
    target: RedisTarget,
    /// Backend: redis-bitmap, redis-bloom, redis-bloom-scaling, redis-set or redis-set-fp.
    #[arg(long, default_value = role_id(Role::SharedBitmap))]
    structure: String,
    /// The Redis key (prefix) of the shared filter.
    #[arg(long)]
    name: String,
    /// Keys the filter is sized for (every worker must give the same).
    #[arg(long, value_parser = expected_arg)]
    expected: u64,
    /// Target false-positive rate: 0.01, 1e-3 or a percentage (0.1%).
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Seed of the keys and of the hash.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Hash function (every worker must give the same; a filter created before xxh3-64 became the default hashes with xxh3-128).
    #[arg(long, default_value = HashFn::DEFAULT.id(), value_parser = hash_arg)]
    hash: HashFn,
    /// How redis-bitmap moves bits: bitfield, setbit or script.
    #[arg(long, default_value = "bitfield")]
    mode: String,
    /// Keys per round trip.
    #[arg(long, default_value_t = 1024, value_parser = count_arg_as::<usize>)]
    batch: usize,
    /// The largest Redis string of redis-bitmap, in bits (at most 2^32).
    #[arg(long, value_parser = count_arg)]
    bits_per_string: Option<u64>,
    /// Insert generated members A..B (indices, end excluded).
    #[arg(long, value_parser = range_arg, group = "op")]
    insert: Option<(u64, u64)>,
    /// Count how many of members A..B the filter finds.
    #[arg(long, value_parser = range_arg, group = "op")]
    check: Option<(u64, u64)>,
    /// Count how many of non-members A..B the filter reports present.
    #[arg(long, value_parser = range_arg, group = "op")]
    non_members: Option<(u64, u64)>,
    /// Delete the shared filter (its bits and its parameters).
    #[arg(long, group = "op")]
    delete: bool,
}

fn range_arg(text: &str) -> std::result::Result<(u64, u64), String> {
    let (a, b) = text
        .split_once("..")
        .ok_or_else(|| format!("'{text}' is not a range A..B (e.g. 0..50000)"))?;
    let (a, b) = (count_arg_or_zero(a)?, count_arg(b)?);
    if a >= b || b >= dedupbench::keys::NON_MEMBER_BASE {
        return Err(format!("'{text}' must have A < B < 2^47"));
    }
    Ok((a, b))
}

fn count_arg_or_zero(text: &str) -> std::result::Result<u64, String> {
    if text.trim() == "0" {
        Ok(0)
    } else {
        count_arg(text)
    }
}

pub fn run(args: SharedArgs) -> Result<i32> {
    let kind = find(&args.structure)?;
    if !kind.remote() {
        bail!(Error::invalid(
            "--structure",
            format!(
                "{} is in-process; shared filters are {}",
                kind.id(),
                remote_kinds()
                    .map(|k| k.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    if args.batch == 0 || args.batch > 100_000 {
        bail!(Error::invalid(
            "--batch",
            "must be between 1 and 100000 keys"
        ));
    }
    // `None`: delete the filter.
    let (op, (from, to)) = match (args.insert, args.check, args.non_members, args.delete) {
        (Some(r), None, None, false) => (Some(WorkerOp::Insert), r),
        (None, Some(r), None, false) => (Some(WorkerOp::Check), r),
        (None, None, Some(r), false) => (Some(WorkerOp::NonMembers), r),
        (None, None, None, true) => (None, (0, 0)),
        _ => bail!(Error::invalid(
            "operation",
            "give exactly one of --insert, --check, --non-members, --delete"
        )),
    };
    let Some(mut remote) = args.target.remote(&args.name)? else {
        bail!(Error::invalid(
            "--redis",
            "a shared filter needs --redis redis://host:port or --redis-cluster URLS"
        ));
    };
    // Only inserting workers may create the filter; the others need it to exist. Deleting opens it as
    // its owner, which removes its keys when dropped.
    remote.join_existing = op.is_some();
    remote.create = op == Some(WorkerOp::Insert);
    remote.batch_keys = args.batch;
    remote.bitmap.mode = BitmapMode::parse(&args.mode)?;
    if let Some(bits) = args.bits_per_string {
        if !(64..=1u64 << 32).contains(&bits) {
            bail!(Error::invalid(
                "--bits-per-string",
                "must be between 64 and 2^32"
            ));
        }
        remote.bitmap.bits_per_string = bits;
    }
    let mut config = BuildConfig::new(args.expected, args.fpr, args.seed);
    config.hash = args.hash;
    config.remote = Some(remote);
    let mut filter = kind.build(&config)?;
    let Some(op) = op else {
        drop(filter);
        println!(
            "{}",
            serde_json::json!({"op": "delete", "structure": kind.id(), "name": args.name})
        );
        return Ok(0);
    };
    let generator = UrlGenerator::new(
        Profile::load(dedupbench::keys::profile::DEFAULT_PROFILE)?,
        args.seed,
    );
    let answered = worker::apply(filter.as_mut(), op, &generator, from..to)?;
    let geometry = filter.geometry();
    let expected_fpr = filter.expected_fpr(args.expected);
    // Every worker's keys as the server counts them: past the plan, the rate is above --fpr (or, for a
    // growing filter, lookups ask more sub-filters).
    let keys_held = filter.keys_held_by_all();
    if let Some(held) = keys_held.filter(|&h| h > args.expected) {
        eprintln!(
            "shared: warning: {} '{}' holds {held} keys (every worker's, as its server counts them), past the {} it was planned for (--expected): {}",
            kind.id(),
            args.name,
            args.expected,
            dedupbench::dedup::past_plan_means(kind, args.fpr)
        );
    }
    if let Some(failure) = filter.failure() {
        return Err(RunFailed(format!(
            "{} of {from}..{to} did not complete: {failure}",
            op.name()
        ))
        .into());
    }
    let line = serde_json::json!({
        "op": op.name(),
        "structure": kind.id(),
        "name": args.name,
        "keys": to - from,
        "planned_keys": args.expected,
        "keys_held": keys_held,
        "answered": answered,
        "bits": geometry.bits,
        "shard_loads": filter.shard_loads(),
        "hashes": geometry.hashes,
        "expected_fpr": expected_fpr,
    });
    println!("{line}");
    Ok(0)
}
