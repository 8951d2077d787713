//! Secret redaction: built-in rules compiled once, a keyword prefilter, and an
//! entropy check for generic `key = value` assignments (see `rules.rs`).
//!
//! One Aho-Corasick pass finds the rules' keywords; a single-line rule then runs
//! only on the lines that contain one of its keywords (every match contains one),
//! and a multi-line rule on the whole text if any keyword occurs; a rule without
//! keywords (its regex has a literal prefilter of its own, or none can be named)
//! searches the whole text. Documented example keys are never redacted. Candidates that
//! touch an existing `[REDACTED:…]` marker are dropped (so redaction is
//! idempotent); overlaps go to the earliest start, then the longest span, then
//! the rule listed first.

mod entropy;
mod formats;
pub mod gitleaks;
mod invisible;
mod rules;

use crate::errors::{NativeFailure, NativeResult};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use rules::{passes, Check, Found, Spec};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

pub use entropy::shannon_entropy;
pub use rules::SECRET_KINDS;

/// Every built-in kind in priority order: SF's own, then gitleaks' rule ids.
pub fn secret_kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = SECRET_KINDS.to_vec();
    kinds.extend(gitleaks::GITLEAKS_RULES.iter().map(|rule| rule.id));
    kinds
}

/// Lines with keyword hits at most this many bytes apart are searched as one region.
const MERGE_GAP: usize = 256;

/// Extra-rule sets kept compiled (the cache is cleared when it grows past this).
const CACHE_LIMIT: usize = 64;

struct Rule {
    kind: String,
    /// Which rule found it: `sf.<kind>` for SF's own, the gitleaks id, or an extra kind.
    id: String,
    /// gitleaks rules: the group holding the secret.
    secret_group: Option<usize>,
    /// A gitleaks rule's source: its regex and allowlists are compiled on first use
    /// (all of them up front would cost every process a few hundred milliseconds).
    source: Option<&'static gitleaks::GitleaksRule>,
    allow: OnceLock<Option<gitleaks::Allow>>,
    regex: OnceLock<Option<Regex>>,
    check: Check,
    /// Single-line rules search only the lines with a keyword hit.
    multiline: bool,
    /// Without keywords (an extra rule), the rule searches the whole text.
    has_keywords: bool,
}

impl Rule {
    /// The regex (a gitleaks rule's compiled now if it was not; build.rs and the tests
    /// check that each compiles, so `None` is not expected).
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| self.source.and_then(|rule| Regex::new(rule.pattern).ok()))
            .as_ref()
    }

    /// Whether a candidate passes the rule's own checks.
    fn accepts(&self, whole: (usize, usize), found: &Found<'_>) -> bool {
        let Some(source) = self.source else {
            return passes(self.check, found);
        };
        let allow = self.allow.get_or_init(|| gitleaks::Allow::new(source).ok());
        !rules::DOCUMENTED_EXAMPLES.contains(&found.value)
            && allow
                .as_ref()
                .is_some_and(|allow| allow.passes(found.text, whole, found.value))
    }
}

/// A compiled rule set: extra rules first, then the built-in ones.
pub struct Rules {
    list: Vec<Rule>,
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the rules it enables.
    keyword_rules: Vec<Vec<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub kind: String,
    /// The rule that matched (see [`Rule::id`]).
    pub rule: String,
    /// Character offsets into the original text.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub findings: Vec<Finding>,
}

static MARKER: LazyLock<Result<Regex, regex::Error>> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[A-Za-z0-9_.-]+\]"));

type Cache = Mutex<HashMap<(Vec<(String, String)>, bool), Arc<Rules>>>;
static CACHE: LazyLock<Cache> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn internal(err: impl std::fmt::Display) -> NativeFailure {
    NativeFailure::Other(format!("redaction rules failed to build: {err}"))
}

fn valid_kind(kind: &str) -> bool {
    !kind.is_empty()
        && kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// The caller's `(kind, regex)` rules: no keywords, the whole text searched.
fn extra_rules(extra: &[(String, String)]) -> NativeResult<Vec<Rule>> {
    let mut list = Vec::new();
    for (kind, pattern) in extra {
        if !valid_kind(kind) {
            return Err(NativeFailure::InvalidValue(format!(
                "bad secret kind {kind:?}: use letters, digits, '_', '.', '-'"
            )));
        }
        let regex = Regex::new(pattern).map_err(|err| {
            NativeFailure::InvalidValue(format!("bad pattern for {kind:?}: {err}"))
        })?;
        list.push(Rule {
            kind: kind.clone(),
            id: kind.clone(),
            secret_group: None,
            source: None,
            allow: OnceLock::new(),
            regex: OnceLock::from(Some(regex)),
            check: Check::Always,
            multiline: true,
            has_keywords: false,
        });
    }
    Ok(list)
}

/// A gitleaks rule, its regex and allowlists compiled on first use.
fn gitleaks_rule(rule: &'static gitleaks::GitleaksRule) -> Rule {
    Rule {
        kind: rule.id.to_owned(),
        id: rule.id.to_owned(),
        secret_group: rule.secret_group,
        source: Some(rule),
        allow: OnceLock::new(),
        regex: OnceLock::new(),
        check: Check::Always,
        multiline: rule.multiline,
        has_keywords: !rule.keywords.is_empty(),
    }
}

/// SF's rules in the order they are tried: its own tokens, vendors' token shapes, the
/// formats gitleaks lacks, more vendors, keys, then assignments.
fn builtin_specs() -> Vec<Spec> {
    let mut specs = formats::sf_specs();
    specs.extend(rules::vendor_specs());
    specs.extend(formats::format_specs());
    specs.extend(rules::more_vendor_specs());
    specs.extend(rules::key_specs());
    specs.extend(rules::assignment_specs());
    specs
}

fn compile(extra: &[(String, String)], with_gitleaks: bool) -> NativeResult<Rules> {
    let mut list = extra_rules(extra)?;
    let mut keywords: Vec<&'static str> = Vec::new();
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    for Spec {
        kind,
        pattern,
        check,
        keywords: words,
        multiline,
    } in builtin_specs()
    {
        let index = list.len();
        let has_keywords = !words.is_empty();
        for word in words {
            keywords.push(word);
            keyword_rules.push(vec![index]);
        }
        list.push(Rule {
            kind: kind.to_owned(),
            id: format!("sf.{kind}"),
            secret_group: None,
            source: None,
            allow: OnceLock::new(),
            regex: OnceLock::from(Some(Regex::new(&pattern).map_err(internal)?)),
            check,
            multiline,
            has_keywords,
        });
    }
    let gitleaks_rules: &[gitleaks::GitleaksRule] = if with_gitleaks {
        gitleaks::GITLEAKS_RULES
    } else {
        &[]
    };
    for rule in gitleaks_rules {
        let index = list.len();
        for word in rule.keywords {
            keywords.push(word);
            keyword_rules.push(vec![index]);
        }
        list.push(gitleaks_rule(rule));
    }
    let prefilter = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&keywords)
        .map_err(internal)?;
    Ok(Rules {
        list,
        prefilter,
        keyword_rules,
    })
}

/// The built-in rules plus `extra` (kind, regex) pairs, compiled or from the cache.
pub fn rules_with(extra: &[(String, String)]) -> NativeResult<Arc<Rules>> {
    rules_for(extra, true)
}

/// As [`rules_with`]; without gitleaks' rules (SF's own only) when `with_gitleaks` is false.
pub fn rules_for(extra: &[(String, String)], with_gitleaks: bool) -> NativeResult<Arc<Rules>> {
    let key = (extra.to_vec(), with_gitleaks);
    if let Ok(cache) = CACHE.lock() {
        if let Some(rules) = cache.get(&key) {
            return Ok(Arc::clone(rules));
        }
    }
    let rules = Arc::new(compile(extra, with_gitleaks)?);
    if let Ok(mut cache) = CACHE.lock() {
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&rules));
    }
    Ok(rules)
}

/// A match that passed its rule's check: byte offsets of the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    start: usize,
    end: std::cmp::Reverse<usize>,
    rule: usize,
}

pub fn redact(text: &str, rules: &Rules) -> Redacted {
    // Zero-width characters split a token without showing: match on the text without
    // them, then map each span back (the characters inside it go with the secret).
    let Some(visible) = invisible::strip(text) else {
        let kept = kept(text, rules);
        return build(text, rules, &kept);
    };
    let kept: Vec<Candidate> = kept(&visible.text, rules)
        .into_iter()
        .map(|c| Candidate {
            start: visible.original(c.start),
            end: std::cmp::Reverse(visible.original(c.end.0 - 1) + 1),
            rule: c.rule,
        })
        .collect();
    build(text, rules, &kept)
}

/// The non-overlapping candidates in `text`, in order.
fn kept(text: &str, rules: &Rules) -> Vec<Candidate> {
    let markers: Vec<(usize, usize)> = match MARKER.as_ref() {
        Ok(marker) => marker
            .find_iter(text)
            .map(|m| (m.start(), m.end()))
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut candidates = Vec::new();
    for (index, regions) in regions(text, rules).into_iter().enumerate() {
        for (from, to) in regions {
            search(
                text,
                from,
                to,
                index,
                &rules.list[index],
                &markers,
                &mut candidates,
            );
        }
    }
    candidates.sort_unstable();
    let mut kept: Vec<Candidate> = Vec::new();
    for candidate in candidates {
        if kept.last().is_none_or(|last| candidate.start >= last.end.0) {
            kept.push(candidate);
        }
    }
    kept
}

/// For each rule, the byte ranges of `text` it must search.
fn regions(text: &str, rules: &Rules) -> Vec<Vec<(usize, usize)>> {
    let mut out: Vec<Vec<(usize, usize)>> = rules
        .list
        .iter()
        .map(|rule| {
            if rule.has_keywords {
                Vec::new()
            } else {
                vec![(0, text.len())]
            }
        })
        .collect();
    let bytes = text.as_bytes();
    // Hits arrive in order of their end, each within one line (no keyword holds a
    // newline). A single-line rule searches the lines with its hits; lines close
    // together are searched as one region (a regex call costs about as much as
    // scanning a few hundred bytes, and a line in between without a hit holds no
    // match), so text dense with keywords is not searched line by line.
    for hit in rules.prefilter.find_overlapping_iter(text) {
        for &index in &rules.keyword_rules[hit.pattern().as_usize()] {
            let list = &mut out[index];
            if rules.list[index].multiline {
                if list.is_empty() {
                    list.push((0, text.len()));
                }
                continue;
            }
            if list.last().is_some_and(|last| hit.end() <= last.1) {
                continue;
            }
            let start = memchr::memrchr(b'\n', &bytes[..hit.start()]).map_or(0, |i| i + 1);
            let end =
                memchr::memchr(b'\n', &bytes[hit.end()..]).map_or(text.len(), |i| hit.end() + i);
            match list.last_mut() {
                Some(last) if start <= last.1 + MERGE_GAP => last.1 = end,
                _ => list.push((start, end)),
            }
        }
    }
    out
}

fn touches(markers: &[(usize, usize)], start: usize, end: usize) -> bool {
    // Markers are sorted and disjoint: find the first that ends after `start`.
    let first = markers.partition_point(|&(_, m_end)| m_end <= start);
    markers
        .get(first)
        .is_some_and(|&(m_start, _)| m_start < end)
}

fn search(
    text: &str,
    from: usize,
    to: usize,
    index: usize,
    rule: &Rule,
    markers: &[(usize, usize)],
    out: &mut Vec<Candidate>,
) {
    let region = &text[from..to];
    // Offsets are into `region`: the whole match, the secret, its group, the key.
    let mut consider = |whole: (usize, usize), secret: (usize, usize), group, key| {
        let (start, end) = (from + secret.0, from + secret.1);
        if start == end || touches(markers, from + whole.0, from + whole.1) {
            return;
        }
        let found = Found {
            text,
            match_end: from + whole.1,
            key,
            value: &text[start..end],
            value_start: start,
            value_end: end,
            group,
        };
        if rule.accepts((from + whole.0, from + whole.1), &found) {
            out.push(Candidate {
                start,
                end: std::cmp::Reverse(end),
                rule: index,
            });
        }
    };
    let Some(regex) = rule.regex() else { return };
    if regex.captures_len() == 1 {
        // No groups: the secret is the whole match, and finding is much cheaper
        // than capturing (the regex crate runs its capture engine on each match).
        for whole in regex.find_iter(region) {
            let span = (whole.start(), whole.end());
            consider(span, span, 0, "");
        }
        return;
    }
    for caps in regex.captures_iter(region) {
        let Some(whole) = caps.get(0) else { continue };
        let (group, secret) = secret_of(rule, &caps).unwrap_or((0, whole));
        let key = caps.get(1).map_or("", |m| m.as_str());
        consider(
            (whole.start(), whole.end()),
            (secret.start(), secret.end()),
            group,
            key,
        );
    }
}

/// The group holding the secret: a gitleaks rule's own, groups 2-4 of `name = value`,
/// or the first that took part.
fn secret_of<'t>(rule: &Rule, caps: &regex::Captures<'t>) -> Option<(usize, regex::Match<'t>)> {
    let groups = match rule.secret_group {
        Some(g) => g..g + 1,
        None if rule.check.keyed() => 2..5,
        None => 1..caps.len(),
    };
    let mut groups = groups;
    groups.find_map(|g| caps.get(g).map(|m| (g, m)))
}

fn build(text: &str, rules: &Rules, kept: &[Candidate]) -> Redacted {
    let mut out = String::with_capacity(text.len());
    let mut findings = Vec::with_capacity(kept.len());
    let mut position = 0;
    // Byte offsets become character offsets, counted incrementally.
    let (mut chars, mut counted) = (0usize, 0usize);
    let mut to_chars = |byte: usize| {
        chars += text[counted..byte].chars().count();
        counted = byte;
        chars
    };
    for candidate in kept {
        let (start, end) = (candidate.start, candidate.end.0);
        let rule = &rules.list[candidate.rule];
        let kind = &rule.kind;
        out.push_str(&text[position..start]);
        out.push_str("[REDACTED:");
        out.push_str(kind);
        out.push(']');
        position = end;
        let (start, end) = (to_chars(start), to_chars(end));
        findings.push(Finding {
            kind: kind.clone(),
            rule: rule.id.clone(),
            start,
            end,
        });
    }
    out.push_str(&text[position..]);
    Redacted {
        text: out,
        findings,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod gitleaks_tests;
