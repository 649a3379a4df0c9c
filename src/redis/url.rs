//! Where a Redis server is: `redis://host[:port][/db]`, `host:port` or `host`, parsed by the `redis` crate,
//! with an error that says what is allowed.

use crate::{Error, Result};

/// Where a server is: `redis://host[:port][/db]` (or `host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisUrl {
    pub host: String,
    pub port: u16,
    pub db: u32,
}

impl RedisUrl {
    /// Parses `redis://host[:port][/db]`, `host:port` or `host` (port 6379, db 0) for `--redis`.
    pub fn parse(text: &str) -> Result<RedisUrl> {
        RedisUrl::parse_for("--redis", text)
    }

    /// Parses a server URL given by the flag `what`, with the `redis` crate's URL parser; an error says
    /// what is allowed.
    pub fn parse_for(what: &str, text: &str) -> Result<RedisUrl> {
        let bad = |why: &str| {
            Error::invalid(
                what,
                format!("'{text}' {why}; expected redis://host[:port][/db], e.g. redis://127.0.0.1:6379"),
            )
        };
        let full = match text.split_once("://") {
            Some(("redis", _)) => text.to_string(),
            Some((scheme, _)) => {
                return Err(bad(&format!(
                    "has scheme '{scheme}' (only redis:// is supported)"
                )))
            }
            None => format!("redis://{text}"),
        };
        let url = redis::parse_redis_url(&full).ok_or_else(|| bad("is not a URL"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("carries credentials, which this tool does not send"));
        }
        let info = redis::IntoConnectionInfo::into_connection_info(url)
            .map_err(|e| bad(&format!("is not a server address ({e})")))?;
        let redis::ConnectionAddr::Tcp(host, port) = info.addr() else {
            return Err(bad("is not a TCP address"));
        };
        let db = u32::try_from(info.redis_settings().db())
            .map_err(|_| bad("has a database that is not a number"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || *port == 0 {
            return Err(bad("has no host or port 0"));
        }
        Ok(RedisUrl {
            host: host.to_string(),
            port: *port,
            db,
        })
    }

    /// The URL as the `redis` crate is given it.
    pub fn connection_text(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("redis://{host}:{}/{}", self.port, self.db)
    }

    /// `host:port`, as errors name it.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl std::fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "redis://{}:{}/{}", self.host, self.port, self.db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_bad_ones_say_what_is_allowed() {
        let u = RedisUrl::parse("redis://127.0.0.1:7001/2").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.db), ("127.0.0.1", 7001, 2));
        assert_eq!(RedisUrl::parse("localhost").unwrap().port, 6379);
        assert_eq!(RedisUrl::parse("h:1").unwrap().port, 1);
        for bad in [
            "http://x:1",
            "redis://x:99999",
            "redis://:1",
            "redis://x:1/db",
            "redis://u:p@x:1",
        ] {
            let e = RedisUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("expected redis://host"), "{bad}: {e}");
        }
    }
}
