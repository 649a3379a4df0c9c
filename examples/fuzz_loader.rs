//! Fuzzes the saved-filter loader outside the test suite: `cargo run --release --example fuzz_loader --
//! [CASES] [SEED]` (a million cases by default). Exits 1 when a changed file loaded without a fresh
//! checksum; a panic or an abort in the loader ends the run with the case's seed and number on stderr.

fn main() {
    let mut args = std::env::args().skip(1);
    let cases: u64 = args
        .next()
        .map(|a| dedupbench::units::parse_count(&a).expect("CASES: a count such as 1e6"))
        .unwrap_or(1_000_000);
    let seed: u64 = args
        .next()
        .map(|a| a.parse().expect("SEED: an integer"))
        .unwrap_or(1);
    let started = std::time::Instant::now();
    let summary = dedupbench::registry::fuzz_loader(cases, seed, |done| {
        eprint!("\r{done} of {cases} cases");
    })
    .expect("the seed filters are written");
    eprintln!();
    println!(
        "{} mutated files (seed {seed}) in {:.1} s: {} loaded, {} changed files loaded without a fresh checksum",
        summary.cases,
        started.elapsed().as_secs_f64(),
        summary.loaded,
        summary.loaded_unchecked
    );
    std::process::exit(i32::from(summary.loaded_unchecked > 0));
}
