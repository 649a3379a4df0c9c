//! External peers: the Python and Java tools the articles' readers use, run as separate processes on
//! exactly the harness's keys (sent through a pipe, never generated again), each printing one cell
//! record. Rows: `py-set` (a Python set of the URL strings: the first article's claim on its own terms),
//! `py-article-bloom` (the first article's k-seeded-mmh3 Bloom filter, written fresh), `pybloom-live`
//! and `pybloom-live-scalable` (the library the first article recommends, both growth modes), `rbloom`,
//! `guava` (the second article's pick, Debian's libguava-java 31.1 with `Funnels.stringFunnel(UTF_8)`) and
//! `commons-collections` (unavailable here: its Bloom filters start at 4.5, Debian 12 ships 4.2).
//!
//! The programs live in `peers/python/` and `peers/java/`; `scripts/setup-external.sh` makes their
//! Python environment. [`process`] runs one cell. Theory for each row is computed by its program at the
//! tool's own m and k (from its fills for the scalable one), so a tool that misses the rate it was asked
//! for is named as such.

pub mod process;

use crate::kind::{
    BuildConfig, Capabilities, Descriptor, External, Family, Kind, Language, MemoryModel,
    Placement, RateModel, Role,
};
use crate::membership::Membership;
use crate::theory;
use crate::{Error, Result};

/// How an external row sizes itself, for the models the memory guard and `size` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sizing {
    /// A Python set of str: the str objects (49 bytes of header + the key) and the set's table.
    PythonSet,
    /// m = −n ln p / ln² 2 bits, k = (m/n) ln 2 (Guava, the article's filter, rbloom).
    Bloom,
    /// pybloom-live: k = ⌈log₂ 1/p⌉ slices of ⌈n |ln p| / (k ln² 2)⌉ bits, one bit per key in each.
    Slices,
    /// pybloom-live's scalable filter as shipped: filters of 100, 400, 1600… keys (LARGE_SET_GROWTH, ×4),
    /// the first at rate 0.9p and each next at 0.9× the last.
    GrowingSlices,
    /// Never run here.
    Unavailable,
}

/// One external row.
pub struct ExternalKind {
    descriptor: Descriptor,
    language: Language,
    sizing: Sizing,
}

impl ExternalKind {
    /// A row of `language` sized as `sizing`, run up to `max_keys` (or never, saying why).
    const fn new(
        id: &'static str,
        summary: &'static str,
        language: Language,
        sizing: Sizing,
        max_keys: u64,
        unavailable: Option<&'static str>,
    ) -> Self {
        let (family, exact, growable) = match sizing {
            Sizing::PythonSet => (Family::ExactSet, true, true),
            Sizing::Bloom | Sizing::Slices | Sizing::Unavailable => (Family::Bloom, false, false),
            Sizing::GrowingSlices => (Family::ScalableBloom, false, true),
        };
        let placement = Placement::OtherProcess(External {
            language,
            max_keys,
            unavailable,
        });
        let capabilities = Capabilities {
            exact,
            growable,
            ..Capabilities::FILTER
        };
        let rate_model = if exact {
            RateModel::Exact
        } else {
            RateModel::Stated
        };
        ExternalKind {
            descriptor: Descriptor {
                roles: if exact {
                    &[Role::ExternalExactSet]
                } else {
                    &[]
                },
                ..Descriptor::new(id, summary, family, placement, capabilities, rate_model)
            },
            language,
            sizing,
        }
    }
}

/// pybloom-live's slices for `n` keys at `p`: (k, bits per slice).
fn slices(n: u64, p: f64) -> (u32, u64) {
    let k = (1.0 / p).log2().ceil().max(1.0) as u32;
    let per_slice = (n.max(1) as f64 * p.ln().abs() / (k as f64 * std::f64::consts::LN_2.powi(2)))
        .ceil() as u64;
    (k, per_slice.max(1))
}

/// Bytes of a CPython 3.11 set holding `n` str keys of `mean_bytes` each: 49 + len per str (the compact
/// ASCII object; 41 from 3.12 on) and 16 bytes a slot of the set's table. The table starts at 8 slots; when
/// an insert fills it to 60% it is rebuilt at the smallest power of two above 4× the entries (2× past
/// 50,000), as `set_add_entry` and `set_table_resize` do.
fn python_set_bytes(n: u64, mean_bytes: f64) -> f64 {
    let mut slots = 8u64;
    // The entries at which the table of `slots` slots is rebuilt: fill·5 ≥ mask·3.
    let mut full_at = ((slots - 1) * 3).div_ceil(5);
    while n >= full_at {
        let growth = if full_at > 50_000 { 2 } else { 4 };
        slots = (full_at * growth + 1).next_power_of_two();
        full_at = ((slots - 1) * 3).div_ceil(5);
    }
    n as f64 * (49.0 + mean_bytes) + 16.0 * slots as f64
}

impl ExternalKind {
    fn structure_bytes(&self, config: &BuildConfig) -> f64 {
        let (n, p) = (config.expected_keys, config.fpr);
        match self.sizing {
            Sizing::PythonSet => python_set_bytes(n, config.key_lengths.mean_bytes),
            Sizing::Bloom => theory::bloom_bits(n, p) as f64 / 8.0,
            Sizing::Slices => {
                let (k, per_slice) = slices(n, p);
                (k as u64 * per_slice) as f64 / 8.0
            }
            // Its filters until their capacities hold n, each sized by pybloom-live's own formulas.
            Sizing::GrowingSlices => {
                let (mut capacity, mut rate, mut held, mut bits) = (100u64, p * 0.9, 0u64, 0u64);
                while held < n {
                    let (k, per_slice) = slices(capacity, rate);
                    bits += k as u64 * per_slice;
                    held += capacity;
                    capacity *= 4;
                    rate *= 0.9;
                }
                bits.max(1) as f64 / 8.0
            }
            Sizing::Unavailable => 0.0,
        }
    }
}

impl Kind for ExternalKind {
    fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }
    fn predicted_memory(&self, config: &BuildConfig) -> MemoryModel {
        MemoryModel::flat(self.structure_bytes(config))
    }
    /// The whole process: the runtime, every key read into memory first (members and at most as many
    /// non-members), and the structure (three times over for `py-set`, whose bytes are measured by
    /// building it again under tracemalloc, which adds its own record per allocation).
    fn predicted_peak_bytes(&self, config: &BuildConfig) -> f64 {
        let keys = 2.0 * config.expected_keys as f64;
        let (runtime, per_key) = match self.language {
            Language::Python => (64.0 * 1048576.0, 57.0 + config.key_lengths.mean_bytes),
            Language::Java => (256.0 * 1048576.0, 64.0 + config.key_lengths.mean_bytes),
        };
        let copies = if self.sizing == Sizing::PythonSet {
            3.0
        } else {
            1.0
        };
        runtime + keys * per_key + copies * self.structure_bytes(config)
    }
    fn predicted_fpr(&self, config: &BuildConfig) -> f64 {
        let (n, p) = (config.expected_keys, config.fpr);
        match self.sizing {
            Sizing::PythonSet | Sizing::Unavailable => 0.0,
            Sizing::Bloom => {
                let m = theory::bloom_bits(n, p);
                let k = ((m as f64 / n.max(1) as f64) * std::f64::consts::LN_2)
                    .round()
                    .max(1.0) as u32;
                theory::bloom_fpr(m, k, n)
            }
            Sizing::Slices => {
                let (k, per_slice) = slices(n, p);
                theory::bit_set_probability(per_slice, n as f64).powi(k as i32)
            }
            // Asked for p, its filters' rates sum to at most 0.9p/(1 − 0.9) = 9p; measured 3–5% at 1%.
            Sizing::GrowingSlices => p,
        }
    }
    fn build(&self, _config: &BuildConfig) -> Result<Box<dyn Membership>> {
        Err(Error::invalid(
            "--structure",
            format!(
                "'{}' is a {} tool run as a separate process by bench; it cannot be built here",
                self.descriptor.id,
                self.language.name()
            ),
        ))
    }
}

/// Pure-Python filters cost microseconds per key: they run up to this n.
const PURE_PYTHON_MAX_KEYS: u64 = 1_000_000;
/// The set, rbloom and Guava run up to this n (the 10⁷; the process holds every key as an object).
const NATIVE_MAX_KEYS: u64 = 10_000_000;

/// The Python set's id (the report tests the first article's claim on it).
pub const PY_SET_ID: &str = "py-set";

pub static PY_SET: ExternalKind = ExternalKind::new(
    PY_SET_ID,
    "Python set() of the URL strings (CPython; bytes by tracemalloc)",
    Language::Python,
    Sizing::PythonSet,
    NATIVE_MAX_KEYS,
    None,
);
pub static PY_ARTICLE_BLOOM: ExternalKind = ExternalKind::new(
    "py-article-bloom",
    "the first article's Python Bloom filter: k seeded mmh3 hashes over a bytearray",
    Language::Python,
    Sizing::Bloom,
    PURE_PYTHON_MAX_KEYS,
    None,
);
pub static PYBLOOM_LIVE: ExternalKind = ExternalKind::new(
    "pybloom-live",
    "pybloom-live BloomFilter(capacity=n, error_rate=p) (Python)",
    Language::Python,
    Sizing::Slices,
    PURE_PYTHON_MAX_KEYS,
    None,
);
pub static PYBLOOM_LIVE_SCALABLE: ExternalKind = ExternalKind::new(
    "pybloom-live-scalable",
    "pybloom-live ScalableBloomFilter(error_rate=p), defaults otherwise (Python)",
    Language::Python,
    Sizing::GrowingSlices,
    PURE_PYTHON_MAX_KEYS,
    None,
);
pub static RBLOOM: ExternalKind = ExternalKind::new(
    "rbloom",
    "rbloom Bloom(n, p) (Rust behind a Python API, Python's hash())",
    Language::Python,
    Sizing::Bloom,
    NATIVE_MAX_KEYS,
    None,
);
pub static GUAVA: ExternalKind = ExternalKind::new(
    "guava",
    "Guava 31.1 BloomFilter with Funnels.stringFunnel(UTF_8) (Java)",
    Language::Java,
    Sizing::Bloom,
    NATIVE_MAX_KEYS,
    None,
);
pub static COMMONS_COLLECTIONS: ExternalKind = ExternalKind::new(
    "commons-collections",
    "Apache Commons Collections Bloom filters (Java)",
    Language::Java,
    Sizing::Unavailable,
    0,
    Some(
        "unavailable here: Apache Commons Collections' bloomfilter package exists only from 4.5; Debian 12 ships 4.2 and no other source of Java packages is reachable",
    ),
);

#[cfg(test)]
mod tests {
    use super::*;

    /// pybloom-live 4.0.0's own sizing at 10⁶ keys and 1%: `BloomFilter(1_000_000, 0.01)` has
    /// num_slices 7 and bits_per_slice 1,369,295 (read off the library).
    #[test]
    fn pybloom_slices_follow_its_constructor() {
        assert_eq!(slices(1_000_000, 0.01), (7, 1_369_295));
    }

    /// The set's table as CPython 3.11 grows it (`sys.getsizeof` of a set of that many ints, less its
    /// 200-byte object, over 16): 2¹⁷ slots at 25,000 entries (×4 growth below 50,000, where the smallest
    /// power of two above n/0.6 would be 2¹⁶), 2¹⁸ at 10⁵, 2²¹ at 10⁶.
    #[test]
    fn the_python_set_table_grows_as_cpython_grows_it() {
        let table = |n: u64| (python_set_bytes(n, 0.0) - 49.0 * n as f64) / 16.0;
        assert_eq!(table(25_000), (1u64 << 17) as f64);
        assert_eq!(table(100_000), (1u64 << 18) as f64);
        assert_eq!(table(1_000_000), (1u64 << 21) as f64);
    }

    #[test]
    fn external_kinds_cannot_be_built_in_process() {
        let e = PY_SET.build(&BuildConfig::new(10, 0.01, 0)).err().unwrap();
        assert!(e.to_string().contains("separate process"), "{e}");
    }
}
