//! Records the rustc version and git commit for the results' machine block, and builds the Boost.Bloom
//! shim of the peer rows.
use std::process::Command;

fn main() {
    boost_shim();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    println!("cargo:rustc-env=DEDUPBENCH_RUSTC={}", version.trim());
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    println!(
        "cargo:rustc-env=DEDUPBENCH_GIT_COMMIT={}{}",
        commit.trim(),
        if dirty { "-dirty" } else { "" }
    );
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}

/// Compiles the Boost.Bloom shim for the peer rows when the `peers` feature is on: the headers come from
/// the boost_bloom crate (and the boost_* crates it pulls in), whose build scripts publish their include
/// folders. Without a C++ compiler the rows are unavailable, with the compiler's reason, instead of the
/// build failing.
fn boost_shim() {
    const SHIM: &str = "src/peers/boost_bloom.cpp";
    println!("cargo:rerun-if-changed={SHIM}");
    println!("cargo::rustc-check-cfg=cfg(dedupbench_boost)");
    if std::env::var_os("CARGO_FEATURE_PEERS").is_none() {
        return;
    }
    let outcome = boost_includes().and_then(|includes| {
        cc::Build::new()
            .cpp(true)
            .file(SHIM)
            .includes(includes)
            .std("c++20")
            .opt_level(3)
            .flag_if_supported("-march=native")
            .warnings(false)
            .cargo_warnings(false)
            .try_compile("dedupbench_boost_bloom")
            .map_err(|e| e.to_string())
    });
    match outcome {
        Ok(()) => println!("cargo:rustc-cfg=dedupbench_boost"),
        Err(reason) => {
            let reason = reason.lines().next().unwrap_or("unknown").to_string();
            println!("cargo:warning=Boost.Bloom rows unavailable: {reason}");
            println!("cargo:rustc-env=DEDUPBENCH_BOOST_UNAVAILABLE=the C++ shim did not build ({reason})");
        }
    }
}

/// The include folders of boost_bloom and the header crates it depends on.
fn boost_includes() -> Result<Vec<std::path::PathBuf>, String> {
    use base64::Engine;
    let encoded = std::env::var("DEP_BOOST_BLOOM_ZANBIL_INCLUDE")
        .map_err(|_| "the boost_bloom crate published no include folders".to_string())?;
    let text = base64::engine::general_purpose::URL_SAFE
        .decode(encoded)
        .map_err(|e| format!("boost_bloom's include metadata: {e}"))?;
    let text = String::from_utf8(text).map_err(|e| e.to_string())?;
    let published: toml::Table = toml::from_str(&text).map_err(|e| e.to_string())?;
    let dirs = published
        .get("include_dirs")
        .and_then(|d| d.as_array())
        .ok_or_else(|| format!("boost_bloom's include metadata has no include_dirs: {text}"))?;
    Ok(dirs
        .iter()
        .filter_map(|d| d.as_str())
        .map(std::path::PathBuf::from)
        .collect())
}
