//! Files and inputs that could be turned against a user, each the row of a hostile pass that found it:
//! racing saves, a planted link, devices and FIFOs where files are expected, a folder that takes no file,
//! results files edited before `--resume`, a filter sized for nothing, doubled or raw error text, and
//! lines of whitespace. Each test failed before its fix (see the closing note of the change).

mod common;

use common::{dedupbench, run_piped, stderr};
use std::path::Path;

/// `n` distinct generated URLs, one per line.
fn urls(n: u64) -> Vec<u8> {
    let g = common::generator();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for i in 0..n {
        g.member(i, &mut buf);
        out.extend_from_slice(&buf);
        out.push(b'\n');
    }
    out
}

fn one_error_line(o: &std::process::Output) -> String {
    let text = stderr(o);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {text}");
    lines[0].to_string()
}

/// Row 1: two `dedup --save` to one path at once leave one whole file, every time.
#[test]
fn racing_saves_leave_one_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, urls(20_000)).unwrap();
    let save = dir.path().join("r.filter");
    for round in 0..20 {
        let children: Vec<_> = (1..=2)
            .map(|seed| {
                dedupbench()
                    .args(["dedup", "--structure", "bloom", "--expected", "3M"])
                    .args(["--seed", &(seed + 10 * round).to_string()])
                    .arg("--save")
                    .arg(&save)
                    .stdin(std::fs::File::open(&input).unwrap())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let again = run_piped(&["dedup", "--load", save.to_str().unwrap()], b"x\n");
        assert!(again.status.success(), "round {round}: {}", stderr(&again));
        let temporary = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().ends_with(".partial"));
        assert!(!temporary, "round {round} left a temporary file");
    }
}

/// Row 2: a link planted at the old temporary name is not followed; the saved file is private.
#[test]
fn a_planted_link_is_not_followed_and_the_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let save = dir.path().join("seen.filter");
    std::os::unix::fs::symlink(&victim, dir.path().join("seen.filter.partial")).unwrap();
    let o = run_piped(
        &[
            "dedup",
            "--structure",
            "bloom",
            "--expected",
            "1000",
            "--save",
            save.to_str().unwrap(),
        ],
        &urls(100),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    let meta = std::fs::symlink_metadata(&save).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
}

/// Rows 5, 6 and 11: a device, a FIFO or a link to one where a file is read whole or more than once is
/// refused at once, by its type.
#[test]
fn devices_and_fifos_are_refused_where_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_piped(&["dedup", "--load", "/dev/zero"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        one_error_line(&o).contains("/dev/zero is a device"),
        "{}",
        stderr(&o)
    );
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::os::unix::fs::symlink("/dev/zero", run.join("results.jsonl")).unwrap();
    for args in [
        vec!["report", run.to_str().unwrap()],
        vec!["advise", "--n", "1M", "--results", run.to_str().unwrap()],
        vec![
            "bench",
            "--profile",
            "/dev/zero",
            "--scales",
            "1e4",
            "--structures",
            "bloom",
        ],
    ] {
        let o = dedupbench().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            one_error_line(&o).contains("is a device"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let fifo = dir.path().join("f");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path inside a fresh temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = std::time::Instant::now();
    let o = dedupbench()
        .args([
            "bench",
            "--scales",
            "1e4",
            "--structures",
            "bloom",
            "--input",
        ])
        .arg(&fifo)
        .arg("--out")
        .arg(dir.path().join("never"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(one_error_line(&o).contains("is a FIFO"), "{}", stderr(&o));
    assert!(started.elapsed().as_secs() < 10, "no wait for a writer");
}

/// Row 8: a folder that takes no file is found before the first line is read or written.
#[test]
fn a_save_that_cannot_be_written_is_refused_before_any_input() {
    let o = run_piped(
        &[
            "dedup",
            "--structure",
            "bloom",
            "--expected",
            "1M",
            "--save",
            "/proc/seen.filter",
        ],
        &urls(10_000),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        o.stdout.is_empty(),
        "lines were written out before the save failed"
    );
    assert!(one_error_line(&o).contains("--save"), "{}", stderr(&o));
}

/// A small finished run in `dir`.
fn small_run(dir: &Path, extra: &[&str]) {
    let o = dedupbench()
        .args([
            "bench",
            "--scales",
            "1e4",
            "--structures",
            "bloom,hashset",
            "--reps",
            "1",
        ])
        .args(["--no-experiments", "--quiet", "--out"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// An edit of a results file's text.
type Edit<'a> = Box<dyn Fn(&str) -> String + 'a>;

fn resume(dir: &Path) -> std::process::Output {
    dedupbench()
        .arg("bench")
        .arg("--resume")
        .arg(dir)
        .output()
        .unwrap()
}

/// Rows 9 and 10: `--resume` takes only records of its own run, once each, under one header whose values
/// a run can have; a blank line is skipped as `report` skips it.
#[test]
fn resume_refuses_records_of_another_run_and_takes_a_blank_line() {
    let base = tempfile::tempdir().unwrap();
    let own = base.path().join("own");
    let other = base.path().join("other");
    small_run(&own, &[]);
    small_run(&other, &["--fpr", "0.1", "--seed", "7"]);
    let text = std::fs::read_to_string(own.join("results.jsonl")).unwrap();
    let other_text = std::fs::read_to_string(other.join("results.jsonl")).unwrap();
    let is_bloom_cell =
        |l: &&str| l.contains("\"record\":\"cell\"") && l.contains("\"structure\":\"bloom\"");
    let foreign_cell = other_text.lines().find(is_bloom_cell).unwrap();
    let header = text.lines().next().unwrap();
    let edit = |f: &dyn Fn(&str) -> String| -> std::process::Output {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("results.jsonl"), f(&text)).unwrap();
        let o = resume(dir.path());
        drop(dir);
        o
    };
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "a cell of another run",
            Box::new(|t: &str| {
                t.lines()
                    .map(|l| if is_bloom_cell(&l) { foreign_cell } else { l })
                    .collect::<Vec<_>>()
                    .join("\n")
                    + "\n"
            }),
            "comes from another run: fpr 0.1, the run's 0.01; seed 7, the run's 42",
        ),
        (
            "a second header",
            Box::new(move |t: &str| format!("{t}{header}\n")),
            "a second run header (the first is on line 1)",
        ),
        (
            "an edited rate",
            Box::new(|t: &str| t.replacen("\"fpr\":0.01", "\"fpr\":1.5", 1)),
            "fpr is 1.5",
        ),
        (
            "a cell twice",
            Box::new(|t: &str| {
                let cell = t.lines().find(is_bloom_cell).unwrap().to_string();
                format!("{t}{cell}\n")
            }),
            "a second record of bloom at n = 10000",
        ),
        (
            "a cell of a structure the run does not measure",
            Box::new(|t: &str| {
                let cell = t.lines().find(is_bloom_cell).unwrap();
                t.replacen(
                    cell,
                    &cell.replace("\"structure\":\"bloom\"", "\"structure\":\"blocked\""),
                    1,
                )
            }),
            "a cell of 'blocked', which the run does not measure",
        ),
    ];
    for (what, f, says) in &cases {
        let o = edit(f.as_ref());
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        let line = one_error_line(&o);
        assert!(line.contains(says), "{what}: {line}");
        if *what != "an edited rate" {
            assert!(
                line.contains("results.jsonl:"),
                "{what} names the file and line: {line}"
            );
        }
    }
    // A blank line in the middle: report and resume both read past it.
    let blank = tempfile::tempdir().unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "");
    std::fs::write(blank.path().join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let o = resume(blank.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = dedupbench()
        .arg("report")
        .arg(blank.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Row 12: a shared filter sized for 0 keys is refused like `dedup`'s and `size`'s (before any server).
#[test]
fn expected_zero_is_refused_on_every_command() {
    for args in [
        vec![
            "shared",
            "--redis",
            "redis://127.0.0.1:1",
            "--name",
            "s1",
            "--expected",
            "0",
            "--insert",
            "0..10",
        ],
        vec!["dedup", "--structure", "bloom", "--expected", "0"],
    ] {
        let o = run_piped(&args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let line = one_error_line(&o);
        assert!(
            line.contains("--expected") && line.contains("[1, 2^47)"),
            "{args:?}: {line}"
        );
    }
}

/// Row 13: a load error says each thing once, and bytes from the file reach the terminal escaped.
#[test]
fn load_errors_are_single_and_printable() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.filter");
    std::fs::write(&bad, b"garbage").unwrap();
    let o = run_piped(&["dedup", "--load", bad.to_str().unwrap()], b"");
    let line = one_error_line(&o);
    assert_eq!(line.matches("bad magic bytes").count(), 1, "{line}");
    assert_eq!(line.matches("bad.filter").count(), 1, "{line}");
    // A saved filter whose hash id holds an escape byte (checksum made valid again).
    let good = dir.path().join("good.filter");
    let o = run_piped(
        &[
            "dedup",
            "--structure",
            "bloom",
            "--expected",
            "100",
            "--save",
            good.to_str().unwrap(),
        ],
        b"x\n",
    );
    assert!(o.status.success());
    let mut bytes = std::fs::read(&good).unwrap();
    let id_len = bytes[12] as usize;
    bytes[14 + id_len] = 0x1b;
    let n = bytes.len();
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..n - 8]);
    bytes[n - 8..].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(&good, &bytes).unwrap();
    let o = run_piped(&["dedup", "--load", good.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !o.stderr.contains(&0x1b),
        "a raw escape byte reached the terminal"
    );
    assert!(one_error_line(&o).contains("\\u{1b}"), "{}", stderr(&o));
}

/// Item 5 beyond the table: a bad `--n` names the flag and quotes the text once.
#[test]
fn a_bad_count_is_said_once() {
    let o = run_piped(&["advise", "--n", "abc"], b"");
    assert_eq!(o.status.code(), Some(2));
    let line = one_error_line(&o);
    assert_eq!(line.matches("--n").count(), 1, "{line}");
    assert_eq!(line.matches("'abc'").count(), 1, "{line}");
}

/// Row 15: lines of spaces and tabs are blank, not keys.
#[test]
fn whitespace_only_lines_are_not_keys() {
    let o = run_piped(
        &["dedup", "--structure", "bloom", "--expected", "100"],
        b"   \n\t\n \t\r\n",
    );
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("dedup: 0 lines read"), "{}", stderr(&o));
}

/// A line of 100 KiB and one with a NUL byte in the middle of a stream: by default every other line
/// passes (each once), the closing line counts the two and names the first; with `--bad-lines fail` the
/// stream stops at the first with exit 2, after passing the lines before it.
#[test]
fn bad_lines_mid_stream_are_skipped_and_counted_by_default() {
    let good = urls(4000);
    let lines: Vec<&[u8]> = good
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let long = [b"https://big.example/?q=".as_slice(), &[b'x'; 100 * 1024]].concat();
    let mut input = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i == 1500 {
            input.extend_from_slice(&long);
            input.push(b'\n');
        }
        if i == 2500 {
            input.extend_from_slice(b"https://nul.example/\0binary\n");
        }
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    // Repeats after the bad lines: dedup still works past them.
    for line in &lines[..300] {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    let args = ["dedup", "--structure", "hashset", "--expected", "5000"];
    let o = run_piped(&args, &input);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let passed: Vec<&[u8]> = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(passed, lines, "every good line once, in order");
    assert!(
        err.contains("4300 lines read")
            && err.contains("4000 passed")
            && err.contains("300 dropped"),
        "{err}"
    );
    assert!(
        err.contains("2 bad lines skipped (the first: line 1501: line is longer than 65536 bytes"),
        "{err}"
    );
    let o = run_piped(&[&args[..], &["--bad-lines", "fail"]].concat(), &input);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("<stdin>:1501: line is longer than 65536 bytes"),
        "{err}"
    );
    assert_eq!(
        o.stdout,
        [lines[..1500].join(&b'\n'), b"\n".to_vec()].concat()
    );
    let o = run_piped(&[&args[..], &["--bad-lines", "pass"]].concat(), &input);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("one of: skip, fail"), "{}", stderr(&o));
}
