//! One external cell: start the tool's program, write the cell's member lines and then its non-member
//! lines to its stdin (a second thread writes while the program reads), read its one JSON record from
//! stdout. The keys come from the harness's own pipelines, so the tool sees exactly the keys every other
//! row sees. The programs read every key into memory before timing anything, so the pipe's cost is
//! never inside their timings. Each program reports its own peak RSS from `/proc/self/status` (VmHWM):
//! the kernel's `ru_maxrss` of a child keeps the parent's resident set at fork across exec, so it read
//! 1 GiB for a 10⁴-key Python cell after the harness's memory probe.

use crate::keys::{KeyBatch, KeyPipeline};
use crate::kind::Language;
use crate::{Error, Result};
use std::io::{BufWriter, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What a program reports for its cell (the fields of its record).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Report {
    pub structure: String,
    pub n: u64,
    /// Distinct members as the tool sees them (decoded strings).
    pub n_distinct: u64,
    pub n_reported_new: u64,
    pub insert_ns_per_key: f64,
    pub member_query_ns_per_key: f64,
    pub non_member_query_ns_per_key: f64,
    pub n_member_queries: u64,
    pub false_negatives: u64,
    pub n_non_member_queries: u64,
    pub n_false_positives: u64,
    /// The tool's m and k, where it exposes them.
    pub bits: Option<u64>,
    pub hashes: Option<u32>,
    /// The theory at the tool's own m, k and fill.
    pub expected_fpr: f64,
    /// The structure's bytes, measured as `bytes_method` says.
    pub bytes: u64,
    pub bytes_method: String,
    /// Java: the heap allocated creating a second, untimed filter (the JVM's per-thread count), beside the
    /// serialized size.
    #[serde(default)]
    pub heap_delta_bytes: Option<i64>,
    /// Interpreter or VM and its version.
    pub runtime: String,
    /// Library and version.
    pub library: String,
    /// What the timings include (interpreter loop, JIT warm-up).
    pub timing: String,
    /// The process's peak resident set since exec (VmHWM), as it read it.
    pub peak_rss_bytes: Option<i64>,
}

/// A finished cell: the program's report and its wall time.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub report: Report,
    pub wall_s: f64,
}

/// The repository this binary was built from: where the programs and the environment are by default.
const REPOSITORY: &str = env!("CARGO_MANIFEST_DIR");

fn env_or(var: &str, default: impl FnOnce() -> PathBuf) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(default)
}

/// The Python of the peers' environment (`DEDUPBENCH_PYTHON`, else the one `scripts/setup-external.sh`
/// makes).
pub fn python() -> PathBuf {
    env_or("DEDUPBENCH_PYTHON", || {
        PathBuf::from(REPOSITORY).join("target/external-venv/bin/python")
    })
}

/// The folder holding `python/` and `java/` (`DEDUPBENCH_PEERS_DIR`, else the repository's `peers/`).
pub fn peers_dir() -> PathBuf {
    env_or("DEDUPBENCH_PEERS_DIR", || {
        PathBuf::from(REPOSITORY).join("peers")
    })
}

/// Guava's jar (`DEDUPBENCH_GUAVA_JAR`, else Debian's libguava-java).
pub fn guava_jar() -> PathBuf {
    env_or("DEDUPBENCH_GUAVA_JAR", || {
        PathBuf::from("/usr/share/java/guava.jar")
    })
}

/// Why `language`'s tools cannot run now, naming what to do; `None` when they can.
pub fn missing(language: Language) -> Option<String> {
    let setup = "run: bash scripts/setup-external.sh --install";
    match language {
        Language::Python => {
            let python = python();
            let script = peers_dir().join("python/dedup_peers.py");
            if !python.is_file() {
                Some(format!(
                    "no Python environment at {} ({setup})",
                    python.display()
                ))
            } else if !script.is_file() {
                Some(format!("no peer program at {}", script.display()))
            } else {
                None
            }
        }
        Language::Java => {
            // Starting a JVM to ask takes a tenth of a second: asked once per process, not per cell.
            static JAVA_RUNS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            let java_runs = *JAVA_RUNS.get_or_init(|| {
                Command::new("java")
                    .arg("-version")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            });
            if !java_runs {
                Some(format!("no java on PATH ({setup})"))
            } else if !guava_jar().is_file() {
                Some(format!(
                    "no Guava jar at {} ({setup})",
                    guava_jar().display()
                ))
            } else {
                None
            }
        }
    }
}

/// Why the harness killed a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    Interrupted,
    TimeLimit,
}

/// What one cell asks of a program.
pub struct Request<'a> {
    pub id: &'a str,
    pub language: Language,
    /// Members, and non-members queried after them.
    pub n: u64,
    pub queries: u64,
    pub fpr: f64,
    /// Python's hash seed (rbloom hashes with Python's `hash()`), for reproducible runs.
    pub seed: u64,
    /// The JVM's heap limit.
    pub heap_limit_bytes: u64,
}

impl Request<'_> {
    fn command(&self) -> Command {
        let peers = peers_dir();
        let counts = [
            "--n".to_string(),
            self.n.to_string(),
            "--queries".to_string(),
            self.queries.to_string(),
            "--fpr".to_string(),
            self.fpr.to_string(),
        ];
        match self.language {
            Language::Python => {
                let mut c = Command::new(python());
                c.arg(peers.join("python/dedup_peers.py"))
                    .arg(self.id)
                    .args(counts)
                    .env("PYTHONHASHSEED", (self.seed % (1 << 32)).to_string());
                c
            }
            Language::Java => {
                let mut c = Command::new("java");
                c.arg(format!(
                    "-Xmx{}m",
                    self.heap_limit_bytes.div_ceil(1 << 20).max(256)
                ))
                .arg("-XX:+UseSerialGC")
                .arg("-cp")
                .arg(guava_jar())
                .arg(peers.join("java/GuavaPeer.java"))
                .args(counts);
                c
            }
        }
    }
}

fn failed(id: &str, message: impl Into<String>) -> Error {
    Error::External {
        id: id.to_string(),
        message: message.into(),
    }
}

/// Writes every key of `keys` to `out`, one per line.
fn write_keys(keys: &mut KeyPipeline<'_>, out: &mut dyn Write) -> Result<()> {
    let mut batch = KeyBatch::with_capacity(4096, 96);
    while keys.make(&mut batch)? > 0 {
        for i in 0..batch.len() {
            out.write_all(batch.key(i))
                .and_then(|_| out.write_all(b"\n"))
                .map_err(|e| Error::io("<peer stdin>", e))?;
        }
    }
    Ok(())
}

/// Runs one cell: `members` (exactly `request.n` keys) then `non_members` (exactly `request.queries`).
/// The process is killed when `stop` is set (the caller then reports the interruption) or when it runs
/// past `time_limit` (an error saying so).
pub fn run(
    request: &Request<'_>,
    mut members: KeyPipeline<'_>,
    mut non_members: KeyPipeline<'_>,
    stop: &AtomicBool,
    time_limit: Duration,
) -> Result<Outcome> {
    let id = request.id;
    let started = std::time::Instant::now();
    let mut child = request
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a kill reaches whatever it started too (a wrapper script or a shim
        // would otherwise keep the pipes open after its child is gone).
        .process_group(0)
        .spawn()
        .map_err(|e| failed(id, format!("cannot start {:?}: {e}", request.command())))?;
    let stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let (status, ended, written, output, errors) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<()> {
            let mut out = BufWriter::with_capacity(1 << 16, stdin);
            write_keys(&mut members, &mut out)?;
            write_keys(&mut non_members, &mut out)?;
            out.flush().map_err(|e| Error::io("<peer stdin>", e))
        });
        let reader = scope.spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let answer = scope.spawn(move || {
            let mut output = String::new();
            let read = stdout.read_to_string(&mut output);
            (read, output)
        });
        // Wait for the process, killing it on a stop request or past the time limit; its pipes then
        // close, and the threads above end.
        let group = child.id() as libc::pid_t;
        // SAFETY: kill(2) with a negative pid signals the process group the child leads, and nothing else.
        let kill_group = || unsafe {
            libc::kill(-group, libc::SIGKILL);
        };
        let mut ended = None;
        let waited = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => {}
                Err(e) => {
                    kill_group();
                    break Err(e);
                }
            }
            if ended.is_none() {
                if stop.load(Ordering::Relaxed) {
                    ended = Some(Ended::Interrupted);
                } else if started.elapsed() > time_limit {
                    ended = Some(Ended::TimeLimit);
                }
                if ended.is_some() {
                    kill_group();
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let (read, output) = answer.join().unwrap_or_else(|_| (Ok(0), String::new()));
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(failed(id, "writer panicked")));
        let errors = reader.join().unwrap_or_default();
        (
            waited,
            ended,
            written.and(read.map_err(|e| Error::io("<peer stdout>", e))),
            output,
            errors,
        )
    });
    let status = status.map_err(|e| failed(id, format!("cannot wait for the process: {e}")))?;
    let tail: String = errors
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" | ");
    match ended {
        Some(Ended::Interrupted) => {
            return Err(failed(
                id,
                format!(
                    "killed: interrupted after {:.1} s",
                    started.elapsed().as_secs_f64()
                ),
            ))
        }
        Some(Ended::TimeLimit) => {
            return Err(failed(
                id,
                format!(
                    "killed: over its time limit of {:.1} s: {tail}",
                    time_limit.as_secs_f64()
                ),
            ))
        }
        None => {}
    }
    if !status.success() {
        return Err(failed(id, format!("exited with {status}: {tail}")));
    }
    // A program that stopped reading early makes the writer fail: its exit status said why above.
    written.map_err(|e| failed(id, format!("{e}: {tail}")))?;
    let line = output
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let report: Report = serde_json::from_str(line)
        .map_err(|e| failed(id, format!("unreadable record ({e}): {line:.200}")))?;
    if report.structure != id || report.n != request.n {
        return Err(failed(
            id,
            format!("answered for {} at n = {}", report.structure, report.n),
        ));
    }
    Ok(Outcome {
        report,
        wall_s: started.elapsed().as_secs_f64(),
    })
}
