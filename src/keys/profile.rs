//! Generator profiles: the distributions a key set is drawn from, read from small `key = value` files.
//!
//! The built-in profiles live in `datasets/*.profile` and are compiled in, so `--profile crawl-frontier`
//! works from any directory; a path to another file works too. `datasets/README.md` documents each field.
//! A profile's `shape` (a [`Shape`]; `url` when it names none) says what its keys look like; the URL-only
//! fields are refused in a profile of another shape, so a field never silently does nothing.

use super::shape::Shape;
use crate::{Error, Result};
use std::path::Path;

/// Built-in profiles: (name, file text).
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "crawl-frontier",
        include_str!("../../datasets/crawl-frontier.profile"),
    ),
    (
        "short-keys",
        include_str!("../../datasets/short-keys.profile"),
    ),
    ("email", include_str!("../../datasets/email.profile")),
    ("ipv4", include_str!("../../datasets/ipv4.profile")),
    ("ipv6", include_str!("../../datasets/ipv6.profile")),
];

/// The name of the profile used when none is given.
pub const DEFAULT_PROFILE: &str = "crawl-frontier";

/// How the keys of one population are shaped. `hosts` and `host_zipf` apply to every shape but IPv4
/// (hosts, mail domains, IPv6 /64 subnets); the fields after them to URLs only.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    pub name: String,
    /// What the keys look like.
    #[serde(default)]
    pub shape: Shape,
    /// `true` for `scheme://host/...`, `false` for bare `host/...` keys.
    pub with_scheme: bool,
    /// Share of URLs with `https://` (the rest `http://`).
    pub https_fraction: f64,
    /// Share of hosts named `www.<name>`.
    pub www_fraction: f64,
    /// Size of the host population (of mail domains for e-mail, of /64 subnets for IPv6).
    pub hosts: u64,
    /// Zipf exponent of host popularity (1.0: rank r has weight 1/r).
    pub host_zipf: f64,
    /// Weights of 1, 2, … path segments.
    pub path_segment_weights: Vec<f64>,
    /// Share of URLs with a query string.
    pub query_fraction: f64,
    /// Share of URLs whose last segment has an extension (.html, .php, …).
    pub extension_fraction: f64,
    /// Inverse CDF of the total length: (quantile, bytes), quantiles from 0 to 1, both increasing.
    pub length_quantiles: Vec<(f64, f64)>,
}

/// The largest profile file read: the built-in ones are a few hundred bytes.
const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// Fields that shape URLs only.
const URL_ONLY_KEYS: &[&str] = &[
    "scheme",
    "https_fraction",
    "www_fraction",
    "path_segments",
    "query_fraction",
    "extension_fraction",
    "length_quantiles",
];
/// Fields an IPv4 profile takes (its addresses are drawn from the whole public space, not a population).
const IPV4_KEYS: &[&str] = &["name", "shape"];

impl Profile {
    /// Loads a built-in profile by name, or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile> {
        if let Some((_, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
            return Profile::parse(text, Path::new(name_or_path));
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(Error::invalid(
                "--profile",
                format!(
                    "'{name_or_path}' is neither a built-in profile ({}) nor an existing file",
                    names.join(", ")
                ),
            ));
        }
        let bytes = crate::input_file::read_bounded(path, "--profile", MAX_PROFILE_BYTES)?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Format {
            path: path.to_path_buf(),
            line: 0,
            message: "not UTF-8 text; expected a key profile".into(),
        })?;
        Profile::parse(&text, path)
    }

    /// The default profile.
    pub fn default_profile() -> Profile {
        Profile::load(DEFAULT_PROFILE).expect("built-in profile parses")
    }

    /// Parses profile text; `path` names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Profile> {
        let mut profile = Profile {
            name: String::new(),
            shape: Shape::Url,
            with_scheme: true,
            https_fraction: 0.85,
            www_fraction: 0.5,
            hosts: 100_000,
            host_zipf: 1.0,
            path_segment_weights: vec![1.0],
            query_fraction: 0.0,
            extension_fraction: 0.0,
            length_quantiles: Vec::new(),
        };
        // The first line that set each field, for a field the shape does not take.
        let mut given: Vec<(&str, usize)> = Vec::new();
        for (number, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |message: String| Error::Format {
                path: path.to_path_buf(),
                line: number + 1,
                message,
            };
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| bad(format!("expected `key = value`, found '{line}'")))?;
            let (key, value) = (key.trim(), value.trim());
            if !given.iter().any(|(k, _)| *k == key) {
                given.push((key, number + 1));
            }
            let fraction = |v: &str| -> Result<f64> {
                let x: f64 = v
                    .parse()
                    .map_err(|_| bad(format!("{key}: '{v}' is not a number")))?;
                if (0.0..=1.0).contains(&x) {
                    Ok(x)
                } else {
                    Err(bad(format!("{key}: {x} is not a fraction in [0, 1]")))
                }
            };
            match key {
                "name" => profile.name = value.to_string(),
                "shape" => {
                    profile.shape = Shape::parse(value).map_err(|e| bad(format!("shape: {e}")))?
                }
                "scheme" => {
                    profile.with_scheme = match value {
                        "url" => true,
                        "none" => false,
                        other => {
                            return Err(bad(format!("scheme: '{other}' is not `url` or `none`")))
                        }
                    }
                }
                "https_fraction" => profile.https_fraction = fraction(value)?,
                "www_fraction" => profile.www_fraction = fraction(value)?,
                "query_fraction" => profile.query_fraction = fraction(value)?,
                "extension_fraction" => profile.extension_fraction = fraction(value)?,
                "hosts" => {
                    profile.hosts =
                        crate::units::parse_count(value).map_err(|e| bad(format!("hosts: {e}")))?;
                    if profile.hosts == 0 {
                        return Err(bad("hosts: must be at least 1".into()));
                    }
                }
                "host_zipf" => {
                    let x: f64 = value
                        .parse()
                        .map_err(|_| bad(format!("host_zipf: '{value}' is not a number")))?;
                    if !(0.0..=3.0).contains(&x) {
                        return Err(bad(format!("host_zipf: {x} is outside [0, 3]")));
                    }
                    profile.host_zipf = x;
                }
                "path_segments" => {
                    let weights: Result<Vec<f64>> = value
                        .split(',')
                        .map(|w| {
                            w.trim()
                                .parse::<f64>()
                                .ok()
                                .filter(|x| *x >= 0.0)
                                .ok_or_else(|| {
                                    bad(format!("path_segments: '{w}' is not a weight ≥ 0"))
                                })
                        })
                        .collect();
                    let weights = weights?;
                    if weights.is_empty() || weights.len() > 6 || weights.iter().sum::<f64>() <= 0.0
                    {
                        return Err(bad(
                            "path_segments: give 1 to 6 weights, not all zero".into()
                        ));
                    }
                    profile.path_segment_weights = weights;
                }
                "length_quantiles" => {
                    let mut points = Vec::new();
                    for pair in value.split(',') {
                        let (q, len) = pair.split_once(':').ok_or_else(|| {
                            bad(format!("length_quantiles: '{pair}' is not quantile:length"))
                        })?;
                        let q: f64 = q
                            .trim()
                            .parse()
                            .map_err(|_| bad(format!("length_quantiles: bad quantile '{q}'")))?;
                        let len: f64 = len
                            .trim()
                            .parse()
                            .map_err(|_| bad(format!("length_quantiles: bad length '{len}'")))?;
                        points.push((q, len));
                    }
                    let increasing = points
                        .windows(2)
                        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
                    let ends = points.first().map(|p| p.0) == Some(0.0)
                        && points.last().map(|p| p.0) == Some(1.0);
                    if points.len() < 2
                        || !increasing
                        || !ends
                        || points[0].1 < 1.0
                        || points.last().unwrap().1 > 65536.0
                    {
                        return Err(bad(
                            "length_quantiles: need increasing quantiles from 0 to 1 with non-decreasing lengths in [1, 65536]"
                                .into(),
                        ));
                    }
                    profile.length_quantiles = points;
                }
                other => return Err(bad(format!("unknown key '{other}'"))),
            }
        }
        let refused = |key: &str| match profile.shape {
            Shape::Url => false,
            Shape::Ipv4 => !IPV4_KEYS.contains(&key),
            Shape::Email | Shape::Ipv6 => URL_ONLY_KEYS.contains(&key),
        };
        if let Some((key, line)) = given.iter().find(|(key, _)| refused(key)) {
            return Err(Error::Format {
                path: path.to_path_buf(),
                line: *line,
                message: format!(
                    "{key} does not apply to shape = {} (see datasets/README.md for its fields)",
                    profile.shape
                ),
            });
        }
        if profile.shape == Shape::Url && profile.length_quantiles.is_empty() {
            return Err(Error::Format {
                path: path.to_path_buf(),
                line: 0,
                message: "length_quantiles is required".into(),
            });
        }
        Ok(profile)
    }

    /// The target length for a uniform draw `u` in [0, 1).
    #[inline]
    pub fn length_at(&self, u: f64) -> usize {
        let points = &self.length_quantiles;
        let mut j = 1;
        while j < points.len() - 1 && points[j].0 <= u {
            j += 1;
        }
        let (q0, l0) = points[j - 1];
        let (q1, l1) = points[j];
        (l0 + (l1 - l0) * ((u - q0) / (q1 - q0))).round() as usize
    }

    /// The mean of the length distribution as the profile states it (before the generator's minimum length).
    pub fn stated_mean_length(&self) -> f64 {
        self.length_quantiles
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_parse() {
        for (name, _) in BUILTIN {
            let p = Profile::load(name).unwrap();
            assert_eq!(&p.name, name);
        }
        let p = Profile::default_profile();
        assert!(
            (p.stated_mean_length() - 77.0).abs() < 1.5,
            "{}",
            p.stated_mean_length()
        );
        assert_eq!(p.length_at(0.5), 67);
        assert_eq!(p.length_at(0.95), 157);
    }

    /// A profile without `shape` is a URL profile (the files written before shapes parse unchanged); the
    /// other shapes need no length table and refuse the fields they would ignore, naming the line.
    #[test]
    fn shapes_parse_and_refuse_the_fields_they_do_not_take() {
        for (name, shape) in [
            ("crawl-frontier", Shape::Url),
            ("short-keys", Shape::Url),
            ("email", Shape::Email),
            ("ipv4", Shape::Ipv4),
            ("ipv6", Shape::Ipv6),
        ] {
            assert_eq!(Profile::load(name).unwrap().shape, shape, "{name}");
        }
        let p = Path::new("p");
        let email =
            Profile::parse("name = e\nshape = email\nhosts = 500\nhost_zipf = 1.2\n", p).unwrap();
        assert_eq!(
            (email.shape, email.hosts, email.host_zipf),
            (Shape::Email, 500, 1.2)
        );
        let err = Profile::parse("name = e\nshape = mail\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("p:2") && err.contains("url, email, ipv4, ipv6"),
            "{err}"
        );
        let err = Profile::parse("name = e\nscheme = url\nshape = email\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("p:2") && err.contains("scheme does not apply to shape = email"),
            "{err}"
        );
        let err = Profile::parse("shape = ipv4\nhosts = 10\n", p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("p:2") && err.contains("hosts does not apply to shape = ipv4"),
            "{err}"
        );
        assert!(Profile::parse("shape = ipv6\nhost_zipf = 0.5\n", p).is_ok());
        let err = Profile::parse("shape = url\n", p).unwrap_err().to_string();
        assert!(err.contains("length_quantiles is required"), "{err}");
    }

    #[test]
    fn bad_profiles_name_the_line() {
        let err = Profile::parse("name = x\nhosts = 0\n", Path::new("p"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("p:2"), "{err}");
        let err = Profile::parse("colour = red\n", Path::new("p"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown key"), "{err}");
        assert!(Profile::parse("name = x\n", Path::new("p")).is_err());
        assert!(Profile::load("no-such-profile").is_err());
    }
}
