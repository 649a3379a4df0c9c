//! The fleet: M machines crawling one frontier. Each design is priced per machine and per URL:
//! - exact 64-bit fingerprints on each machine, the URLs partitioned so that each machine sees its own
//!   share (by host, as a polite crawler assigns hosts, or by URL hash);
//! - the in-process filter the advice picks for that share, on each machine;
//! - one shared filter on Redis (one node or a cluster, [`crate::analysis::nodes`]), and exact
//!   fingerprints shared the same way (`redis-set-fp`'s 128-bit ones).
//!
//! Pages lost are summed machine by machine: each filter, sized for the fullest share, fills from empty
//! to its own share at its model's rate after each fill (RedisBloom's fixed filter, sized by the same
//! formula, at `bloom`'s model).
//!
//! A partition by host is as even as the hosts are: the machine that holds the largest hosts sees more
//! than n/M. Its skew is measured on the key profile's host population (a sample of
//! [`SKEW_SAMPLE_URLS`] generated URLs, each host hashed to a machine); the structures on every machine
//! are sized for the fullest one. A partition by URL hash is even up to the binomial spread. Without a
//! partition a machine can meet any URL, so a structure of its own cannot tell it one another machine
//! crawled: only a shared structure deduplicates across machines.
//!
//! Round trips: a structure in the worker's process costs none; a shared one costs one per batch of
//! URLs sent together (`dedup --batch`). The per-node insert rate is the run's measured one
//! (`bench --suite redis`), else the figure docs/shared-filters.md states, labelled as stated.

use super::rates::{lost_over_fill, price_rates, rate_after_fill, PickReason, RateAsk};
use super::Demand;
use crate::analysis::nodes::{node_plan, USABLE_SHARE};
use crate::analysis::regimes::{advice_config, advised_kinds, Sizing};
use crate::keys::{Profile, UrlGenerator};
use crate::kind::{Family, Role};
use crate::registry::{find, role_id};
use crate::results::Results;
use crate::{Error, Result};
use serde::Serialize;

/// URLs generated to measure a host partition's skew.
pub const SKEW_SAMPLE_URLS: u64 = 200_000;
/// URLs per round trip the shared designs are priced at (`dedup --batch`'s default).
pub const BATCH_URLS: u64 = 1024;
/// How the URLs are split between machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Partition {
    /// Each host to one machine (a hash of the host).
    Host,
    /// Each URL to one machine (a hash of the URL).
    Url,
    /// Any machine may meet any URL.
    None,
}

impl Partition {
    /// The partition in words, as a fleet's heading says it.
    pub fn words(self) -> &'static str {
        match self {
            Partition::Host => "partitioned by host",
            Partition::Url => "partitioned by URL hash",
            Partition::None => "not partitioned",
        }
    }
}

/// What the fleet is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fleet {
    pub machines: u64,
    pub machine_memory_bytes: u64,
    pub partition: Partition,
}

/// How uneven the partition is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Skew {
    /// URLs the fullest machine sees over n/M.
    pub fullest_over_mean: f64,
    /// Each machine's share of the n URLs (summing to 1).
    #[serde(skip)]
    pub shares: Vec<f64>,
    /// Where that comes from.
    pub source: String,
}

/// Where a design keeps its structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Place {
    EachMachine,
    SharedRedis,
}

/// One design, priced.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetOption {
    pub id: &'static str,
    pub label: String,
    pub place: Place,
    /// Keys the structure on one machine (or the shared one) holds.
    pub keys: u64,
    /// Bytes on each machine (0 for a shared design) and on each Redis node (0 for a local one).
    pub bytes_per_machine: u64,
    pub bytes_per_node: u64,
    /// Redis masters a shared design needs for its memory (0 for a local one).
    pub nodes: u64,
    pub round_trips_per_url: f64,
    /// New URLs never crawled over the whole crawl (all machines, each filling from empty with its mean
    /// share n/M), and whether that is an upper bound (no model of its rate while it fills: its rate at
    /// full size charged throughout).
    pub pages_lost: f64,
    pub pages_lost_bound: bool,
    /// Whether it deduplicates across machines at all.
    pub deduplicates_across_machines: bool,
    pub fits: bool,
    /// Inserts per second one node takes and where that figure comes from (shared designs).
    pub node_inserts_per_sec: Option<f64>,
    pub node_rate_source: Option<String>,
    /// Why it fits or does not, in words.
    pub note: String,
}

impl FleetOption {
    /// Whether it answers the fleet: it fits and deduplicates across machines.
    pub fn usable(&self) -> bool {
        self.fits && self.deduplicates_across_machines
    }

    /// The design in words: "fingerprint on each machine", "redis-bloom shared on Redis (1 node)".
    pub fn design(&self) -> String {
        match self.place {
            Place::EachMachine => format!("{} on each machine", self.label),
            Place::SharedRedis => format!(
                "{} shared on Redis ({} node{})",
                self.label,
                self.nodes,
                if self.nodes == 1 { "" } else { "s" }
            ),
        }
    }

    /// Round trips per batch of [`BATCH_URLS`]: one to each master a batch touches, so a whole number.
    pub fn round_trips_per_batch(&self) -> u64 {
        (self.round_trips_per_url * BATCH_URLS as f64).round() as u64
    }
}

/// The fleet's answer: the designs, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetPlan {
    pub fleet: Fleet,
    pub n: u64,
    pub fpr: f64,
    /// Why that rate: asked, or the pick for one machine's share in its memory.
    pub rate_reason: PickReason,
    pub skew: Skew,
    pub options: Vec<FleetOption>,
}

/// The host partition's skew over `machines`, measured on `profile`'s hosts.
pub fn host_skew(machines: u64, profile: &Profile) -> Skew {
    let generator = UrlGenerator::new(profile.clone(), 0);
    let mut load = vec![0u64; machines as usize];
    let mut buf = Vec::new();
    for i in 0..SKEW_SAMPLE_URLS {
        generator.member(i, &mut buf);
        let rest = match buf.windows(3).position(|w| w == b"://") {
            Some(at) => &buf[at + 3..],
            None => &buf[..],
        };
        let host = rest.split(|b| *b == b'/').next().unwrap_or(rest);
        let machine = xxhash_rust::xxh3::xxh3_64(host) % machines;
        load[machine as usize] += 1;
    }
    let fullest = load.iter().copied().max().unwrap_or(0) as f64;
    Skew {
        fullest_over_mean: fullest * machines as f64 / SKEW_SAMPLE_URLS as f64,
        shares: load
            .iter()
            .map(|l| *l as f64 / SKEW_SAMPLE_URLS as f64)
            .collect(),
        source: format!(
            "measured: {} URLs of the '{}' key profile ({} hosts, Zipf {}) hashed by host to {machines} machines, one assignment (the machine that gets the largest hosts decides it); your own host mix decides yours",
            crate::units::human_count(SKEW_SAMPLE_URLS as f64),
            profile.name,
            crate::units::human_count(profile.hosts as f64),
            profile.host_zipf
        ),
    }
}

/// Prices every design for `demand` (its n and rate) on `fleet`, shared designs on nodes of
/// `node_memory_bytes`.
pub fn plan(
    demand: &Demand,
    fleet: &Fleet,
    ask: RateAsk,
    node_memory_bytes: u64,
    run: Option<(&Results, &str)>,
) -> Result<FleetPlan> {
    if fleet.machines == 0 {
        return Err(Error::invalid("--machines", "must be at least 1"));
    }
    if fleet.machine_memory_bytes == 0 {
        return Err(Error::invalid(
            "--machine-memory",
            "must be more than 0 bytes",
        ));
    }
    let n = demand.n_high;
    let m = fleet.machines;
    let skew = match fleet.partition {
        Partition::Host => host_skew(m, &Profile::default_profile()),
        Partition::Url => {
            let per = n as f64 / m as f64;
            Skew {
                fullest_over_mean: 1.0 + (2.0 * (m as f64).ln() / per.max(1.0)).sqrt(),
                shares: vec![1.0 / m as f64; m as usize],
                source: "binomial: n/M each, the fullest about √(2 ln M · M/n) above".into(),
            }
        }
        Partition::None => Skew {
            fullest_over_mean: m as f64,
            shares: vec![1.0 / m as f64; m as usize],
            source: "no partition: any machine may meet any of the n URLs".into(),
        },
    };
    let partitioned = fleet.partition != Partition::None;
    let per_machine = ((n as f64 / m as f64) * skew.fullest_over_mean)
        .ceil()
        .min(n as f64) as u64;
    // Every machine is sized for the fullest share; each fills with its own. Σ over the machines of
    // what each loses filling from empty to its share, at `rate_after(x)` after x keys.
    let fleet_lost = |rate_after: &dyn Fn(u64) -> Option<f64>| -> Option<f64> {
        skew.shares
            .iter()
            .map(|share| lost_over_fill(n as f64 * share, rate_after))
            .sum()
    };
    // The fleet's rate: the one asked, else the pick for one machine's share in its own memory.
    let share_demand = Demand {
        n_low: per_machine,
        n_high: per_machine,
        memory_bytes: fleet.machine_memory_bytes,
        shared: false,
        ..demand.clone()
    };
    let prices = price_rates(&share_demand, ask, None, run)?;
    let p = prices.picked_fpr;
    let sizing = Sizing {
        run,
        fpr: p,
        budget_bytes: fleet.machine_memory_bytes as f64,
    };
    let mut options = Vec::new();

    // Exact fingerprints on each machine.
    let exact_id = role_id(Role::ExactFingerprints);
    if let Some((kind, advisor)) = advised_kinds().find(|(k, _)| k.id() == exact_id) {
        let bytes = sizing.bytes_of(kind, &advisor, per_machine);
        let lost = fleet_lost(&rate_after_fill(kind, per_machine, p)).unwrap_or_default();
        options.push(local(
            kind.id(),
            kind.descriptor().label(),
            per_machine,
            bytes,
            (lost, false),
            partitioned,
            fleet,
            format!(
                "exact: {:.1} bytes per URL at {} URLs (a hash table's bytes per key step up each time its table doubles)",
                bytes / per_machine.max(1) as f64,
                crate::units::human_count(per_machine as f64)
            ),
        ));
    }
    // The advised filter for one machine's share.
    let share = Demand {
        fpr: p,
        ..share_demand
    };
    let advice = super::advise(&share, run.map(|(r, l)| (r, l.to_string())))?;
    let filter = advice
        .recommended
        .iter()
        .chain(&advice.rejected)
        .filter(|c| c.expected_fpr <= p * 1.01)
        .find_map(|c| {
            find(c.id)
                .ok()
                .filter(|k| !k.exact() && !k.descriptor().roles.contains(&Role::ExactFingerprints))
                .map(|k| (k, c))
        });
    if let Some((kind, c)) = filter {
        let modelled = fleet_lost(&rate_after_fill(kind, per_machine, p));
        let lost = modelled.unwrap_or(c.expected_fpr * n as f64);
        options.push(local(
            kind.id(),
            c.label.clone(),
            per_machine,
            c.bytes,
            (lost, modelled.is_none()),
            partitioned,
            fleet,
            format!(
                "rate {} at its full share",
                crate::units::human_rate(c.expected_fpr)
            ),
        ));
    }
    // Shared designs on Redis.
    let nodes = node_plan(n, p, node_memory_bytes, None, run);
    let node_rate = nodes.node_inserts_per_sec;
    let node_rate_source = nodes.node_throughput_source.clone();
    // The shared Bloom filter, and the shared set of fingerprints (an exact set on the server that errs
    // on a fingerprint collision).
    let fingerprints = |k: &dyn crate::kind::Kind| k.descriptor().family == Family::ExactSet;
    let shared_fingerprints = crate::analysis::regimes::shared_kinds()
        .map(|(k, _)| k)
        .filter(|k| !k.exact() && fingerprints(*k));
    let shared: Vec<&'static dyn crate::kind::Kind> = find(role_id(Role::SharedBloom))
        .into_iter()
        .chain(shared_fingerprints)
        .collect();
    for kind in shared {
        let config = advice_config(kind, n, p);
        let bytes = kind.predicted_memory(&config).footprint_bytes;
        let usable = node_memory_bytes as f64 * USABLE_SHARE;
        let node_count = (bytes / usable.max(1.0)).ceil().max(1.0) as u64;
        let (lost, bound) = match lost_over_fill(n as f64, rate_after_fill(kind, n, p)) {
            Some(lost) => (lost, false),
            None => (kind.predicted_fpr(&config) * n as f64, true),
        };
        let needs = crate::analysis::regimes::server_needs(kind).unwrap_or_default();
        options.push(FleetOption {
            id: kind.id(),
            label: kind.descriptor().label(),
            place: Place::SharedRedis,
            keys: n,
            bytes_per_machine: 0,
            bytes_per_node: (bytes / node_count as f64).round() as u64,
            nodes: node_count,
            // A batch is split by shard: one round trip to each master it touches.
            round_trips_per_url: node_count.min(BATCH_URLS) as f64 / BATCH_URLS as f64,
            pages_lost: lost,
            pages_lost_bound: bound,
            deduplicates_across_machines: true,
            fits: true,
            node_inserts_per_sec: node_rate,
            node_rate_source: node_rate_source.clone(),
            note: format!(
                "{} of {} on {}; {needs}",
                crate::units::human_bytes(bytes),
                if kind.exact() || fingerprints(kind) {
                    "exact fingerprints"
                } else {
                    "filter"
                },
                if node_count == 1 {
                    "one node".to_string()
                } else {
                    format!("a cluster of {node_count} masters")
                }
            ),
        });
    }
    // Best first: what deduplicates across machines and fits, losing least, then with fewer round
    // trips and fewer bytes.
    options.sort_by(|a, b| {
        (!a.usable())
            .cmp(&!b.usable())
            .then((a.pages_lost >= 1.0).cmp(&(b.pages_lost >= 1.0)))
            .then(a.round_trips_per_url.total_cmp(&b.round_trips_per_url))
            .then(a.pages_lost.total_cmp(&b.pages_lost))
    });
    Ok(FleetPlan {
        fleet: fleet.clone(),
        n,
        fpr: p,
        rate_reason: prices.reason,
        skew,
        options,
    })
}

/// A design that lives in each machine's worker.
#[allow(clippy::too_many_arguments)]
fn local(
    id: &'static str,
    label: String,
    keys: u64,
    bytes: f64,
    (pages_lost, pages_lost_bound): (f64, bool),
    partitioned: bool,
    fleet: &Fleet,
    note: String,
) -> FleetOption {
    let fits = bytes <= fleet.machine_memory_bytes as f64;
    let mut note = note;
    if !fits {
        note.push_str(&format!(
            "; needs {} of a machine's {}",
            crate::units::human_bytes(bytes),
            crate::units::human_bytes(fleet.machine_memory_bytes as f64)
        ));
    }
    if !partitioned {
        note.push_str("; without a partition it cannot tell a URL another machine crawled: every URL found by k machines is crawled k times");
    }
    FleetOption {
        id,
        label,
        place: Place::EachMachine,
        keys,
        bytes_per_machine: bytes.round() as u64,
        bytes_per_node: 0,
        nodes: 0,
        round_trips_per_url: 0.0,
        pages_lost,
        pages_lost_bound,
        deduplicates_across_machines: partitioned,
        fits,
        node_inserts_per_sec: None,
        node_rate_source: None,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Workload;

    fn lead(partition: Partition) -> FleetPlan {
        let demand = Demand::new(2_000_000_000, 0.01, 16 << 30, Workload::Crawl);
        let fleet = Fleet {
            machines: 20,
            machine_memory_bytes: 16 << 30,
            partition,
        };
        plan(
            &demand,
            &fleet,
            RateAsk::Fixed { fpr: 0.01 },
            64 << 30,
            None,
        )
        .unwrap()
    }

    #[test]
    fn twenty_machines_partitioned_by_host_hold_exact_fingerprints_and_lose_nothing() {
        let plan = lead(Partition::Host);
        let best = &plan.options[0];
        assert_eq!(best.id, "fingerprint", "{plan:#?}");
        assert!(best.fits && best.pages_lost < 1.0, "{best:?}");
        // The default profile's hosts are Zipf 1 over 100k: the biggest host alone is ≈ 8% of all URLs,
        // so the fullest of 20 machines sees well over n/20 (and under 4×).
        assert!(
            plan.skew.fullest_over_mean > 1.5 && plan.skew.fullest_over_mean < 4.0,
            "{:?}",
            plan.skew
        );
        assert!(best.keys as f64 > 1.5 * 1e8, "{best:?}");
        // A shared design costs one round trip per batch; a local one none.
        let shared = plan.options.iter().find(|o| o.id == "redis-bloom").unwrap();
        assert_eq!(shared.round_trips_per_url, 1.0 / 1024.0);
        assert_eq!(best.round_trips_per_url, 0.0);
        assert!(shared
            .node_rate_source
            .as_deref()
            .unwrap()
            .starts_with("stated"));
    }

    #[test]
    fn without_a_partition_only_a_shared_design_deduplicates() {
        let plan = lead(Partition::None);
        assert_eq!(plan.options[0].place, Place::SharedRedis, "{plan:#?}");
        assert!(plan
            .options
            .iter()
            .filter(|o| o.place == Place::EachMachine)
            .all(|o| !o.deduplicates_across_machines));
    }

    /// Each machine fills to its own share: a Bloom filter's loss grows faster than its keys, so the
    /// skewed host partition loses more than the even URL partition of the same filters, and more than
    /// M filters each filled to n/M.
    #[test]
    fn pages_lost_are_summed_over_each_machines_own_share() {
        let by_host = lead(Partition::Host);
        let by_url = lead(Partition::Url);
        assert!(by_url.skew.fullest_over_mean < 1.01, "{:?}", by_url.skew);
        let shares: f64 = by_host.skew.shares.iter().sum();
        assert!((shares - 1.0).abs() < 1e-9, "{shares}");
        let bloom = |plan: &FleetPlan| {
            plan.options
                .iter()
                .find(|o| o.place == Place::EachMachine && o.id != "fingerprint")
                .cloned()
                .unwrap()
        };
        let (host, url) = (bloom(&by_host), bloom(&by_url));
        assert!(!host.pages_lost_bound, "{host:?}");
        // Sized for the fullest share (host: ≈ 1.95× n/M, url: ≈ n/M), both at 1%.
        let kind = find(host.id).unwrap();
        let config = advice_config(kind, host.keys, 0.01);
        let even: f64 =
            20.0 * lost_over_fill(1e8, |x| kind.predicted_fpr_after(&config, x)).unwrap();
        assert!(
            host.pages_lost > 1.2 * even,
            "{} vs {even}",
            host.pages_lost
        );
        let fullest = by_host.skew.shares.iter().cloned().fold(0.0, f64::max);
        let alone =
            lost_over_fill(2e9 * fullest, |x| kind.predicted_fpr_after(&config, x)).unwrap();
        assert!(host.pages_lost > alone, "{} vs {alone}", host.pages_lost);
        assert!(url.pages_lost > 1e6, "{url:?}");
        // 128-bit fingerprints shared on Redis lose nothing worth a page.
        let shared_exact = by_host
            .options
            .iter()
            .find(|o| o.id == "redis-set-fp")
            .unwrap();
        assert!(shared_exact.pages_lost < 1e-9, "{shared_exact:?}");
    }
}
