//! Generates the gitleaks rules of `src/redact` from the `keyspoor` crate's data.
//!
//! keyspoor (pinned `=0.1.4` in Cargo.toml, its checksum in Cargo.lock) ships gitleaks'
//! default rule set v8.30.1 (MIT) as `src/builtin_rules.json`, with gitleaks' licence in
//! its THIRD_PARTY_NOTICES. The crate is never compiled (a `cfg(any())` dependency):
//! `cargo fetch` unpacks it, and this script reads the file from Cargo's registry,
//! checks its SHA-256, translates each regex to Rust `regex` with Go's ASCII classes,
//! and writes `$OUT_DIR/gitleaks_rules.rs`: the rules, and those dropped with a reason.

use regex_syntax::hir::{Class, Hir, HirKind};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CRATE_DIR: &str = "keyspoor-0.1.4";
const RULES_FILE: &str = "src/builtin_rules.json";
/// SHA-256 of keyspoor 0.1.4's `src/builtin_rules.json`: a new version is a deliberate change.
const RULES_SHA256: &str = "5c5323a02c4f00f70fc5e48d219ad6728778a83d011e303579eb6e6d9d07ee1b";
/// Go's (gitleaks') `\w`, `\d`, `\s` are ASCII; Rust's are Unicode unless spelled out.
const WORD: &str = "0-9A-Za-z_";
const DIGIT: &str = "0-9";
const SPACE: &str = r"\t\n\x0B\x0C\r ";
/// The terminator most gitleaks rules end with: it may take a newline, the secret never does.
const TERMINATOR: &str = r#"(?:[\x60'"\s;]|\\[nr]|$)"#;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=Cargo.lock");
    let dir = locate().unwrap_or_else(|err| panic!("{err}"));
    let path = dir.join(RULES_FILE);
    println!("cargo::rerun-if-changed={}", path.display());
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|err| panic!("cannot read gitleaks rules {}: {err}", path.display()));
    let digest = Sha256::digest(&bytes)
        .iter()
        .fold(String::new(), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        });
    assert!(
        digest == RULES_SHA256,
        "gitleaks rule data changed: {} has SHA-256 {digest}, build.rs pins {RULES_SHA256}. \
         Review the new rules (tests: native/src/redact/gitleaks_tests.rs), then update RULES_SHA256.",
        path.display()
    );
    let notices = std::fs::read_to_string(dir.join("THIRD_PARTY_NOTICES"))
        .unwrap_or_else(|err| panic!("keyspoor's THIRD_PARTY_NOTICES (gitleaks' licence): {err}"));
    let data: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|err| panic!("gitleaks rules {}: bad JSON: {err}", path.display()));
    let rules = data["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("gitleaks rules {}: no `rules` array", path.display()));
    let out = generate(rules, &notices);
    let target =
        PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("gitleaks_rules.rs");
    std::fs::write(&target, out).unwrap_or_else(|err| panic!("{}: {err}", target.display()));
}

/// keyspoor's unpacked source in Cargo's registry (`cargo fetch` puts it there).
fn locate() -> Result<PathBuf, String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set: cannot find Cargo's registry")?;
    let registry = home.join("registry/src");
    let entries = std::fs::read_dir(&registry).map_err(|err| {
        format!(
            "{}: {err}; run `cargo fetch --locked` in native/",
            registry.display()
        )
    })?;
    entries
        .flatten()
        .map(|entry| entry.path().join(CRATE_DIR))
        .find(|dir| dir.join(RULES_FILE).is_file())
        .ok_or_else(|| {
            format!(
                "gitleaks rule data ({CRATE_DIR}/{RULES_FILE}) is not in {}: \
                 run `cargo fetch --locked` in native/ (the crate is data only, never compiled)",
                registry.display()
            )
        })
}

fn generate(rules: &[Value], notices: &str) -> String {
    let mut kept = String::new();
    let mut dropped = String::new();
    for rule in rules {
        let id = rule["id"].as_str().unwrap_or("?");
        match convert(rule) {
            Ok(code) => kept.push_str(&code),
            Err(reason) => {
                let _ = writeln!(dropped, "    ({id:?}, {reason:?}),");
            }
        }
    }
    format!(
        "/// gitleaks' licence and provenance, as keyspoor ships them.\n\
         pub const GITLEAKS_NOTICE: &str = {notices:?};\n\
         pub static GITLEAKS_RULES: &[GitleaksRule] = &[\n{kept}];\n\
         /// Rules of the set not used, with the reason.\n\
         pub static GITLEAKS_DROPPED: &[(&str, &str)] = &[\n{dropped}];\n"
    )
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn convert(rule: &Value) -> Result<String, String> {
    let id = rule["id"].as_str().ok_or("a rule without id")?;
    if let Some(path) = rule["path"].as_str() {
        return Err(format!(
            "applies only to files named like {path}; redaction has no file name"
        ));
    }
    let original = rule["pattern"].as_str().ok_or("a rule without pattern")?;
    let pattern = translate(original);
    let hir = parse(&pattern).map_err(|err| format!("Rust regex cannot run it: {err}"))?;
    // A line-region search is exact when no match can cross a newline: check the
    // pattern without its trailing terminator (which takes one character after the secret).
    let body = pattern
        .strip_suffix(&translate(TERMINATOR))
        .unwrap_or(&pattern);
    let multiline = match parse(body) {
        Ok(body_hir) => can_match_newline(&body_hir),
        Err(_) => can_match_newline(&hir),
    };
    let group = rule["secret_group"]
        .as_u64()
        .map_or("None".to_owned(), |g| format!("Some({g})"));
    let entropy = rule["min_entropy"].as_f64().unwrap_or(0.0);
    let keywords: Vec<String> = strings(&rule["keywords"])
        .into_iter()
        .map(|k| k.to_ascii_lowercase())
        .collect();
    let (mut secret, mut whole, mut line, mut stop) = (vec![], vec![], vec![], vec![]);
    for group in rule["allowlist"].as_array().into_iter().flatten() {
        // An `and` group also needs a path to match; redaction has none: it never applies.
        if group["condition"].as_str() != Some("or") {
            continue;
        }
        let regexes: Vec<String> = strings(&group["regexes"])
            .iter()
            .map(|r| translate(r))
            .filter(|r| parse(r).is_ok())
            .collect();
        match group["target"].as_str() {
            Some("match") => whole.extend(regexes),
            Some("line") => line.extend(regexes),
            _ => secret.extend(regexes),
        }
        stop.extend(
            strings(&group["stopwords"])
                .into_iter()
                .map(|s| s.to_lowercase()),
        );
    }
    Ok(format!(
        "    GitleaksRule {{ id: {id:?}, pattern: {pattern:?}, secret_group: {group}, \
         keywords: &{keywords:?}, min_entropy: {entropy:?}, multiline: {multiline}, \
         allow_secret: &{secret:?}, allow_match: &{whole:?}, allow_line: &{line:?}, \
         stopwords: &{stop:?} }},\n"
    ))
}

fn parse(pattern: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|err| err.to_string())
}

/// Go's ASCII `\w \d \s` (and negations) spelled out, `\b` made ASCII: outside a class
/// `\w` becomes `[0-9A-Za-z_]`, inside one its ranges. Everything else is kept.
pub fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars();
    let mut depth = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => out.push_str(&escaped(next, depth > 0)),
                None => out.push(c),
            },
            '[' => {
                depth += 1;
                out.push(c);
                // `[]…]` and `[^]…]`: a leading `]` is a literal.
                let rest = chars.as_str();
                let skip = if rest.starts_with("^]") {
                    2
                } else {
                    usize::from(rest.starts_with(']'))
                };
                for _ in 0..skip {
                    out.extend(chars.next());
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// An escape `\x` in Go's meaning: ASCII classes spelled out (inside a class, its ranges),
/// an ASCII word boundary; any other escape unchanged.
fn escaped(next: char, in_class: bool) -> String {
    let class = match next {
        'w' | 'W' => WORD,
        'd' | 'D' => DIGIT,
        's' | 'S' => SPACE,
        'b' | 'B' if !in_class => return format!(r"(?-u:\{next})"),
        _ => return format!("\\{next}"),
    };
    match (next.is_ascii_uppercase(), in_class) {
        (true, _) => format!("[^{class}]"),
        (false, true) => class.to_owned(),
        (false, false) => format!("[{class}]"),
    }
}

/// Whether any literal or class in `hir` can match a newline.
fn can_match_newline(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(lit) => lit.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Repetition(rep) => can_match_newline(&rep.sub),
        HirKind::Capture(cap) => can_match_newline(&cap.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().any(can_match_newline),
    }
}
