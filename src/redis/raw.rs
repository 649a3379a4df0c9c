//! The raw-socket yardstick of the shared-filter sweep: RESP2 over one TCP connection, commands encoded
//! into a buffer before the clock starts, written with one `write` per round trip, replies skimmed (checked
//! for errors, never parsed into values). It measures what the server sustains without any client cost,
//! which is what the `redis` crate's numbers are judged against; no backend uses it.
//!
//! Errors name the server's address and what failed (connect, send, read, or the server's own error
//! reply). A server that answers `-LOADING` (still loading its data set) is waited for at connect time.

use super::url::RedisUrl;
use crate::{Error, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// How long a connect attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one reply may take before the server is declared gone.
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a `LOADING` server is waited for.
const LOADING_WAIT: Duration = Duration::from_secs(120);

/// A reply, for commands read through the general path.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

/// One connection.
pub struct Client {
    addr: String,
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    out: Vec<u8>,
    line: Vec<u8>,
}

impl Client {
    /// Connects, waits out `LOADING`, and selects the database.
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
            out: Vec::with_capacity(1 << 16),
            line: Vec::with_capacity(64),
        };
        client.wait_until_loaded()?;
        if url.db != 0 {
            client.call(&[b"SELECT", url.db.to_string().as_bytes()])?;
        }
        Ok(client)
    }

    /// An error about this server.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Remote {
            addr: self.addr.clone(),
            message: message.into(),
        }
    }

    /// PINGs until the server stops answering `-LOADING` (at most [`LOADING_WAIT`]).
    fn wait_until_loaded(&mut self) -> Result<()> {
        let started = Instant::now();
        loop {
            self.command(&[b"PING"]);
            self.send()?;
            match self.read_reply()? {
                Reply::Error(e) if e.starts_with("LOADING") => {
                    if started.elapsed() > LOADING_WAIT {
                        return Err(self.error(format!(
                            "still loading its data set after {} s",
                            LOADING_WAIT.as_secs()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                Reply::Error(e) => return Err(self.error(format!("PING failed: {e}"))),
                _ => return Ok(()),
            }
        }
    }

    /// Starts a command of `argc` arguments in the output buffer.
    #[inline]
    pub fn begin(&mut self, argc: usize) {
        self.out.push(b'*');
        push_decimal(&mut self.out, argc as u64);
        self.out.extend_from_slice(b"\r\n");
    }

    /// Appends one argument to the command being written.
    #[inline]
    pub fn arg(&mut self, bytes: &[u8]) {
        self.out.push(b'$');
        push_decimal(&mut self.out, bytes.len() as u64);
        self.out.extend_from_slice(b"\r\n");
        self.out.extend_from_slice(bytes);
        self.out.extend_from_slice(b"\r\n");
    }

    /// Writes a whole command into the buffer (not sent yet).
    pub fn command(&mut self, args: &[&[u8]]) {
        self.begin(args.len());
        for a in args {
            self.arg(a);
        }
    }

    /// Sends the buffered commands in one write.
    pub fn send(&mut self) -> Result<()> {
        let result = self.stream.write_all(&self.out);
        self.out.clear();
        result.map_err(|e| self.error(format!("sending a command failed: {e}")))
    }

    /// Sends raw, already encoded bytes (the baseline "raw pipeline").
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.stream
            .write_all(bytes)
            .map_err(|e| self.error(format!("sending a command failed: {e}")))
    }

    /// Sends one command and reads its reply; an error reply becomes an error.
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Reply> {
        self.command(args);
        self.send()?;
        match self.read_reply()? {
            Reply::Error(e) => {
                Err(self.error(format!("{} failed: {e}", String::from_utf8_lossy(args[0]))))
            }
            reply => Ok(reply),
        }
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

    fn line_int(&self) -> Result<i64> {
        std::str::from_utf8(&self.line[1..])
            .ok()
            .and_then(|s| s.parse::<i64>().ok())
            .ok_or_else(|| {
                self.error(format!(
                    "malformed reply line '{}'",
                    String::from_utf8_lossy(&self.line)
                ))
            })
    }

    fn line_error(&self) -> String {
        String::from_utf8_lossy(&self.line[1..]).into_owned()
    }

    /// Reads any reply.
    pub fn read_reply(&mut self) -> Result<Reply> {
        self.read_line()?;
        match self.line[0] {
            b'+' => Ok(Reply::Status(self.line_error())),
            b'-' => Ok(Reply::Error(self.line_error())),
            b':' => Ok(Reply::Int(self.line_int()?)),
            b'$' => {
                let len = self.line_int()?;
                if len < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let mut body = vec![0u8; len as usize + 2];
                self.reader
                    .read_exact(&mut body)
                    .map_err(|e| self.error(format!("reading a reply failed: {e}")))?;
                body.truncate(len as usize);
                Ok(Reply::Bulk(Some(body)))
            }
            b'*' => {
                let len = self.line_int()?;
                if len < 0 {
                    return Ok(Reply::Array(None));
                }
                let mut items = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    items.push(self.read_reply()?);
                }
                Ok(Reply::Array(Some(items)))
            }
            _ => Err(self.error(format!(
                "unexpected reply '{}'",
                String::from_utf8_lossy(&self.line)
            ))),
        }
    }

    /// Reads one reply to a multi-key command (`*N` then N integers) without building anything, failing
    /// on an error reply at the top or inside the array (the raw-pipeline baseline's reader).
    pub fn skim_array(&mut self, what: &str) -> Result<()> {
        self.read_line()?;
        let items = match self.line[0] {
            b'*' => self.line_int()?.max(0),
            b'-' => return Err(self.error(format!("{what} failed: {}", self.line_error()))),
            _ => return Err(self.error(format!("{what}: expected an array"))),
        };
        for _ in 0..items {
            self.read_line()?;
            if self.line[0] == b'-' {
                return Err(self.error(format!("{what} failed: {}", self.line_error())));
            }
        }
        Ok(())
    }

    /// Takes the encoded commands out of the buffer without sending them (to send later, raw).
    pub fn take_encoded(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }
}

/// Writes `value` in decimal at the end of `out`.
#[inline]
fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let len = decimal(value, &mut digits);
    out.extend_from_slice(&digits[20 - len..]);
}

/// `value` in decimal, right-aligned in `digits`; returns the digit count.
#[inline]
fn decimal(mut value: u64, digits: &mut [u8; 20]) -> usize {
    let mut i = 20;
    loop {
        i -= 1;
        digits[i] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return 20 - i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn decimals_are_written_exactly() {
        for v in [0u64, 7, 10, 4096, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }

    /// A fake server that answers `-LOADING` twice before `+PONG`: the client must wait, not fail.
    #[test]
    fn a_loading_server_is_waited_for() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(s.try_clone().unwrap());
            for answer in [
                "-LOADING Redis is loading the dataset in memory\r\n",
                "-LOADING Redis is loading the dataset in memory\r\n",
                "+PONG\r\n",
                ":42\r\n",
            ] {
                // Each command is "*1\r\n$4\r\nPING\r\n" (3 lines) or a 2-argument command (5 lines).
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let argc: usize = line.trim()[1..].parse().unwrap();
                for _ in 0..argc * 2 {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                }
                s.write_all(answer.as_bytes()).unwrap();
            }
        });
        let url = RedisUrl::parse(&format!("redis://127.0.0.1:{port}")).unwrap();
        let mut client = Client::connect(&url).unwrap();
        assert_eq!(client.call(&[b"INCR", b"x"]).unwrap(), Reply::Int(42));
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
