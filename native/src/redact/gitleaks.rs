//! gitleaks' default rule set, generated at build time by `native/build.rs` from the
//! pinned `keyspoor` crate's data (SHA-256 checked there). Each rule keeps its gitleaks
//! id, keywords, secret group, entropy threshold and allowlists (those that need a file
//! path never apply: redaction has none).

use regex::RegexSet;

pub struct GitleaksRule {
    pub id: &'static str,
    pub pattern: &'static str,
    /// The capture group holding the secret; none: the first non-empty group, or the match.
    pub secret_group: Option<usize>,
    pub keywords: &'static [&'static str],
    /// The secret's entropy must be strictly greater (0: no check), as in gitleaks.
    pub min_entropy: f64,
    pub multiline: bool,
    pub allow_secret: &'static [&'static str],
    pub allow_match: &'static [&'static str],
    pub allow_line: &'static [&'static str],
    /// Lower-case; a secret containing one is not a secret.
    pub stopwords: &'static [&'static str],
}

include!(concat!(env!("OUT_DIR"), "/gitleaks_rules.rs"));

/// A gitleaks rule's entropy gate and allowlists, compiled.
pub struct Allow {
    min_entropy: f64,
    secret: Option<RegexSet>,
    whole: Option<RegexSet>,
    line: Option<RegexSet>,
    stopwords: &'static [&'static str],
}

fn set(patterns: &[&str]) -> Result<Option<RegexSet>, regex::Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    RegexSet::new(patterns).map(Some)
}

impl Allow {
    pub fn new(rule: &GitleaksRule) -> Result<Allow, regex::Error> {
        Ok(Allow {
            min_entropy: rule.min_entropy,
            secret: set(rule.allow_secret)?,
            whole: set(rule.allow_match)?,
            line: set(rule.allow_line)?,
            stopwords: rule.stopwords,
        })
    }

    /// Whether a candidate counts: `whole` is the match's byte span in `text`.
    pub fn passes(&self, text: &str, whole: (usize, usize), secret: &str) -> bool {
        if self.min_entropy > 0.0 && super::shannon_entropy(secret) <= self.min_entropy {
            return false;
        }
        if self.secret.as_ref().is_some_and(|s| s.is_match(secret)) {
            return false;
        }
        if self
            .whole
            .as_ref()
            .is_some_and(|s| s.is_match(&text[whole.0..whole.1]))
        {
            return false;
        }
        if let Some(line) = &self.line {
            let bytes = text.as_bytes();
            let start = memchr::memrchr(b'\n', &bytes[..whole.0]).map_or(0, |i| i + 1);
            let end = memchr::memchr(b'\n', &bytes[whole.1..]).map_or(text.len(), |i| whole.1 + i);
            if line.is_match(&text[start..end]) {
                return false;
            }
        }
        let lowered = secret.to_lowercase();
        !self.stopwords.iter().any(|word| lowered.contains(word))
    }
}
