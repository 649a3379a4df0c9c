//! The commands through the real binary: `size` reproduces the articles' numbers, `advise` answers their
//! cases, and bad input is a one-line error with exit status 2.

mod common;

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dedupbench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn size_json_gives_the_first_articles_filter() {
    let (code, stdout, _) = run(&["size", "--n", "50M", "--fpr", "0.01", "--json"]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["bloom"]["bits"], 479_252_919u64);
    assert_eq!(v["bloom"]["hashes"], 7);
    assert_eq!(v["bloom"]["bytes"], 59_906_616u64);
    assert!((v["bloom"]["bits_per_key"].as_f64().unwrap() - 9.585).abs() < 0.001);
    assert_eq!(
        v["structures"].as_array().unwrap().len(),
        dedupbench::registry::ids().len()
    );
}

#[test]
fn advise_agrees_with_size_on_the_articles_cases() {
    let (code, stdout, _) = run(&[
        "advise", "--n", "6e9", "--fpr", "0.01", "--memory", "1GiB", "--json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["recommended"].as_array().unwrap().is_empty());
    let best = v["best_fpr_in_budget"].as_f64().unwrap();
    assert!((best - 0.503).abs() < 0.01, "{best}");
    let (_, size, _) = run(&["size", "--n", "6e9", "--fpr", "0.01", "--json"]);
    let size: serde_json::Value = serde_json::from_str(&size).unwrap();
    assert_eq!(
        v["bloom_bytes_for_target"].as_f64().unwrap(),
        size["bloom"]["bytes"].as_f64().unwrap()
    );
    // Every structure the advisor sizes as the harness does gets the bytes `size` predicts for it.
    let candidates: Vec<&serde_json::Value> = v["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .chain(v["recommended"].as_array().unwrap())
        .collect();
    let mut compared = 0;
    for c in candidates {
        let id = c["id"].as_str().unwrap();
        // A peer has no advice of its own: the advisor sizes it as the harness does.
        let advisor = dedupbench::registry::find(id).unwrap().advisor();
        if advisor.is_some_and(|a| a.size_for_advice.is_some() || a.prefers_measured_bytes) {
            continue;
        }
        let predicted = size["structures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["footprint_bytes"]
            .as_f64()
            .unwrap();
        let advised = c["bytes"].as_f64().unwrap();
        assert!(
            (advised - predicted).abs() <= 0.5,
            "{id}: advise {advised}, size {predicted}"
        );
        compared += 1;
    }
    assert!(compared >= 4, "{compared}");
    // And both agree with the closed forms of the theory, not just with each other.
    let bytes_of = |id: &str| {
        v["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()["bytes"]
            .as_f64()
            .unwrap()
    };
    let (n, p) = (6_000_000_000u64, 0.01);
    let bloom = dedupbench::theory::BloomSizing::for_rate(n, p);
    assert_eq!(bytes_of("bloom"), bloom.bytes() as f64);
    assert_eq!(bytes_of("counting"), bloom.bits.div_ceil(2) as f64);
    let (blocks, _) = dedupbench::theory::blocked_sizing(n, p);
    // One block more than the sizing: the array is aligned to a cache line.
    assert_eq!(bytes_of("blocked"), ((blocks + 1) * 64) as f64);

    let (code, stdout, _) = run(&["advise", "--n", "50M", "--memory", "1GiB"]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("bloom") && stdout.contains("Regime ladder"),
        "{stdout}"
    );
}

#[test]
fn advise_draws_the_regime_map_and_states_the_overshoot() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("map.png");
    let (code, stdout, stderr) = run(&[
        "advise",
        "--n",
        "50M",
        "--memory",
        "1GiB",
        "--fpr",
        "0.01",
        "--map",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let bytes = std::fs::read(&png).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{} bytes",
        bytes.len()
    );
    // A quarter more keys than planned: 1% becomes 2.8% (the Bloom formula at 1.25 n).
    assert!(
        stdout.contains("Overshoot: bloom sized for n = 50M")
            && stdout.contains("1.25× n: 2.76% of new URLs skipped"),
        "{stdout}"
    );
    // A map file of another kind is refused, and nothing is left behind.
    let txt = dir.path().join("map.txt");
    let (code, _, stderr) = run(&[
        "advise",
        "--n",
        "50M",
        "--memory",
        "1GiB",
        "--map",
        txt.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(".svg or .png"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // The advice's own workload is marked on its map, a range of n as a segment.
    let svg = dir.path().join("map.svg");
    let (code, _, stderr) = run(&[
        "advise",
        "--n",
        "10M..2G",
        "--memory",
        "1GiB",
        "--map",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("× your workload: n = 10M..2G, 1.00 GiB"),
        "{:.300}",
        text
    );
}

#[test]
fn dedup_with_a_window_passes_a_url_again_once_the_window_has_moved_past_it() {
    // 1000 distinct URLs, then the first one again: inside a window of 2000 it is skipped, outside a
    // window of 300 (forgotten within 300 + 100) it passes again.
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!("https://example.com/page/{i}\n"));
    }
    text.push_str("https://example.com/page/0\n");
    for (window, passes_again) in [("2000", false), ("300", true)] {
        let (code, stdout, stderr) = run_with_input(
            &[
                "dedup", "--window", window, "--fpr", "0.0001", "--seed", "3",
            ],
            text.as_bytes(),
        );
        assert_eq!(code, Some(0), "{stderr}");
        // The repeated URL passes a second time only once the window has moved past it; the other lines
        // are distinct, and a false positive may drop one of them (about 10⁻⁵ each: 200 seeds of this
        // input dropped one line in all), never two.
        let first = stdout
            .lines()
            .filter(|l| *l == "https://example.com/page/0")
            .count();
        assert_eq!(
            first,
            if passes_again { 2 } else { 1 },
            "window {window}: {stderr}"
        );
        let lines = stdout.lines().count();
        let distinct_passed = if passes_again { lines - 1 } else { lines };
        assert!(distinct_passed >= 999, "window {window}: {stderr}");
    }
    let (code, _, stderr) = run_with_input(
        &["dedup", "--window", "300", "--structure", "bloom"],
        text.as_bytes(),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("windowed"), "{stderr}");
}

#[test]
fn advise_weighs_the_expiry_contenders_for_a_week_of_urls() {
    let (code, stdout, stderr) = run(&[
        "advise",
        "--window",
        "7d",
        "--admissions-per-sec",
        "115.74",
        "--memory",
        "1GiB",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "Expiry window: 70M admissions (URLs let through, re-crawls included) = 7.0 days"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("Pick: windowed filter."), "{stdout}");
    // The lag as a time: one generation of the windowed filter.
    assert!(
        stdout.contains("Lateness: the windowed filter lets a due re-crawl through up to"),
        "{stdout}"
    );
    let (code, _, stderr) = run(&["advise", "--window", "7d", "--memory", "1GiB"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--admissions-per-sec"), "{stderr}");
}

/// The lead's re-crawl: 2·10⁹ live URLs, each re-crawled every 7 days, is 2·10⁹ admissions a window
/// (≈ 3300/s), not the 38.4M that the rate of new URLs alone gives; and a window is per process.
#[test]
fn a_recrawl_window_counts_admissions_and_refuses_what_it_would_ignore() {
    let (code, stdout, stderr) = run(&[
        "advise", "--window", "7d", "--n", "2G", "--memory", "16GiB", "--fpr", "0.01",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("Expiry window: 2G admissions")
            && stdout.contains("at 3306.88 admissions/s"),
        "{stdout}"
    );
    assert!(stdout.contains("up to 2.3 days"), "{stdout}");
    let (code, stdout, stderr) = run(&[
        "advise",
        "--window",
        "7d",
        "--n",
        "2G",
        "--admissions-per-sec",
        "63.42",
        "--memory",
        "16GiB",
        "--fpr",
        "0.01",
    ]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stderr.contains("--admissions-per-sec")
            && stderr.contains("below the 3307/s")
            && stderr.contains("passes in 3.2 hours"),
        "{stderr}"
    );
    for flag in [
        &["--shared"][..],
        &["--deletes"],
        &["--growth", "unknown"],
        &["--inserts-per-sec", "1000"],
        &["--map", "m.svg"],
    ] {
        let mut args = vec!["advise", "--window", "70M", "--memory", "1GiB"];
        args.extend_from_slice(flag);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, Some(2), "{flag:?}: {stdout}");
        assert!(
            stderr.contains(flag[0]) && stderr.contains("not taken with --window"),
            "{flag:?}: {stderr}"
        );
    }
    // Re-crawled once a window, a URL comes back just as its window ends: the lag is said in days.
    let (_, stdout, _) = run(&["advise", "--window", "7d", "--n", "2G", "--memory", "16GiB"]);
    assert!(
        stdout.contains("may still hold it for up to 2.3 days more")
            && stdout.contains("p = 1.00%: the default for a window"),
        "{stdout}"
    );
    let (code, _, stderr) = run(&["advise", "--n", "1M", "--admissions-per-sec", "10"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (_, _, stderr) = run(&["advise", "--window", "70M", "--memory", "1GiB", "--shared"]);
    assert!(stderr.contains("windows are per process"), "{stderr}");
}

/// The price of each rate: without --fpr the table spans 1% to 1 per million and the pick spends the
/// headroom; a range bounds it; the fleet and the shared backends answer the lead's other questions.
#[test]
fn advise_prices_each_rate_and_the_fleet() {
    let (code, stdout, stderr) = run(&["advise", "--n", "2G", "--memory", "16GiB"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("The price of each rate"), "{stdout}");
    assert!(
        stdout.contains(
            "Rate: p = 1.00 per million — the lowest rate of the table at which a filter still fits"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("never crawled in 2G URLs") && stdout.contains("3.33M"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&[
        "advise",
        "--n",
        "2G",
        "--memory",
        "16GiB",
        "--fpr",
        "1e-4..1e-2",
    ]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Rate: p = 100 per million"), "{stdout}");
    let (code, stdout, stderr) = run(&[
        "advise",
        "--n",
        "2G",
        "--memory",
        "16GiB",
        "--fpr",
        "0.01",
        "--machines",
        "20",
        "--machine-memory",
        "16GiB",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("The fleet: 20 machines of 16.0 GiB each, partitioned by host"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  1.  fingerprint on each machine"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&[
        "advise", "--n", "2G", "--memory", "16GiB", "--fpr", "0.01", "--shared",
    ]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("  1.  redis-bloom ") && stdout.contains("needs the RedisBloom module"),
        "{stdout}"
    );
    assert!(
        stdout.contains("redis-bitmap") && stdout.contains("plain Redis, no module"),
        "{stdout}"
    );
    let (code, stdout, _) = run(&[
        "advise",
        "--n",
        "5M",
        "--memory",
        "16GiB",
        "--workload",
        "blocklist",
    ]);
    assert_eq!(code, Some(0));
    assert!(
        stdout.contains("legitimate entries blocked per million checks"),
        "{stdout}"
    );
}

#[test]
fn bad_input_is_a_one_line_error_with_status_2() {
    let cases: &[&[&str]] = &[
        &["size", "--n", "5X"],
        &["size", "--n", "50M", "--fpr", "0"],
        &["size", "--n", "50M", "--fpr", "1"],
        &["size", "--n", "0"],
        &["size", "--n", "50M", "--profile", "no-such"],
        &["gen", "--n", "10", "--duplicates", "1.5"],
        &["gen", "--n", "10", "--profile", "/nonexistent/file.profile"],
        &["advise", "--n", "10M..1M", "--memory", "1GiB"],
        &["advise", "--n", "abc", "--memory", "1GiB"],
        &["advise", "--n", "1M", "--memory", "0"],
        &["advise", "--n", "1M", "--fpr", "2"],
        &["report", "/nonexistent-dir"],
        &["bench", "--structures", "nope"],
    ];
    for args in cases {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_missing_required_flag_is_named_in_the_one_line_error() {
    let cases: &[(&[&str], &[&str])] = &[
        (&["advise"], &["--n"]),
        (
            &["advise", "--n", "1M", "--current", "bloom"],
            &["--results"],
        ),
        (&["size"], &["--n"]),
        (&["gen"], &["--n"]),
        (&["shared"], &["--name", "--expected"]),
    ];
    for (args, named) in cases {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        for flag in *named {
            assert!(
                stderr.contains("not provided") && stderr.contains(flag),
                "{args:?} should name {flag}: {stderr}"
            );
        }
    }
}

#[test]
fn a_misspelt_flag_or_command_is_answered_with_the_one_meant() {
    for (args, meant) in [
        (&["advise", "--n", "1M", "--jsn"][..], "'--json'"),
        (&["sise", "--n", "1M"], "'size'"),
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("tip:") && stderr.contains(meant),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_size_without_a_unit_is_refused_and_16b_is_bytes() {
    for args in [
        &["advise", "--n", "1M", "--memory", "16"][..],
        &[
            "advise",
            "--n",
            "1M",
            "--memory",
            "1GiB",
            "--node-memory",
            "64",
        ],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("no unit") && stderr.contains("B for bytes"),
            "{args:?}: {stderr}"
        );
    }
    let (code, stdout, stderr) = run(&["advise", "--n", "1M", "--memory", "16B", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["workload"]["memory_bytes"], 16);
}

#[test]
fn a_rate_is_a_fraction_or_a_percentage() {
    for fpr in ["0.1%", "1e-3", "0.001"] {
        let (code, stdout, stderr) = run(&["size", "--n", "1M", "--fpr", fpr, "--json"]);
        assert_eq!(code, Some(0), "{fpr}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["fpr"].as_f64(), Some(0.001), "{fpr}");
    }
    let (code, stdout, stderr) = run(&[
        "advise", "--n", "1M", "--memory", "1GiB", "--fpr", "0.1%", "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["workload"]["fpr"].as_f64(), Some(0.001));
    for args in [
        &["size", "--n", "1M", "--fpr", "150%"][..],
        &["advise", "--n", "1M", "--fpr", "150%"],
        &["bench", "--fpr", "150%"],
        &["dedup", "--fpr", "150%"],
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("--fpr") && stderr.contains("outside"),
            "{args:?}: {stderr}"
        );
    }
}

/// The keys under `value` that hold a byte count (a key naming bytes, not a ratio such as
/// `bytes_per_key` or `mean_key_bytes`) whose value is not an integer, with their paths.
fn fractional_byte_counts(value: &serde_json::Value, path: &str, found: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                let path = format!("{path}.{key}");
                let ratio = key.contains("_per_") || key.starts_with("mean_");
                let whole = v.is_u64() || v.is_i64() || v.is_null();
                if key.contains("bytes") && !ratio && !whole {
                    found.push(format!("{path} = {v}"));
                }
                fractional_byte_counts(v, &path, found);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                fractional_byte_counts(v, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn json_byte_counts_are_whole_bytes() {
    for args in [
        &["size", "--n", "50M", "--json"][..],
        &["advise", "--n", "2e9", "--memory", "16GiB", "--json"],
        &[
            "advise",
            "--n",
            "2e9",
            "--memory",
            "16GiB",
            "--shared",
            "--inserts-per-sec",
            "1M",
            "--json",
        ],
        &["advise", "--window", "70M", "--memory", "1GiB", "--json"],
        &[
            "advise", "--window", "70M", "--n", "50M", "--memory", "1GiB", "--json",
        ],
        &[
            "advise",
            "--n",
            "2e9",
            "--memory",
            "16GiB",
            "--fp-cost",
            "2ms",
            "--machines",
            "20",
            "--machine-memory",
            "16GiB",
            "--json",
        ],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let mut found = Vec::new();
        fractional_byte_counts(&v, "", &mut found);
        assert!(found.is_empty(), "{args:?}: {found:?}");
        assert!(stdout.contains("bytes\""), "{args:?} holds no byte count");
    }
}

#[test]
fn size_table_columns_line_up_whatever_the_ids_length() {
    let (code, stdout, stderr) = run(&["size", "--n", "1M"]);
    assert_eq!(code, Some(0), "{stderr}");
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("structure"));
    let header = lines.next().expect("a table header");
    let rows: Vec<&str> = lines.filter(|l| !l.contains("unavailable")).collect();
    assert!(rows.iter().any(|r| r.contains("redis-bloom-scaling")));
    assert!(rows.len() > 10, "{stdout}");
    for row in rows {
        // Every column is right-aligned but the first: a row as long as the header lines up with it.
        assert_eq!(
            row.chars().count(),
            header.chars().count(),
            "\n{header}\n{row}"
        );
    }
}

#[test]
fn gen_writes_distinct_urls_and_its_stats() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("urls.txt");
    let (code, _, _) = run(&["gen", "--n", "1000", "--out", path.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: std::collections::HashSet<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1000);
    let (_, stdout, _) = run(&["gen", "--n", "1000", "--non-members"]);
    assert!(stdout.lines().all(|l| !lines.contains(l)));
    let (_, stdout, _) = run(&["gen", "--n", "1000", "--duplicates", "0.5"]);
    let distinct: std::collections::HashSet<&str> = stdout.lines().collect();
    assert!(
        distinct.len() < 700 && distinct.len() > 300,
        "{}",
        distinct.len()
    );
    let (_, stdout, _) = run(&["gen", "--n", "10000", "--stats"]);
    assert!(stdout.contains("median"));
}

/// `gen --profile email|ipv4|ipv6`: distinct keys of the shape, none of them a non-member; IP addresses
/// in their canonical text (the standard library's, RFC 5952 for IPv6). A count past the shape's space
/// and a profile naming no shape are one-line errors naming what is allowed.
#[test]
fn gen_writes_each_shape_distinct_and_disjoint_from_its_non_members() {
    for profile in ["email", "ipv4", "ipv6"] {
        let (code, members, err) = run(&["gen", "--n", "3000", "--profile", profile]);
        assert_eq!(code, Some(0), "{profile}: {err}");
        let (code, non_members, _) =
            run(&["gen", "--n", "3000", "--profile", profile, "--non-members"]);
        assert_eq!(code, Some(0), "{profile}");
        let seen: std::collections::HashSet<&str> = members.lines().collect();
        assert_eq!(seen.len(), 3000, "{profile}");
        assert!(non_members.lines().all(|l| !seen.contains(l)), "{profile}");
        for line in members.lines().chain(non_members.lines()) {
            match profile {
                "email" => {
                    let (local, domain) = line.split_once('@').unwrap();
                    assert!(!local.is_empty() && domain.contains('.'), "{line}");
                }
                "ipv4" => {
                    let ip: std::net::Ipv4Addr = line.parse().unwrap();
                    assert!(
                        !ip.is_private() && !ip.is_loopback() && !ip.is_multicast(),
                        "{line}"
                    );
                    assert_eq!(ip.to_string(), line);
                }
                _ => {
                    let ip: std::net::Ipv6Addr = line.parse().unwrap();
                    assert_eq!(ip.segments()[0] >> 13, 1, "{line}: not 2000::/3");
                    assert_eq!(ip.to_string(), line);
                }
            }
        }
    }
    let (code, _, stderr) = run(&["gen", "--n", "2e9", "--profile", "ipv4"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--n") && stderr.contains("ipv4"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.profile");
    std::fs::write(&path, "name = p\nshape = phone\n").unwrap();
    let (code, _, stderr) = run(&["gen", "--n", "3", "--profile", path.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(":2:") && stderr.contains("url, email, ipv4, ipv6"),
        "{stderr}"
    );
}

/// Runs the binary with `stdin` piped in; returns (status, stdout, stderr).
fn run_with_input(args: &[&str], stdin: &[u8]) -> (Option<i32>, String, String) {
    let out = common::run_piped(args, stdin);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn counts_and_rates_take_k_m_g_on_every_command() {
    let (code, stdout, stderr) = run(&[
        "advise",
        "--n",
        "1M",
        "--memory",
        "1GiB",
        "--inserts-per-sec",
        "50k",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["nodes"]["inserts_per_sec"].as_f64(), Some(50_000.0));
    let (code, stdout, stderr) = run(&[
        "advise",
        "--window",
        "7d",
        "--admissions-per-sec",
        "2.5k",
        "--memory",
        "1GiB",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["window_keys"], 7 * 86_400 * 2_500);
    let (code, stdout, stderr) = run_with_input(
        &["dedup", "--expected", "1k", "--batch", "1k", "--seed", "1"],
        b"a\nb\na\n",
    );
    assert_eq!((code, stdout.as_str()), (Some(0), "a\nb\n"), "{stderr}");
    // bench's counts parse: the error is the structure named after them, not them.
    let (code, _, stderr) = run(&[
        "bench",
        "--reps",
        "1k",
        "--rounds",
        "1k",
        "--redis-batches",
        "1,1k",
        "--redis-keys",
        "10k",
        "--structures",
        "nope",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("nope") && !stderr.contains("--r"),
        "{stderr}"
    );
    for (args, flag) in [
        (
            &["advise", "--n", "1M", "--inserts-per-sec", "0"][..],
            "--inserts-per-sec",
        ),
        (
            &["advise", "--window", "7d", "--admissions-per-sec", "fast"],
            "--admissions-per-sec",
        ),
        (&["bench", "--reps", "5G"], "--reps"),
    ] {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
}

#[test]
fn dedup_keeps_what_it_saw_across_a_save_and_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("seen.filter");
    let saved = saved.to_str().unwrap();
    let first: String = (0..2000)
        .map(|i| format!("https://a.example/{i}\n"))
        .collect();
    let (code, out, err) = run_with_input(
        &[
            "dedup",
            "--structure",
            "blocked",
            "--expected",
            "4000",
            "--seed",
            "9",
            "--save",
            saved,
        ],
        format!("{first}{first}").as_bytes(),
    );
    assert_eq!(code, Some(0), "{err}");
    let passed_first = out.lines().count();
    // Repeats never pass; new lines pass unless a false positive drops them (≈ 1%, far under 100).
    assert!(
        passed_first <= 2000 && passed_first > 1900,
        "{passed_first}"
    );
    let second: String = (1000..3000)
        .map(|i| format!("https://a.example/{i}\n"))
        .collect();
    let (code, out, err) = run_with_input(&["dedup", "--load", saved], second.as_bytes());
    assert_eq!(code, Some(0), "{err}");
    // Lines 1000..2000 were seen before the restart: none of them passes.
    for line in out.lines() {
        let i: u64 = line.rsplit('/').next().unwrap().parse().unwrap();
        assert!(i >= 2000, "{line} passed again after the load");
    }
    assert!(out.lines().count() > 900, "{}", out.lines().count());
    assert!(err.contains("blocked"), "{err}");
}

/// Files saved before the default hash changed (xxh3-128, `tests/fixtures/saved-xxh3-128/README.md`
/// says how they were made) still load, and answer line for line as they did when saved: the loader
/// hashes with the file's hash, not with today's default.
#[test]
fn files_saved_with_xxh3_128_load_and_answer_as_they_did() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/saved-xxh3-128");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let queries = format!("{}{}", read("members.txt"), read("non-members.txt"));
    let index: std::collections::HashMap<&str, usize> =
        queries.lines().enumerate().map(|(i, q)| (q, i)).collect();
    assert_eq!(index.len(), 2000, "the query lines are distinct");
    for kind in ["bitmap", "bloom", "blocked", "counting", "scalable"] {
        let file = dir.join(format!("{kind}.dbf"));
        let (code, out, err) = run_with_input(
            &["dedup", "--load", file.to_str().unwrap()],
            queries.as_bytes(),
        );
        assert_eq!(code, Some(0), "{kind}: {err}");
        let passed: Vec<usize> = out.lines().map(|l| index[l]).collect();
        let expected: Vec<usize> = read(&format!("{kind}.passed"))
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(passed, expected, "{kind}: the lines passed changed");
        assert!(
            err.contains("xxh3-128"),
            "{kind}: the summary names the file's hash: {err}"
        );
    }
}

/// The workloads' advice: a blocklist gets a static filter named with its crate, a false positive's cost
/// picks the size (without a run, only the rate term, and the answer says so), and the window workload
/// without a window is a clear error.
#[test]
fn advise_answers_a_workload_and_prices_a_false_positive() {
    let (code, stdout, stderr) = run(&[
        "advise",
        "--workload",
        "blocklist",
        "--n",
        "50M",
        "--fpr",
        "0.01",
        "--memory",
        "256MiB",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let first = &v["recommended"][0];
    assert!(
        first["label"]
            .as_str()
            .unwrap()
            .starts_with("binary-fuse8 (xorf "),
        "{first}"
    );
    assert_eq!(v["workload"]["workload"], "blocklist");

    let (code, stdout, _) = run(&[
        "advise",
        "--workload",
        "cache-guard",
        "--n",
        "1M",
        "--memory",
        "4MiB",
        "--fp-cost",
        "1ms",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let cost = &v["cost"];
    assert!(cost["lookup_source"]
        .as_str()
        .unwrap()
        .contains("only the rate term"));
    let ranked = cost["ranked"].as_array().unwrap();
    assert!(!ranked.is_empty());
    for c in ranked {
        let kind = dedupbench::registry::find(c["id"].as_str().unwrap()).unwrap();
        assert!(kind.removable(), "{c}");
        assert!(c["bytes"].as_f64().unwrap() <= (4 << 20) as f64, "{c}");
    }

    let (code, _, stderr) = run(&["advise", "--workload", "window", "--n", "1M"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--workload") && stderr.contains("--window"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["advise", "--n", "1M", "--fp-cost", "soon"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("such as 2ms"), "{stderr}");
}
