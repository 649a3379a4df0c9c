//! Where a Redis server is: `redis://host[:port][/db]`, `host:port` or `host`, parsed with an error that
//! says what is allowed.

use crate::{Error, Result};

/// Where a server is: `redis://host[:port][/db]` (or `host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisUrl {
    pub host: String,
    pub port: u16,
    pub db: u32,
}

impl RedisUrl {
    /// Parses `redis://host[:port][/db]`, `host:port` or `host` (port 6379, db 0).
    pub fn parse(text: &str) -> Result<RedisUrl> {
        let bad = |why: &str| {
            Error::invalid(
                "--redis",
                format!("'{text}' {why}; expected redis://host[:port][/db], e.g. redis://127.0.0.1:6379"),
            )
        };
        let rest = match text.split_once("://") {
            Some(("redis", rest)) => rest,
            Some((scheme, _)) => {
                return Err(bad(&format!(
                    "has scheme '{scheme}' (only redis:// is supported)"
                )))
            }
            None => text,
        };
        let (authority, db) = match rest.split_once('/') {
            Some((a, "")) => (a, 0),
            Some((a, db)) => (
                a,
                db.parse::<u32>()
                    .map_err(|_| bad("has a database that is not a number"))?,
            ),
            None => (rest, 0),
        };
        if authority.contains('@') {
            return Err(bad("carries credentials, which this client does not send"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            // An IPv6 literal without a port: "[::1]".
            Some((h, _)) if h.starts_with('[') && !h.ends_with(']') => (authority, 6379),
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| bad("has a port that is not in 1..65535"))?,
            ),
            None => (authority, 6379),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || port == 0 {
            return Err(bad("has no host or port 0"));
        }
        Ok(RedisUrl {
            host: host.to_string(),
            port,
            db,
        })
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
