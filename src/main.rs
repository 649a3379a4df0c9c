//! The `dedupbench` command: parse, run, map the outcome to an exit status.
//! Status 0: success (a closed output pipe counts as success); 1: the run found a failure (e.g. a false
//! negative); 2: bad input; 130: interrupted.

mod cli;

#[global_allocator]
static COUNTING: dedupbench::measure::CountingAllocator = dedupbench::measure::CountingAllocator;

fn main() {
    std::process::exit(cli::main());
}
