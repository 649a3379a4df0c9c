//! How the dedup-cli experiment runs a tool: where it is found, its version, and one run of it as a whole
//! process under GNU `/usr/bin/time` (its peak resident set and CPU seconds), in a process group of its
//! own so that a Ctrl-C meant for the harness does not kill the tool in flight.

use crate::results::DedupTool;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The program that reports a child's peak resident set.
const TIME_PROGRAM: &str = "/usr/bin/time";

/// How one tool is run.
pub(super) struct ToolPlan {
    pub tool: DedupTool,
    pub program: Option<PathBuf>,
    args: Vec<String>,
    /// The command as a user would type it.
    pub display: String,
    pub version: Option<String>,
}

impl ToolPlan {
    /// The plan of `tool`; `dedup` is sized for `lines` keys.
    pub fn new(tool: DedupTool, fpr: f64, seed: u64, lines: u64) -> Self {
        let (program, args, display): (Option<PathBuf>, Vec<String>, String) = match &tool {
            DedupTool::Dedup { structure } => {
                let args = vec![
                    "dedup".into(),
                    "--structure".into(),
                    structure.clone(),
                    "--expected".into(),
                    lines.to_string(),
                    "--fpr".into(),
                    fpr.to_string(),
                    "--seed".into(),
                    seed.to_string(),
                ];
                let display = format!("dedupbench {}", args.join(" "));
                (std::env::current_exe().ok(), args, display)
            }
            DedupTool::Awk => (
                on_path("awk"),
                vec!["!seen[$0]++".into()],
                "awk '!seen[$0]++'".into(),
            ),
            DedupTool::SortUnique => (on_path("sort"), vec!["-u".into()], "sort -u".into()),
            DedupTool::Huniq => (on_path("huniq"), Vec::new(), "huniq".into()),
            DedupTool::Runiq => (
                on_path("runiq"),
                vec!["-f".into(), "quick".into()],
                "runiq -f quick".into(),
            ),
        };
        let version = program.as_deref().and_then(|p| version_of(&tool, p));
        ToolPlan {
            tool,
            program,
            args,
            display,
            version,
        }
    }
}

/// `name` in `PATH`, or where `cargo install` puts programs (`$CARGO_HOME/bin`, `~/.cargo/bin`).
fn on_path(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// The first line of the tool's version text (mawk answers `-W version`, the others `--version`).
fn version_of(tool: &DedupTool, program: &Path) -> Option<String> {
    let flag = match tool {
        DedupTool::Awk => "-W",
        _ => "--version",
    };
    let mut cmd = Command::new(program);
    cmd.arg(flag);
    if matches!(tool, DedupTool::Awk) {
        cmd.arg("version");
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// One run of a tool.
pub(super) struct Run {
    pub wall_s: f64,
    /// User and system seconds, where GNU time measured them.
    pub cpu_s: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
}

/// Runs the tool once on `stream` into `output`, in a process group of its own, or says how it failed.
pub(super) fn run_once(
    plan: &ToolPlan,
    time: Option<&Path>,
    stream: &Path,
    output: &Path,
    dir: &Path,
) -> std::result::Result<Run, String> {
    use std::os::unix::process::CommandExt;
    let program = plan.program.as_deref().ok_or("not installed")?;
    let report = dir.join("time.txt");
    let mut cmd = match time {
        Some(time) => {
            let mut cmd = Command::new(time);
            cmd.arg("-f")
                .arg("%M %U %S")
                .arg("-o")
                .arg(&report)
                .arg(program);
            cmd
        }
        None => Command::new(program),
    };
    let input = std::fs::File::open(stream).map_err(|e| e.to_string())?;
    let sink = std::fs::File::create(output).map_err(|e| e.to_string())?;
    cmd.args(&plan.args)
        .env("LC_ALL", "C")
        .stdin(input)
        .stdout(sink)
        .stderr(Stdio::piped())
        .process_group(0);
    let started = Instant::now();
    let done = cmd
        .spawn()
        .and_then(|c| c.wait_with_output())
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let wall_s = started.elapsed().as_secs_f64();
    if !done.status.success() {
        let stderr = String::from_utf8_lossy(&done.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{} failed ({}): {last}", plan.display, done.status));
    }
    let measured = time.and_then(|_| read_time_report(&report));
    Ok(Run {
        wall_s,
        cpu_s: measured.map(|m| m.1),
        peak_rss_bytes: measured.map(|m| m.0),
    })
}

/// What `/usr/bin/time -f "%M %U %S"` wrote: (peak RSS bytes, user + system seconds).
fn read_time_report(path: &Path) -> Option<(u64, f64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let last = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let mut fields = last.split_whitespace();
    let kib: u64 = fields.next()?.parse().ok()?;
    let user: f64 = fields.next()?.parse().ok()?;
    let system: f64 = fields.next()?.parse().ok()?;
    Some((kib * 1024, user + system))
}

/// GNU time at [`TIME_PROGRAM`] (another `time` takes neither `-f` nor `-o`; GNU time before 1.8 reported
/// `%M` four times too large): `None` leaves the peaks unmeasured.
pub(super) fn gnu_time() -> Option<&'static Path> {
    let out = Command::new(TIME_PROGRAM)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Debian's prints "time (GNU Time) UNKNOWN" (it is 1.9): a version it does not state is taken as new.
    let version = text
        .split("GNU Time)")
        .nth(1)?
        .split_whitespace()
        .next()
        .unwrap_or("");
    let mut parts = version.split('.').map(|p| p.parse::<u32>());
    let old = matches!((parts.next(), parts.next()), (Some(Ok(major)), Some(Ok(minor))) if (major, minor) < (1, 8));
    (!old).then_some(Path::new(TIME_PROGRAM))
}

/// The peak `/usr/bin/time` reports for `true`: what it holds itself when it starts a tool.
pub(super) fn rss_floor(time: &Path, dir: &Path) -> Option<u64> {
    let report = dir.join("time-floor.txt");
    let status = Command::new(time)
        .arg("-f")
        .arg("%M %U %S")
        .arg("-o")
        .arg(&report)
        .arg("true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then_some(())?;
    read_time_report(&report).map(|m| m.0)
}
