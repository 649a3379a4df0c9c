//! A batch of keys stored back to back in one buffer, with their hashes: the unit the harness times.
//!
//! Reusing one batch for every chunk of a key set keeps the hot loops free of per-key allocation.

use crate::hash::{HashFn, KeyHash, KeyHasher};

/// Keys of one batch, concatenated, with end offsets and (once [`KeyBatch::hash_all`] ran) their hashes.
#[derive(Clone, Debug, Default)]
pub struct KeyBatch {
    bytes: Vec<u8>,
    ends: Vec<u32>,
    hashes: Vec<KeyHash>,
}

impl KeyBatch {
    /// An empty batch with room for `keys` keys of about `mean_len` bytes.
    pub fn with_capacity(keys: usize, mean_len: usize) -> Self {
        KeyBatch {
            bytes: Vec::with_capacity(keys * mean_len),
            ends: Vec::with_capacity(keys),
            hashes: Vec::with_capacity(keys),
        }
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.hashes.clear();
    }

    /// Appends one key.
    #[inline]
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len() as u32);
    }

    /// Appends a key written by `write` straight into the batch buffer (no copy).
    #[inline(always)]
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.bytes);
        self.ends.push(self.bytes.len() as u32);
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total key bytes.
    pub fn key_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Key `i`.
    #[inline]
    pub fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Reads one byte of every cache line of the keys and offsets, so a batch made on another core sits
    /// in this core's cache before anything is timed; returns a value only so the reads stay.
    pub fn touch(&self) -> u64 {
        let bytes = self.bytes.iter().step_by(64).map(|b| *b as u64);
        let ends = self.ends.iter().step_by(16).map(|e| *e as u64);
        bytes.chain(ends).fold(0, u64::wrapping_add)
    }

    /// Hashes every key with `hasher` (replacing earlier hashes). One loop per hash function, chosen once
    /// per batch: the hash is inlined into its loop, no match per key.
    pub fn hash_all(&mut self, hasher: KeyHasher) {
        let seed = hasher.seed();
        match hasher.func() {
            HashFn::Xxh3_128 => self.hash_each(|key| HashFn::Xxh3_128.hash(seed, key)),
            HashFn::Xxh3_64 => self.hash_each(|key| HashFn::Xxh3_64.hash(seed, key)),
            HashFn::Rapidhash => self.hash_each(|key| HashFn::Rapidhash.hash(seed, key)),
            HashFn::Foldhash => self.hash_each(|key| HashFn::Foldhash.hash(seed, key)),
            HashFn::Wyhash => self.hash_each(|key| HashFn::Wyhash.hash(seed, key)),
            HashFn::Ahash => self.hash_each(|key| HashFn::Ahash.hash(seed, key)),
        }
    }

    /// Replaces the hashes with `hash` of every key (monomorphic: no call through a pointer per key).
    #[inline]
    fn hash_each(&mut self, hash: impl Fn(&[u8]) -> KeyHash) {
        self.hashes.clear();
        let mut start = 0usize;
        for &end in &self.ends {
            self.hashes.push(hash(&self.bytes[start..end as usize]));
            start = end as usize;
        }
    }

    /// The hashes computed by [`KeyBatch::hash_all`].
    pub fn hashes(&self) -> &[KeyHash] {
        &self.hashes
    }

    /// Iterates (key, hash) pairs; call [`KeyBatch::hash_all`] first.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], KeyHash)> + '_ {
        debug_assert_eq!(
            self.hashes.len(),
            self.ends.len(),
            "hash_all must run before iter"
        );
        let mut start = 0usize;
        self.ends
            .iter()
            .zip(self.hashes.iter())
            .map(move |(&end, &hash)| {
                let key = &self.bytes[start..end as usize];
                start = end as usize;
                (key, hash)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_hashes_each_key_as_its_hasher_does() {
        let mut batch = KeyBatch::with_capacity(3, 64);
        for key in [&b"https://a.example/"[..], b"", b"https://b.example/x?y=1"] {
            batch.push(key);
        }
        for func in HashFn::ALL {
            let hasher = KeyHasher::new(func, 17);
            batch.hash_all(hasher);
            for (key, hash) in batch.iter() {
                assert_eq!(hash, func.hash(17, key), "{}", func.id());
            }
        }
    }
}
