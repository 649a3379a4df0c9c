//! What the harness needs to run a tool of another language as its own process (`crate::external`).

/// The language of an external tool (the report gives each one colour family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    Python,
    Java,
}

impl Language {
    /// The name a reader knows.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Java => "Java",
        }
    }
}

/// How the harness runs an external tool.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct External {
    pub language: Language,
    /// The largest n it is run at; larger cells are recorded as skipped, saying why (a pure-Python filter
    /// costs microseconds per key).
    pub max_keys: u64,
    /// Why it cannot run on this kind of machine at all, if so (the row stays visible, skipped).
    pub unavailable: Option<&'static str>,
}
