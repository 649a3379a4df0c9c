//! Bad input through the real binary: each case is a one-line error that names the flag or file, exit
//! status 2, and nothing half-written.

mod common;

use std::io::Write;
use std::path::Path;

struct Case {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    /// A piece the one-line message must contain.
    says: &'static str,
}

fn case(args: &[&str], says: &'static str) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        stdin: None,
        says,
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[test]
fn every_bad_input_is_a_one_line_error_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out-never-written");
    let old_filter = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/saved-xxh3-128/bloom.dbf"
    );
    let o = out.to_str().unwrap().to_string();
    let empty = write(d, "empty.txt", b"");
    let blank = write(d, "blank.txt", b"\n\n\n");
    let binary = write(d, "binary.txt", b"https://a.example/\n\x00\x01\x02binary\n");
    let long = write(
        d,
        "long.txt",
        &[b"https://a.example/".as_slice(), &vec![b'a'; 70_000], b"\n"].concat(),
    );
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for i in 0..2000 {
            writeln!(e, "https://example.com/page-{i}").unwrap();
        }
        let bytes = e.finish().unwrap();
        write(d, "truncated.txt.gz", &bytes[..bytes.len() / 2])
    };
    let results_dir = |name: &str, lines: &[&str]| {
        let sub = d.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
        sub.display().to_string()
    };
    let newer = results_dir("newer", &[r#"{"schema_version":99,"record":"run"}"#]);
    // A real header (from the committed reference run), then a corrupt line in the middle.
    let header = include_str!("../reports/reference/results.jsonl")
        .lines()
        .next()
        .unwrap();
    let corrupt = results_dir("corrupt", &[header, "not json at all", header]);
    let foreign = results_dir("foreign", &[r#"{"hello":"world"}"#]);
    let a_file = write(d, "a-file", b"x");
    let existing = results_dir("existing", &[r#"{"schema_version":1}"#]);
    let bad_profile = write(d, "bad.profile", b"name = x\nhosts = many\n");
    let bad_filter = write(d, "bad.filter", b"DDBFILT\0garbage that is no filter");
    let urls = write(d, "urls.txt", b"https://a.example/1\nhttps://a.example/2\n");

    let mut cases = vec![
        case(&["size", "--n", "5X"], "--n"),
        case(&["size", "--n=-5"], "--n"),
        case(&["size", "--n", "1e30"], "--n"),
        case(&["size", "--n", "0"], "--n"),
        case(&["size", "--n", "1M", "--fpr", "0"], "--fpr"),
        case(&["size", "--n", "1M", "--fpr", "1"], "--fpr"),
        case(&["size", "--n", "1M", "--fpr=-0.1"], "--fpr"),
        case(&["size", "--n", "1M", "--fpr", "nan"], "--fpr"),
        case(&["size", "--n", "1M", "--profile", "nope"], "--profile"),
        case(
            &["size", "--n", "1M", "--profile", &bad_profile],
            "bad.profile:2",
        ),
        case(&["gen", "--n", "1e15"], "--n"),
        case(&["gen", "--n", "10", "--duplicates", "1"], "--duplicates"),
        case(
            &["gen", "--n", "10", "--non-members", "--duplicates", "0.5"],
            "--duplicates",
        ),
        case(
            &["bench", "--structures", "bloom,nope", "--out", &o],
            "nope",
        ),
        case(&["bench", "--structures", "", "--out", &o], "--structures"),
        case(&["bench", "--suite", "huge", "--out", &o], "--suite"),
        case(&["bench", "--scales", "1e4,abc", "--out", &o], "--scales"),
        case(&["bench", "--scales", "0", "--out", &o], "--scales"),
        case(&["bench", "--scales", "1e15", "--out", &o], "--scales"),
        case(&["bench", "--memory", "0", "--out", &o], "--memory"),
        case(&["bench", "--memory", "lots", "--out", &o], "--memory"),
        case(&["bench", "--memory", "16", "--out", &o], "no unit"),
        // The flag's old name: clap's tip names the new one.
        case(
            &["bench", "--memory-budget", "1GiB", "--out", &o],
            "'--memory'",
        ),
        case(&["bench", "--reps", "0", "--out", &o], "--reps"),
        case(&["bench", "--fpr", "2", "--out", &o], "--fpr"),
        case(
            &["bench", "--input", "/nonexistent/urls.txt", "--out", &o],
            "urls.txt",
        ),
        case(&["bench", "--input", &empty, "--out", &o], "empty.txt"),
        case(&["bench", "--input", &blank, "--out", &o], "blank.txt"),
        case(&["bench", "--input", &binary, "--out", &o], "binary.txt:2"),
        case(&["bench", "--input", &long, "--out", &o], "long.txt:1"),
        case(&["bench", "--input", &gz, "--out", &o], "truncated.txt.gz"),
        case(
            &["bench", "--input", d.to_str().unwrap(), "--out", &o],
            "directory",
        ),
        case(
            &["bench", "--input", &urls, "--scales", "5", "--out", &o],
            "--scales",
        ),
        case(
            &["bench", "--non-members", &empty, "--out", &o],
            "--non-members",
        ),
        case(
            &[
                "bench",
                "--non-members",
                d.to_str().unwrap(),
                "--quiet",
                "--out",
                &o,
            ],
            "--non-members",
        ),
        case(
            &[
                "bench",
                "--non-members",
                &urls,
                "--suite",
                "article-6e9",
                "--quiet",
                "--out",
                &o,
            ],
            "--non-members",
        ),
        case(
            &[
                "bench",
                "--input",
                &urls,
                "--non-members",
                &urls,
                "--quiet",
                "--out",
                &o,
            ],
            "leaves no non-member",
        ),
        case(&["bench", "--out", &a_file], "not a directory"),
        case(&["bench", "--out", &existing], "already holds results"),
        case(
            &["bench", "--out", "/proc/dedupbench-cannot-write-here"],
            "--out",
        ),
        case(&["bench", "--resume", &o], "--resume"),
        case(&["report", &newer], "newer"),
        case(&["report", &corrupt], "results.jsonl:2: corrupt record"),
        case(&["report", &foreign], "schema_version"),
        case(&["report", "/nonexistent"], "DIR"),
        case(&["advise", "--n", "10M..1M"], "--n"),
        case(&["advise", "--n", "1M", "--memory", "0"], "--memory"),
        case(
            &["advise", "--n", "1M", "--growth", "sometimes"],
            "--growth",
        ),
        case(
            &["advise", "--n", "1M", "--results", "/nonexistent"],
            "nonexistent",
        ),
        case(&["dedup"], "--expected"),
        case(
            &[
                "dedup",
                "--redis",
                "redis://127.0.0.1:1",
                "--name",
                "n",
                "--expected",
                "10",
                "--wait-replicas",
                "1",
            ],
            "--wait-replicas: applies to a cluster",
        ),
        case(
            &[
                "dedup",
                "--redis",
                "redis://127.0.0.1:1",
                "--name",
                "n",
                "--expected",
                "10",
                "--shards",
                "3",
            ],
            "--shards: splits a filter over a cluster",
        ),
        case(
            &[
                "dedup",
                "--redis-cluster",
                "redis://127.0.0.1:1",
                "--name",
                "n",
                "--expected",
                "10",
                "--wait-replicas",
                "0",
            ],
            "--wait-replicas: must be at least 1",
        ),
        case(
            &["dedup", "--expected", "10", "--bad-lines", "pass"],
            "one of: skip, fail",
        ),
        case(&["dedup", "--name", "seen", "--expected", "10"], "--name"),
        case(
            &[
                "dedup",
                "--redis",
                "redis://127.0.0.1:1",
                "--expected",
                "10",
            ],
            "--name",
        ),
        case(
            &[
                "dedup",
                "--redis-cluster",
                "redis://127.0.0.1:1/2",
                "--name",
                "s",
                "--expected",
                "10",
            ],
            "database 2",
        ),
        case(
            &[
                "dedup",
                "--redis-cluster",
                "http://h:1",
                "--name",
                "s",
                "--expected",
                "10",
            ],
            "--redis-cluster",
        ),
        case(
            &[
                "dedup",
                "--redis",
                "redis://127.0.0.1:1",
                "--name",
                "s",
                "--expected",
                "10",
                "--structure",
                "bloom",
            ],
            "lives in this process",
        ),
        case(
            &[
                "dedup",
                "--redis",
                "redis://127.0.0.1:1",
                "--name",
                "s",
                "--window",
                "1000",
            ],
            "--window",
        ),
        case(
            &["dedup", "--structure", "redis-bloom", "--expected", "10"],
            "lives on Redis",
        ),
        case(&["bench", "--redis-retry-secs", "3"], "--redis-retry-secs"),
        case(
            &["advise", "--n", "1M", "--node-memory", "0"],
            "--node-memory",
        ),
        case(
            &[
                "shared",
                "--name",
                "s",
                "--expected",
                "10",
                "--insert",
                "0..5",
            ],
            "--redis",
        ),
        case(
            &["dedup", "--structure", "nope", "--expected", "10"],
            "nope",
        ),
        case(&["dedup", "--load", &bad_filter], "bad.filter"),
        case(
            &["dedup", "--expected", "10", "--hash", "md5"],
            "unknown hash 'md5'; usable: xxh3-128, xxh3-64",
        ),
        case(
            &["dedup", "--expected", "10", "--hash", "foldhash-fast"],
            "in the hash study only",
        ),
        case(
            &["dedup", "--load", old_filter, "--hash", "xxh3-64"],
            "'xxh3-64' does not match the loaded filter's 'xxh3-128'",
        ),
        case(
            &[
                "dedup",
                "--expected",
                "10",
                "--save",
                "/nonexistent/dir/f.bloom",
            ],
            "--save",
        ),
        case(
            &[
                "dedup",
                "--structure",
                "hashset",
                "--expected",
                "10",
                "--save",
                &d.join("h.f").display().to_string(),
            ],
            "cannot be saved",
        ),
        case(
            &["dedup", "--expected", "1e15", "--structure", "hashset"],
            "--expected",
        ),
        case(&["frobnicate"], "frobnicate"),
    ];
    // A bad line stops `dedup` under `--bad-lines fail` (the default skips it), and a bad first line
    // under either (a binary input).
    cases.push(Case {
        args: ["dedup", "--expected", "100", "--bad-lines", "fail"]
            .map(String::from)
            .into(),
        stdin: Some(b"https://a.example/\n\x00\xff\xfe\n".to_vec()),
        says: "<stdin>:2",
    });
    cases.push(Case {
        args: vec!["dedup".into(), "--expected".into(), "100".into()],
        stdin: Some(b"\x00\xff\xfe\nhttps://a.example/\n".to_vec()),
        says: "<stdin>:1",
    });
    assert!(cases.len() >= 30);
    let mut failures = Vec::new();
    for c in &cases {
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let output = common::run_piped(&args, c.stdin.as_deref().unwrap_or_default());
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let ok = output.status.code() == Some(2)
            && lines.len() == 1
            && lines[0].starts_with("error")
            && lines[0].contains(c.says)
            && !out.exists();
        if !ok {
            failures.push(format!(
                "{:?} -> {:?}: expected '{}' in one line: {stderr}",
                c.args,
                output.status.code(),
                c.says
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let temporary = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().ends_with(".partial"));
    assert!(!d.join("h.f").exists() && !temporary);
}
