//! `dedupbench size`: m, k, bits per key and the theoretical rate of the Bloom filter for (n, p), and the
//! predicted bytes of every registered structure at that n.

use anyhow::Result;
use clap::Args;
use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::kind::{BuildConfig, KeyLengths};
use dedupbench::registry::REGISTRY;
use dedupbench::structures::bloom;
use dedupbench::units::{count_arg, fpr_arg, human_bytes, human_count};

#[derive(Args, Debug)]
pub struct SizeArgs {
    /// Expected distinct keys (e.g. 50M, 6e9, 1_000_000).
    #[arg(long, value_parser = count_arg)]
    n: u64,
    /// Target false-positive rate, in (0, 1): 0.01, 1e-3 or a percentage (0.1%).
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Key profile for the exact set's model (built-in name or file).
    #[arg(long, default_value = dedupbench::keys::profile::DEFAULT_PROFILE)]
    profile: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Key lengths sampled from the first 20,000 members of a profile.
pub fn sample_key_lengths(profile: &Profile, seed: u64) -> KeyLengths {
    let generator = UrlGenerator::new(profile.clone(), seed);
    let mut buf = Vec::new();
    KeyLengths::from_lengths((0..20_000).map(|i| {
        generator.member(i, &mut buf);
        buf.len()
    }))
}

pub fn run(args: SizeArgs) -> Result<i32> {
    if args.n == 0 || args.n >= dedupbench::keys::NON_MEMBER_BASE {
        anyhow::bail!(dedupbench::Error::invalid(
            "--n",
            format!("must be in [1, 2^47), got {}", args.n)
        ));
    }
    let profile = Profile::load(&args.profile)?;
    let mut config = BuildConfig::new(args.n, args.fpr, 0);
    config.key_lengths = sample_key_lengths(&profile, 0);
    let sizing = bloom::sizing(&config);
    let bits_per_key = sizing.bits as f64 / args.n as f64;
    let structures: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|kind| {
            let memory = kind.predicted_memory(&config);
            let geometry = kind.planned_geometry(&config);
            serde_json::json!({
                "id": kind.id(),
                "summary": kind.summary(),
                // Whole bytes (a model's bytes may have a fraction).
                "heap_bytes": memory.heap_bytes.round() as u64,
                "footprint_bytes": memory.footprint_bytes.round() as u64,
                "bits_per_key": memory.footprint_bytes * 8.0 / args.n as f64,
                "expected_fpr": kind.predicted_fpr(&config),
                "bits": geometry.bits,
                "hashes": geometry.hashes,
                "on_redis_server": kind.remote(),
                "external_language": kind.external().map(|e| e.language.name()),
                "unavailable": kind.external().and_then(|e| e.unavailable),
            })
        })
        .collect();
    if args.json {
        let value = serde_json::json!({
            "n": args.n,
            "fpr": args.fpr,
            "profile": profile.name,
            "mean_key_bytes": config.key_lengths.mean_bytes,
            "bloom": { // not a registry id: the Bloom formula's sizing
                "bits": sizing.bits,
                "hashes": sizing.hashes,
                "bytes": sizing.bytes(),
                "bits_per_key": bits_per_key,
                "expected_fpr": sizing.fpr(args.n),
            },
            "structures": structures,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(0);
    }
    println!(
        "Bloom filter for n = {} at p = {}:",
        human_count(args.n as f64),
        args.fpr
    );
    println!(
        "  m = {} bits = {} bytes ({}; {:.1} MB)",
        sizing.bits,
        sizing.bytes(),
        human_bytes(sizing.bytes() as f64),
        sizing.bytes() as f64 / 1e6
    );
    println!(
        "  k = {} hashes, {:.3} bits per key",
        sizing.hashes, bits_per_key
    );
    println!(
        "  theoretical false-positive rate at n: {:.6}",
        sizing.fpr(args.n)
    );
    println!();
    println!(
        "Predicted memory at n = {} (profile {}, mean key {:.1} bytes):",
        human_count(args.n as f64),
        profile.name,
        config.key_lengths.mean_bytes
    );
    print_table(&structures);
    Ok(0)
}

/// The predicted memory of every structure, each column as wide as its widest cell (ids such as
/// `redis-bloom-scaling` are longer than most); an unavailable one says why in place of its figures.
fn print_table(structures: &[serde_json::Value]) {
    let header = ["structure", "bytes", "bits/key", "expected fpr"].map(String::from);
    let rows: Vec<Vec<String>> = std::iter::once(header.to_vec())
        .chain(structures.iter().map(|s| {
            let id = s["id"].as_str().unwrap_or("").to_string();
            match s["unavailable"].as_str() {
                Some(why) => vec![id, why.to_string()],
                None => vec![
                    id,
                    human_bytes(s["footprint_bytes"].as_f64().unwrap_or(0.0)),
                    format!("{:.2}", s["bits_per_key"].as_f64().unwrap_or(0.0)),
                    format!("{:.3e}", s["expected_fpr"].as_f64().unwrap_or(0.0)),
                ],
            }
        }))
        .collect();
    for line in super::table::aligned(&rows, &[1, 2, 3], "  ") {
        println!("{line}");
    }
}
