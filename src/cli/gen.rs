//! `dedupbench gen`: generated keys (URLs, or the e-mail or IP addresses of a profile of that shape), one
//! per line, to stdout or a file (written atomically), or their length statistics.

use anyhow::{Context, Result};
use clap::Args;
use dedupbench::atomic_file::AtomicFile;
use dedupbench::keys::lines::{LineOrder, UrlLines};
use dedupbench::keys::{Profile, UrlGenerator};
use dedupbench::units::count_arg;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Number of keys (lines) to write.
    #[arg(long, value_parser = count_arg)]
    n: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Profile: a built-in name (crawl-frontier, short-keys, email, ipv4, ipv6) or a profile file
    /// (datasets/README.md).
    #[arg(long, default_value = dedupbench::keys::profile::DEFAULT_PROFILE)]
    profile: String,
    /// Write non-members (keys no member index produces) instead of members.
    #[arg(long)]
    non_members: bool,
    /// Fraction of lines that repeat an earlier member, in [0, 1).
    #[arg(long, default_value_t = 0.0)]
    duplicates: f64,
    /// Output file (default: stdout). Written to a temporary file and renamed when complete.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the length distribution instead of the keys.
    #[arg(long)]
    stats: bool,
}

pub fn run(args: GenArgs) -> Result<i32> {
    if !(0.0..1.0).contains(&args.duplicates) {
        anyhow::bail!(dedupbench::Error::invalid(
            "--duplicates",
            format!("{} is not a fraction in [0, 1)", args.duplicates)
        ));
    }
    if args.non_members && args.duplicates > 0.0 {
        anyhow::bail!(dedupbench::Error::invalid(
            "--duplicates",
            "applies to members only; drop --non-members"
        ));
    }
    let generator = UrlGenerator::new(Profile::load(&args.profile)?, args.seed);
    let limit = generator.member_limit();
    if args.n >= limit {
        anyhow::bail!(dedupbench::Error::invalid(
            "--n",
            format!(
                "{} exceeds the index space of the profile's {} keys (at most {})",
                args.n,
                generator.profile().shape,
                limit - 1
            )
        ));
    }
    let order = if args.non_members {
        LineOrder::NonMembers
    } else if args.duplicates > 0.0 {
        LineOrder::WithRepeats {
            fraction: args.duplicates,
        }
    } else {
        LineOrder::Members
    };
    let mut lines = UrlLines::new(&generator, order, args.seed);
    if args.stats {
        print_stats(&lines.length_histogram(args.n), args.n, &generator);
        return Ok(0);
    }
    match &args.out {
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
            lines
                .write(args.n, &mut out)
                .and_then(|()| out.flush())
                .context("cannot write to standard output")?;
        }
        Some(path) => {
            let mut out = AtomicFile::create(path)?;
            lines
                .write(args.n, &mut out)
                .with_context(|| format!("cannot write {}", out.tmp_path().display()))?;
            out.commit()?;
        }
    }
    Ok(0)
}

fn print_stats(histogram: &[u64], n: u64, generator: &UrlGenerator) {
    let quantile = |p: f64| -> usize {
        let rank = ((n.saturating_sub(1)) as f64 * p).round() as u64;
        let mut seen = 0;
        for (len, count) in histogram.iter().enumerate() {
            seen += count;
            if seen > rank {
                return len;
            }
        }
        0
    };
    let total: u64 = histogram
        .iter()
        .enumerate()
        .map(|(len, c)| len as u64 * c)
        .sum();
    println!(
        "profile {} seed {}: {} keys",
        generator.profile().name,
        generator.seed(),
        n
    );
    println!("  mean {:.2} bytes", total as f64 / n.max(1) as f64);
    for (label, p) in [
        ("min", 0.0),
        ("p5", 0.05),
        ("p25", 0.25),
        ("median", 0.5),
        ("p75", 0.75),
        ("p95", 0.95),
        ("p99", 0.99),
        ("max", 1.0),
    ] {
        println!("  {label:<6} {}", quantile(p));
    }
}
