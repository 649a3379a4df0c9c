//! Key sets: the streaming key generator (URLs, e-mail and IP addresses), its profiles, real key files, and
//! batches of hashed keys.
//!
//! A key set is never materialised: members and non-members are produced by index (see [`generator`]) or
//! read line by line (see [`file`]), a batch at a time, into reused buffers.

pub mod bad_lines;
pub mod batch;
pub mod file;
pub mod generator;
pub mod lines;
pub mod pipeline;
pub mod profile;
pub mod shape;
pub mod stream;

pub use batch::KeyBatch;
pub use generator::{UrlGenerator, NON_MEMBER_BASE};
pub use pipeline::KeyPipeline;
pub use profile::Profile;
pub use shape::Shape;

/// The URL of member `i` under the default profile and `seed` (allocates; for docs and tests).
pub fn url(seed: u64, i: u64) -> String {
    let generator = UrlGenerator::new(Profile::default_profile(), seed);
    let mut buf = Vec::new();
    generator.member(i, &mut buf);
    String::from_utf8(buf).expect("generated URLs are ASCII")
}
