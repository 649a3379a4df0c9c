//! Shared structures on a Redis server or split over a Redis Cluster ([`shards`]): RedisBloom's `BF.*` filters, a client-hashed bitmap with our
//! Bloom filter's exact probes, and exact sets. Each implements [`crate::membership::Membership`] over
//! [`crate::redis`]'s client; a lost server is latched ([`link::Link`]) and reported, never measured.

pub mod link;
pub mod once;
pub mod redis_bitmap;
pub mod redis_bloom;
pub mod redis_set;
pub mod shards;
pub mod worker;
