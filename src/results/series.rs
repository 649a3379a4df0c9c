//! The identity of a series of the shared-filter sweep: which structure, in which write mode (the
//! client-hashed bitmap has three), and where it ran (in process, on one server, split over a cluster).
//! Written in results files as the text readers have always seen (`redis-bitmap/setbit`,
//! `redis-bloom@cluster`, `bloom (in-process)`), and read back into the type.

use crate::redis::BitmapMode;
use std::fmt;

/// One series of the sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepSeries {
    /// The registry id of the structure.
    pub structure: String,
    /// How bits move, for the structure that has several ways.
    pub mode: Option<BitmapMode>,
    pub placement: SeriesPlacement,
}

/// Where a series ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesPlacement {
    /// In this process: the reference the server points are set against.
    InProcess,
    /// On one server.
    Server,
    /// Split over the masters of a cluster.
    Cluster,
}

const IN_PROCESS_SUFFIX: &str = " (in-process)";
const CLUSTER_SUFFIX: &str = "@cluster";

impl SweepSeries {
    /// `structure` measured in process, as the sweep's reference.
    pub fn in_process(structure: &str) -> SweepSeries {
        SweepSeries {
            structure: structure.to_string(),
            mode: None,
            placement: SeriesPlacement::InProcess,
        }
    }

    /// `structure` (in `mode`, where it has modes) on a server or a cluster.
    pub fn remote(structure: &str, mode: Option<BitmapMode>, cluster: bool) -> SweepSeries {
        SweepSeries {
            structure: structure.to_string(),
            mode,
            placement: if cluster {
                SeriesPlacement::Cluster
            } else {
                SeriesPlacement::Server
            },
        }
    }

    /// The same structure and mode split over a cluster.
    pub fn on_cluster(&self) -> SweepSeries {
        SweepSeries {
            placement: SeriesPlacement::Cluster,
            ..self.clone()
        }
    }

    /// The one-server series a cluster series is measured beside (`None` for any other).
    pub fn one_node(&self) -> Option<SweepSeries> {
        (self.placement == SeriesPlacement::Cluster).then(|| SweepSeries {
            placement: SeriesPlacement::Server,
            ..self.clone()
        })
    }

    /// Reads the written form back (every text is some series).
    pub fn from_text(text: &str) -> Result<SweepSeries, std::convert::Infallible> {
        Ok(SweepSeries::parse(text))
    }

    /// Reads the written form back.
    pub fn parse(text: &str) -> SweepSeries {
        if let Some(structure) = text.strip_suffix(IN_PROCESS_SUFFIX) {
            return SweepSeries::in_process(structure);
        }
        let (rest, cluster) = match text.strip_suffix(CLUSTER_SUFFIX) {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        match rest.split_once('/') {
            Some((structure, mode)) => match BitmapMode::parse(mode) {
                Ok(mode) => SweepSeries::remote(structure, Some(mode), cluster),
                Err(_) => SweepSeries::remote(rest, None, cluster),
            },
            None => SweepSeries::remote(rest, None, cluster),
        }
    }
}

impl fmt::Display for SweepSeries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.structure)?;
        if let Some(mode) = self.mode {
            write!(f, "/{}", mode.name())?;
        }
        match self.placement {
            SeriesPlacement::InProcess => f.write_str(IN_PROCESS_SUFFIX),
            SeriesPlacement::Server => Ok(()),
            SeriesPlacement::Cluster => f.write_str(CLUSTER_SUFFIX),
        }
    }
}

/// A series equals its written form (what a reader of `results.jsonl` compares against).
impl PartialEq<&str> for SweepSeries {
    fn eq(&self, text: &&str) -> bool {
        *self == SweepSeries::parse(text)
    }
}

super::text_serde!(SweepSeries);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_written_form_reads_back_as_itself() {
        for text in [
            "redis-bloom",
            "redis-bloom-scaling",
            "redis-bitmap/bitfield",
            "redis-bitmap/setbit",
            "redis-bitmap/script",
            "redis-bitmap/bitfield@cluster",
            "redis-set-fp@cluster",
            "bloom (in-process)",
            "scalable (in-process)",
        ] {
            assert_eq!(SweepSeries::parse(text).to_string(), text);
        }
        let cluster = SweepSeries::parse("redis-bitmap/setbit@cluster");
        assert_eq!(cluster.mode, Some(BitmapMode::Setbit));
        assert_eq!(
            cluster.one_node().unwrap().to_string(),
            "redis-bitmap/setbit"
        );
        assert_eq!(SweepSeries::parse("redis-bloom").one_node(), None);
    }
}
