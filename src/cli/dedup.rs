//! `dedupbench dedup`: passes through only the lines not seen before, by the chosen structure, with
//! bounded memory; the filter can be loaded from and saved to a file so a crawler keeps it across restarts.

use anyhow::{bail, Context, Result};
use clap::Args;
use dedupbench::keys::file::UrlFile;
use dedupbench::keys::KeyBatch;
use dedupbench::registry::{self, find};
use dedupbench::structures::{BuildConfig, Membership};
use dedupbench::units::{count_arg, fpr_arg, human_bytes};
use dedupbench::Error;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DedupArgs {
    /// Structure id (with --load: must match the file's, or be left out).
    #[arg(long)]
    structure: Option<String>,
    /// Distinct keys to size the structure for.
    #[arg(long, value_parser = count_arg)]
    expected: Option<u64>,
    /// Target false-positive rate.
    #[arg(long, default_value = "0.01", value_parser = fpr_arg)]
    fpr: f64,
    /// Hash seed (default: random, so an adversary cannot precompute colliding URLs).
    #[arg(long)]
    seed: Option<u64>,
    /// Start from a saved filter.
    #[arg(long)]
    load: Option<PathBuf>,
    /// Save the filter when the input ends (atomically).
    #[arg(long)]
    save: Option<PathBuf>,
}

pub fn run(args: DedupArgs) -> Result<i32> {
    if let Some(save) = &args.save {
        let parent = save
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            bail!(Error::invalid(
                "--save",
                format!("{} is not a directory", parent.display())
            ));
        }
        if save.is_dir() {
            bail!(Error::invalid(
                "--save",
                format!("{} is a directory, expected a file path", save.display())
            ));
        }
    }
    let mut structure: Box<dyn Membership> = match &args.load {
        Some(path) => {
            let loaded =
                registry::load(path).with_context(|| format!("--load {}", path.display()))?;
            if let Some(id) = &args.structure {
                if id != loaded.id() {
                    bail!(Error::invalid(
                        "--structure",
                        format!(
                            "'{id}' does not match the loaded filter's '{}'",
                            loaded.id()
                        )
                    ));
                }
            }
            loaded
        }
        None => {
            let id = args.structure.as_deref().unwrap_or("bloom");
            let kind = find(id)?;
            if !kind.dynamic() {
                bail!(Error::invalid(
                    "--structure",
                    format!("'{id}' is a static filter (built once from all keys); dedup needs one that takes keys as they come")
                ));
            }
            let expected = args
                .expected
                .ok_or_else(|| Error::invalid("--expected", "is required without --load"))?;
            if expected == 0 || expected >= dedupbench::keys::NON_MEMBER_BASE {
                bail!(Error::invalid(
                    "--expected",
                    format!("must be in [1, 2^47), got {expected}")
                ));
            }
            let config =
                BuildConfig::new(expected, args.fpr, args.seed.unwrap_or_else(rand::random));
            let predicted = kind.predicted_memory(&config).footprint_bytes;
            let available = dedupbench::measure::machine::available_memory_bytes() as f64;
            if predicted > available {
                bail!(Error::invalid(
                    "--expected",
                    format!(
                        "{id} for {expected} keys needs ≈ {}; only {} is available",
                        human_bytes(predicted),
                        human_bytes(available)
                    )
                ));
            }
            kind.build(&config)?
        }
    };
    if args.save.is_some() && !registry::savable_ids().contains(&structure.id()) {
        bail!(Error::invalid(
            "--save",
            format!(
                "'{}' cannot be saved; savable: {}",
                structure.id(),
                registry::savable_ids().join(", ")
            )
        ));
    }
    let stdin = std::io::stdin();
    let mut input = UrlFile::from_reader(
        "<stdin>",
        Box::new(std::io::BufReader::with_capacity(1 << 16, stdin)),
    );
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut batch = KeyBatch::with_capacity(4096, 96);
    let (mut read, mut passed) = (0u64, 0u64);
    // Every line that was passed through is in the filter, so the filter is saved whatever stops the
    // stream: the end of the input, a closed output pipe, or a bad line (then the error follows the save).
    let outcome = (|| -> Result<()> {
        loop {
            batch.clear();
            if input.read_batch(&mut batch, 4096)? == 0 {
                return Ok(());
            }
            batch.hash_all(structure.seed());
            for (key, hash) in batch.iter() {
                read += 1;
                if structure.insert_hashed(key, hash) {
                    passed += 1;
                    out.write_all(key)?;
                    out.write_all(b"\n")?;
                }
            }
        }
    })();
    let flushed = out.flush();
    if let Some(path) = &args.save {
        registry::save(structure.as_ref(), path)
            .with_context(|| format!("--save {}", path.display()))?;
    }
    let broken_pipe = |e: &anyhow::Error| {
        e.chain().any(|c| {
            c.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        })
    };
    if let Err(e) = outcome {
        if !broken_pipe(&e) {
            return Err(e);
        }
    }
    if let Err(e) = flushed {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e.into());
        }
    }
    let g = structure.geometry();
    eprintln!(
        "dedup: {read} lines read, {passed} passed, {} dropped as seen ({}{}; {} inserted in all, expected rate now {:.3e})",
        read - passed,
        structure.id(),
        match (g.bits, g.hashes) {
            (Some(m), Some(k)) => format!(", m = {m}, k = {k}"),
            _ => String::new(),
        },
        structure.n_inserted(),
        structure.expected_fpr(structure.n_inserted())
    );
    Ok(0)
}
