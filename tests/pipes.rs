//! A reader that stops early (`dedupbench … | head -1`) is no failure: every command that writes to
//! standard output exits 0, without a panic, when its reader closes the pipe after the first line.
//! Whether the command is still writing when the pipe closes is a race, so each is run several times,
//! and once more with the pipe closed before it starts (every write then fails).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

/// Times each cheap command is run: the closed pipe must be met at least once (it was in 3 of 5 runs
/// of `size | head -1` before standard output stopped panicking).
const RUNS: usize = 5;

/// Runs `dedupbench ARGS` (with `input` on stdin, if any), reads the first line of its output (unless
/// `read_first` is false), closes the pipe as `head -1` does and waits: the exit status must be 0 and
/// stderr free of panics.
fn close_after(args: &[&str], input: Option<Vec<u8>>, read_first: bool) {
    let mut child = common::dedupbench()
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child's stdin is written from a thread, which stops quietly once the child stops reading.
    let writer = input.map(|bytes| {
        let mut stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        })
    });
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    if read_first {
        reader.read_line(&mut first).unwrap();
    }
    drop(reader);
    let out = child.wait_with_output().unwrap();
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    let stderr = common::stderr(&out);
    assert!(
        !read_first || !first.is_empty(),
        "{args:?} wrote nothing; stderr: {stderr}"
    );
    assert!(
        !stderr.contains("panicked"),
        "{args:?} panicked on a closed pipe: {stderr}"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?} on a closed pipe; stderr: {stderr}"
    );
}

fn first_line_then_close(args: &[&str], input: Option<Vec<u8>>) {
    close_after(args, input, true);
}

/// `args` with the pipe closed after the first line, [`RUNS`] times, then closed from the start.
fn repeatedly(args: &[&str]) {
    for _ in 0..RUNS {
        first_line_then_close(args, None);
    }
    close_after(args, None, false);
}

#[test]
fn size_and_its_json_end_quietly_on_a_closed_pipe() {
    repeatedly(&["size", "--n", "5M"]);
    repeatedly(&["size", "--n", "5M", "--json"]);
}

#[test]
fn gen_and_its_stats_end_quietly_on_a_closed_pipe() {
    // More lines than a pipe holds: the closed pipe is certain.
    repeatedly(&["gen", "--n", "100k"]);
    repeatedly(&["gen", "--n", "1k", "--stats"]);
}

#[test]
fn advise_and_its_json_end_quietly_on_a_closed_pipe() {
    repeatedly(&["advise", "--n", "50M", "--memory", "1GiB"]);
    repeatedly(&["advise", "--n", "50M", "--memory", "1GiB", "--json"]);
    repeatedly(&["advise", "--window", "70M", "--memory", "1GiB"]);
    repeatedly(&["advise", "--window", "70M", "--memory", "1GiB", "--json"]);
}

#[test]
fn help_and_version_end_quietly_on_a_closed_pipe() {
    repeatedly(&["--help"]);
    repeatedly(&["--version"]);
    repeatedly(&["bench", "--help"]);
    repeatedly(&["advise", "--help"]);
}

#[test]
fn dedup_ends_quietly_on_a_closed_pipe() {
    let urls = common::member_urls(50_000).join("\n") + "\n";
    for _ in 0..RUNS {
        first_line_then_close(
            &["dedup", "--expected", "100k", "--seed", "1"],
            Some(urls.clone().into_bytes()),
        );
    }
    close_after(
        &["dedup", "--expected", "100k", "--seed", "1"],
        Some(urls.into_bytes()),
        false,
    );
}

#[test]
fn bench_summary_and_report_end_quietly_on_a_closed_pipe() {
    // One run each, with the pipe closed from the start: a bench writes its report (seconds), and its
    // summary is a few lines, likely all written before a reader could close after the first.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out = out.to_str().unwrap();
    close_after(
        &[
            "bench",
            "--scales",
            "1000",
            "--structures",
            "bloom,bitmap",
            "--no-experiments",
            "--quiet",
            "--reps",
            "1",
            "--rounds",
            "6",
            "--out",
            out,
        ],
        None,
        false,
    );
    // `report` writes to stderr only: a closed stdout is nothing to it either.
    close_after(&["report", out], None, false);
}
