//! The three contenders as structures: each answers "was it new?" per arrival and forgets what is older
//! than the window (the windowed filter by rotating generations, the counting filter by deleting from its
//! log, the exact map by evicting from its queue), with the byte model of each.

use super::Contender;
use crate::hash::KeyHash;
use crate::kind::{BuildConfig, Role};
use crate::membership::{Membership, Removable};
use crate::registry::role;
use crate::structures::counting::CountingBloom;
use crate::structures::windowed::{WindowPlan, Windowed};
use crate::Result;
use hashbrown::HashTable;
use std::collections::VecDeque;

/// One contender's state.
/// Each contender held as its concrete type, so that no arrival pays a dynamic call the exact map does not.
pub(super) enum State {
    Windowed(Windowed),
    CountingWithLog {
        filter: CountingBloom,
        /// The hashes admitted, oldest first: the last W + 1 admissions (ages 0..=W).
        log: VecDeque<KeyHash>,
    },
    ExactMap {
        set: HashTable<u64>,
        /// The fingerprints admitted, oldest first, as the log.
        queue: VecDeque<u64>,
    },
}

impl State {
    /// The contender's state for a window of `config.window_keys` keys.
    pub(super) fn new(contender: Contender, config: &BuildConfig) -> Result<State> {
        let window_keys = config.window_keys.unwrap_or(config.expected_keys);
        Ok(match contender {
            Contender::Windowed => {
                State::Windowed(Windowed::new(WindowPlan::of(config), config.hasher()))
            }
            Contender::CountingWithLog => State::CountingWithLog {
                filter: CountingBloom::for_config(config)?,
                log: VecDeque::with_capacity(window_entries(window_keys) + 1),
            },
            Contender::ExactMap => State::ExactMap {
                set: HashTable::with_capacity(window_entries(window_keys) + 1),
                queue: VecDeque::with_capacity(window_entries(window_keys) + 1),
            },
        })
    }

    /// Answers "was it new?" for a key at admission count `admitted` (admitting it if so). An entry of
    /// age more than W admissions is expired: with one entry per admission, that is every entry beyond
    /// the newest W + 1.
    pub(super) fn offer(&mut self, key: &[u8], hash: KeyHash, window_keys: u64) -> bool {
        let keep = window_entries(window_keys);
        match self {
            State::Windowed(s) => s.insert_hashed(key, hash),
            State::CountingWithLog { filter, log } => {
                while log.len() > keep {
                    if let Some(h) = log.pop_front() {
                        filter.remove_hashed(&[], h);
                    }
                }
                if !filter.insert_if_new(key, hash) {
                    return false;
                }
                log.push_back(hash);
                true
            }
            State::ExactMap { set, queue } => {
                while queue.len() > keep {
                    if let Some(old) = queue.pop_front() {
                        if let Ok(entry) = set.find_entry(old, |v| *v == old) {
                            entry.remove();
                        }
                    }
                }
                let fingerprint = hash.h1;
                match set.entry(fingerprint, |v| *v == fingerprint, |v| *v) {
                    hashbrown::hash_table::Entry::Occupied(_) => return false,
                    hashbrown::hash_table::Entry::Vacant(slot) => {
                        slot.insert(fingerprint);
                    }
                }
                queue.push_back(fingerprint);
                true
            }
        }
    }

    /// Bytes held: arrays, the log's and queue's capacity, the table's hashbrown layout.
    pub(super) fn bytes(&self) -> u64 {
        match self {
            State::Windowed(s) => s.bytes_held(),
            State::CountingWithLog { filter, log } => {
                filter.bytes_held() + (log.capacity() * std::mem::size_of::<KeyHash>()) as u64
            }
            State::ExactMap { set, queue } => {
                crate::theory::hashbrown_table_bytes(set.capacity() as u64, 8)
                    + (queue.capacity() * std::mem::size_of::<u64>()) as u64
            }
        }
    }
}

/// Entries a log or queue consults for a window of W: the last W + 1 admissions (ages 0..=W); one more
/// is held between an admission and the next arrival's eviction.
fn window_entries(window_keys: u64) -> usize {
    window_keys as usize + 1
}

/// Bytes each contender needs for a window of W keys at rate p, from the models: the windowed filter's
/// generations, the counting filter plus a full log, the table at W + 1 fingerprints plus its queue.
pub fn model_bytes(contender: Contender, window_keys: u64, fpr: f64) -> f64 {
    let mut config = BuildConfig::new(window_keys, fpr, 0);
    config.window_keys = Some(window_keys);
    // What `State::new` allocates for the log and the queue.
    let held = window_entries(window_keys) as u64 + 1;
    match contender {
        Contender::Windowed => role(Role::ExpiringFilter).predicted_peak_bytes(&config),
        Contender::CountingWithLog => {
            role(Role::DeletingFilter)
                .predicted_memory(&config)
                .footprint_bytes
                + held as f64 * std::mem::size_of::<KeyHash>() as f64
        }
        Contender::ExactMap => {
            crate::theory::hashbrown_table_bytes(held, 8) as f64
                + held as f64 * std::mem::size_of::<u64>() as f64
        }
    }
}
