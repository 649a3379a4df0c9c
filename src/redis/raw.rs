//! The raw-socket yardstick of the shared-filter sweep: one TCP connection that writes commands encoded
//! before the clock starts and skims their replies (checked for errors, never parsed into values). It
//! measures what the server sustains without any client cost, which is what the `redis` crate's numbers
//! are judged against; no backend uses it. Set-up and clean-up (waiting out `LOADING`, creating and
//! deleting the filter) go through the crate ([`super::Conn`]) before and after; the commands are encoded
//! by the crate too (`Cmd::get_packed_command`). Only the timed write and read are here.
//!
//! Errors name the server's address and what failed (connect, send, read, or the server's own error
//! reply).

use super::url::RedisUrl;
use crate::{Error, Result};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a connect attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one reply may take before the server is declared gone.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One connection.
pub struct Client {
    addr: String,
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    line: Vec<u8>,
}

impl Client {
    /// Connects and selects the database (a server still loading its data is the caller's to wait for,
    /// through [`super::Conn`], before).
    pub fn connect(url: &RedisUrl) -> Result<Client> {
        let addr = url.addr();
        let remote = |message: String| Error::Remote {
            addr: addr.clone(),
            message,
        };
        let targets: Vec<_> = (url.host.as_str(), url.port)
            .to_socket_addrs()
            .map_err(|e| remote(format!("cannot resolve the host: {e}")))?
            .collect();
        if targets.is_empty() {
            return Err(remote("the host resolves to no address".into()));
        }
        // Every address the name resolves to (localhost may give ::1 first while Redis binds 127.0.0.1).
        let mut last = None;
        let mut connected = None;
        for target in &targets {
            match TcpStream::connect_timeout(target, CONNECT_TIMEOUT) {
                Ok(s) => {
                    connected = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = connected.ok_or_else(|| {
            remote(format!(
                "cannot connect: {}",
                last.map(|e| e.to_string()).unwrap_or_default()
            ))
        })?;
        stream
            .set_nodelay(true)
            .and_then(|_| stream.set_read_timeout(Some(READ_TIMEOUT)))
            .and_then(|_| stream.set_write_timeout(Some(READ_TIMEOUT)))
            .map_err(|e| remote(format!("cannot configure the socket: {e}")))?;
        let reader = BufReader::with_capacity(
            1 << 16,
            stream
                .try_clone()
                .map_err(|e| remote(format!("cannot clone the socket: {e}")))?,
        );
        let mut client = Client {
            addr,
            stream,
            reader,
            line: Vec::with_capacity(64),
        };
        if url.db != 0 {
            client.send(&redis::cmd("SELECT").arg(url.db).get_packed_command())?;
            client.skim("SELECT")?;
        }
        Ok(client)
    }

    /// An error about this server.
    fn error(&self, message: impl Into<String>) -> Error {
        Error::Remote {
            addr: self.addr.clone(),
            message: message.into(),
        }
    }

    /// Sends already encoded commands in one write.
    pub fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream
            .write_all(bytes)
            .map_err(|e| self.error(format!("sending a command failed: {e}")))
    }

    /// Reads one reply line (without its CRLF) into `self.line`.
    fn read_line(&mut self) -> Result<()> {
        self.line.clear();
        match self.reader.read_until(b'\n', &mut self.line) {
            Ok(0) => Err(self.error("the server closed the connection")),
            Ok(_) if self.line.len() >= 3 && self.line.ends_with(b"\r\n") => {
                self.line.truncate(self.line.len() - 2);
                Ok(())
            }
            Ok(_) => Err(self.error("the connection ended in the middle of a reply")),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(self.error(format!("no reply within {} s", READ_TIMEOUT.as_secs())))
            }
            Err(e) => Err(self.error(format!("reading a reply failed: {e}"))),
        }
    }

    /// The line after its type byte, as text.
    fn line_text(&self) -> String {
        String::from_utf8_lossy(&self.line[1..]).into_owned()
    }

    /// Reads one reply of `what` without building anything: a status or an integer, or an array of
    /// them (`BF.MADD`'s `*N` then N integers); an error reply, at the top or inside the array, fails.
    pub fn skim(&mut self, what: &str) -> Result<()> {
        self.read_line()?;
        let items = match self.line[0] {
            b'+' | b':' => 0,
            b'*' => std::str::from_utf8(&self.line[1..])
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .ok_or_else(|| {
                    self.error(format!("{what}: malformed reply '{}'", self.line_text()))
                })?
                .max(0),
            b'-' => return Err(self.error(format!("{what} failed: {}", self.line_text()))),
            _ => {
                return Err(self.error(format!(
                    "{what}: unexpected reply '{}'",
                    String::from_utf8_lossy(&self.line)
                )))
            }
        };
        for _ in 0..items {
            self.read_line()?;
            if self.line[0] == b'-' {
                return Err(self.error(format!("{what} failed: {}", self.line_text())));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A fake server that answers SELECT, then a good array, then an array with an error inside it.
    #[test]
    fn skimming_selects_the_database_and_finds_an_error_inside_an_array() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            assert_eq!(line, "*2\r\n", "SELECT comes first");
            for answer in ["+OK\r\n", "*2\r\n:1\r\n:0\r\n", "*2\r\n:1\r\n-ERR full\r\n"] {
                s.write_all(answer.as_bytes()).unwrap();
            }
        });
        let url = RedisUrl::parse(&format!("redis://127.0.0.1:{port}/3")).unwrap();
        let mut client = Client::connect(&url).unwrap();
        client.skim("BF.MADD").unwrap();
        let e = client.skim("BF.MADD").unwrap_err().to_string();
        assert!(e.contains("BF.MADD failed: ERR full"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn a_refused_connection_names_the_address() {
        let refusing = crate::redis::server::RefusingPort::new().unwrap();
        let port = refusing.port();
        let url = RedisUrl::parse(&format!("127.0.0.1:{port}")).unwrap();
        let e = Client::connect(&url).err().unwrap().to_string();
        assert!(
            e.contains(&format!("127.0.0.1:{port}")) && e.contains("cannot connect"),
            "{e}"
        );
    }
}
