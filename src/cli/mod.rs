//! The command line: clap types and one file per command. The only place that uses `anyhow`.

/// `println!` in every command: defined before the commands' modules, it shadows `std`'s there, and
/// writes through [`output::print`], which cannot panic (a closed pipe ends the output, not the run).
macro_rules! println {
    () => {
        $crate::cli::output::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` in every command, through [`output::print`] as [`println!`] is.
#[allow(unused_macros)]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::cli::output::print(format_args!($($arg)*))
    };
}

mod advise;
mod advise_tables;
mod bench;
mod dedup;
mod gen;
mod output;
mod progress;
mod redis_target;
mod report;
mod shared;
mod size;
mod summary;
mod table;

use clap::{Parser, Subcommand};

/// Exit status for a run that completed but found a failure worth a non-zero exit.
pub const EXIT_FAILED: i32 = 1;
/// Exit status for bad input.
pub const EXIT_USAGE: i32 = 2;

/// Measures when an exact set of seen URLs stops being the right tool, and which probabilistic structure,
/// sized how, should replace it.
#[derive(Parser, Debug)]
#[command(name = "dedupbench", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Size every structure for n keys at a target rate (theory and models, no run).
    Size(size::SizeArgs),
    /// Write generated URLs, one per line (members, non-members, or a stream with repeats).
    Gen(gen::GenArgs),
    /// Run the benchmark suite and write results and a report.
    Bench(bench::BenchArgs),
    /// Recommend a structure, its size and the regime thresholds for a workload.
    Advise(advise::AdviseArgs),
    /// Pass through only the lines not seen before (stdin to stdout), by the chosen structure.
    Dedup(dedup::DedupArgs),
    /// Regenerate the report of a results folder without running anything.
    Report(report::ReportArgs),
    /// One worker of a filter shared through Redis: insert, check or probe a range of generated keys.
    Shared(shared::SharedArgs),
}

/// A failure that is not the user's input: the run itself found something wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RunFailed(pub String);

/// Runs the command line and returns the process exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            eprintln!("{}", usage_error_line(&e.to_string()));
            return EXIT_USAGE;
        }
        Err(e) => {
            let _ = e.print();
            return 0;
        }
    };
    let result = match cli.command {
        Command::Size(args) => size::run(args),
        Command::Gen(args) => gen::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Report(args) => report::run(args),
        Command::Advise(args) => advise::run(args),
        Command::Dedup(args) => dedup::run(args),
        Command::Shared(args) => shared::run(args),
    };
    // Output that could not be written fails a run that otherwise succeeded, unless its reader left
    // (a closed pipe, below); a run that failed keeps its own status.
    let result = result.and_then(|code| match output::finish() {
        Ok(()) => Ok(code),
        Err(e) if code == 0 => {
            Err(anyhow::Error::new(e).context("cannot write to standard output"))
        }
        Err(e) => {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("warning: cannot write to standard output: {e}");
            }
            Ok(code)
        }
    });
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            if e.downcast_ref::<RunFailed>().is_some() {
                EXIT_FAILED
            } else {
                EXIT_USAGE
            }
        }
    }
}

/// clap's error on one line: what was wrong and what is allowed. clap's first line says both, except
/// where it ends in a colon and the lines under it say what (the required arguments not provided): those
/// are joined to it, as are its tips (the flag meant by a misspelt or renamed one).
fn usage_error_line(text: &str) -> String {
    let mut lines = text.lines();
    let mut line = lines
        .next()
        .unwrap_or("error: invalid arguments")
        .trim_end()
        .to_string();
    let rest: Vec<&str> = lines.collect();
    if line.ends_with(':') {
        let listed: Vec<&str> = rest
            .iter()
            .take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty())
            .map(|l| l.trim())
            .collect();
        if !listed.is_empty() {
            line.push(' ');
            line.push_str(&listed.join(", "));
        }
    }
    for tip in rest
        .iter()
        .map(|l| l.trim())
        .filter(|l| l.starts_with("tip:"))
    {
        line.push_str("; ");
        line.push_str(tip);
    }
    line
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || matches!(cause.downcast_ref::<dedupbench::Error>(),
                Some(dedupbench::Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error and its causes on one line, each said once: an error whose message already holds its cause's
/// (this crate's `Io` and `SavedFileAt` name the path and then the cause) is not followed by it again.
/// Control characters (from a file's bytes, wherever they came in) are escaped.
fn one_line(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    dedupbench::error::printable(&text)
}
