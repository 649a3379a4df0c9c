//! `dedup` under SIGINT and SIGTERM: it stops reading after the batch in flight, saves the filter, leaves
//! no temporary file and exits 130 with its closing line; a restart from the saved filter passes none of
//! the lines already written out. The same with an input that has gone silent (nothing to read, never
//! closed): the stop must not wait for a line.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

fn spawn_dedup(save: &std::path::Path) -> Child {
    common::dedupbench()
        .args([
            "dedup",
            "--structure",
            "bloom",
            "--expected",
            "20M",
            "--seed",
            "1",
        ])
        .arg("--save")
        .arg(save)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on the child's pid, which this process started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// No `.NAME.*.partial` is left beside `path`.
fn no_temporary_file(path: &std::path::Path) -> bool {
    let prefix = format!(".{}.", path.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .all(|e| !e.file_name().to_string_lossy().starts_with(&prefix))
}

#[test]
fn a_signal_mid_stream_saves_every_line_written_out() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let save = dir.path().join("seen.filter");
        let mut child = spawn_dedup(&save);
        let mut stdin = child.stdin.take().unwrap();
        // The writer feeds distinct URLs until dedup stops reading (its pipe then breaks).
        let writer = std::thread::spawn(move || {
            let g = common::generator();
            let mut buf = Vec::new();
            let mut chunk = Vec::new();
            for i in 0..5_000_000u64 {
                g.member(i, &mut buf);
                chunk.extend_from_slice(&buf);
                chunk.push(b'\n');
                if chunk.len() > 1 << 16 {
                    if stdin.write_all(&chunk).is_err() {
                        return;
                    }
                    chunk.clear();
                }
            }
        });
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut passed = Vec::new();
        let mut line = Vec::new();
        while passed.len() < 50_000 {
            line.clear();
            assert!(
                out.read_until(b'\n', &mut line).unwrap() > 0,
                "output ended early"
            );
            passed.extend_from_slice(&line);
        }
        signal(&child, sig);
        out.read_to_end(&mut passed).unwrap();
        let code = common::wait_exit(&mut child, Duration::from_secs(30));
        let _ = writer.join();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(code, Some(130), "signal {sig}: {stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert!(stderr.contains("lines read"), "the closing line: {stderr}");
        assert!(no_temporary_file(&save));
        let written = passed.iter().filter(|b| **b == b'\n').count();
        assert!(written < 5_000_000, "the stop came before the input's end");
        // Restarted from the saved filter, not one of the lines already written out passes again.
        let again = common::run_piped(&["dedup", "--load", save.to_str().unwrap()], &passed);
        assert!(again.status.success(), "{}", common::stderr(&again));
        assert!(
            again.stdout.is_empty(),
            "signal {sig}: {} of {written} lines passed again",
            again.stdout.iter().filter(|b| **b == b'\n').count()
        );
    }
}

/// Lines are read in batches of 4096, so a line alone on a silent input is not yet read into a batch:
/// it is not written out, and after the stop it is not in the saved filter either.
#[test]
fn a_signal_while_the_input_is_silent_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("seen.filter");
    let mut child = spawn_dedup(&save);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"https://a.example/\n").unwrap();
    stdin.flush().unwrap();
    // The input says nothing more and stays open.
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGTERM);
    let code = common::wait_exit(&mut child, Duration::from_secs(10));
    drop(stdin);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    assert_eq!(code, Some(130));
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert!(no_temporary_file(&save));
    let again = common::run_piped(
        &["dedup", "--load", save.to_str().unwrap()],
        b"https://a.example/\nhttps://b.example/\n",
    );
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        "https://a.example/\nhttps://b.example/\n"
    );
}

/// An output nobody reads blocks the stream before it can see a stop: a second signal ends the process
/// at once (nothing is saved unless the save had begun; here there is no --save).
#[test]
fn a_second_signal_ends_a_blocked_stream() {
    let mut child = common::dedupbench()
        .args(["dedup", "--structure", "bloom", "--expected", "20M"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let g = common::generator();
        let mut buf = Vec::new();
        for i in 0..2_000_000u64 {
            g.member(i, &mut buf);
            buf.push(b'\n');
            if stdin.write_all(&buf).is_err() {
                return;
            }
        }
    });
    // The output pipe fills and is never read: dedup blocks writing it.
    std::thread::sleep(Duration::from_millis(800));
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "blocked, it has not seen the first"
    );
    signal(&child, libc::SIGINT);
    let code = common::wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(code, Some(130));
    drop(child.stdout.take());
    let _ = writer.join();
}
