//! Facts about the machine and the build, recorded with every result: CPU, cores, RAM, OS, rustc, commit;
//! and the process's resident set size now and at its peak.

use serde::{Deserialize, Serialize};

/// The machine a run happened on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    pub cpu_model: String,
    pub cores: usize,
    pub total_memory_bytes: u64,
    pub available_memory_bytes: u64,
    pub os: String,
    pub rustc: String,
    pub git_commit: String,
    pub transparent_hugepages: String,
}

impl MachineInfo {
    /// Reads the machine now.
    pub fn detect() -> Self {
        let system = sysinfo::System::new().ok().map(|mut system| {
            system.refresh_memory();
            system.refresh_cpu_all();
            system
        });
        let cpu_model = system
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map(|c| c.brand().trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".into());
        MachineInfo {
            cpu_model,
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            total_memory_bytes: system.as_ref().map_or(0, |s| s.total_memory()),
            available_memory_bytes: system.as_ref().map_or(0, |s| s.available_memory()),
            os: format!(
                "{} {}",
                sysinfo::System::name().unwrap_or_else(|_| "unknown".into()),
                sysinfo::System::os_version().unwrap_or_default()
            )
            .trim()
            .to_string(),
            rustc: option_env!("DEDUPBENCH_RUSTC")
                .unwrap_or("unknown")
                .to_string(),
            git_commit: option_env!("DEDUPBENCH_GIT_COMMIT")
                .unwrap_or("unknown")
                .to_string(),
            transparent_hugepages: std::fs::read_to_string(
                "/sys/kernel/mm/transparent_hugepage/enabled",
            )
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into()),
        }
    }
}

/// Memory the process itself may use beyond one structure (batches, allocator slack, the binary).
pub const PROCESS_OVERHEAD_BYTES: u64 = 256 << 20;

/// The bytes one structure may take now: what is available less the process's own overhead, and at most
/// `budget_bytes`. The harness's guard and `dedup` both check against it.
pub fn memory_limit_bytes(budget_bytes: u64) -> u64 {
    available_memory_bytes()
        .saturating_sub(PROCESS_OVERHEAD_BYTES)
        .min(budget_bytes)
}

/// Memory available now, in bytes (sysinfo; 0, so nothing is sized to fit, when the system gives no
/// figure).
pub fn available_memory_bytes() -> u64 {
    sysinfo::System::new().map_or(0, |mut system| {
        system.refresh_memory();
        system.available_memory()
    })
}

/// Resident set size of this process now and its peak (VmHWM), in bytes; zeros if unreadable.
pub fn rss_bytes() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Gives the allocator's free memory back to the kernel (glibc `malloc_trim(0)`, which also releases free
/// pages in the middle of the heap). Without it, the millions of small chunks a dropped hash set freed stay
/// resident, and every later cell's RSS — and the memory guard's "available now" — would carry them.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the kernel; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Resets this process's peak RSS (VmHWM) to its current RSS, so the next reading is the peak of what
/// follows (Linux `clear_refs` value 5; best effort).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", b"5");
}
