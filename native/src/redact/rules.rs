//! The built-in secret rules. `native/tests/redact_reference.py` holds
//! the same rules for Python's `re`; the tests hold the two to the same output.
//!
//! Dialect notes: Python compiles its copies with `re.ASCII`, so here word
//! boundaries are `(?-u:\b)`, case-insensitive parts are `(?i-u:…)` (ASCII case
//! folding only, as in Python), and whitespace is spelled out as `\t\n\x0b\x0c\r `.

use super::entropy::shannon_entropy;

/// Every built-in kind, in priority order (the first wins a tie).
pub const SECRET_KINDS: [&str; 13] = [
    "private_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "slack_token",
    "slack_webhook",
    "anthropic_api_key",
    "openai_api_key",
    "stripe_key",
    "jwt",
    "bearer_token",
    "url_password",
    "generic_secret",
];

/// What a regex match must also satisfy to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Always,
    NotPlaceholder,
    /// OpenAI-style keys have digits; hyphenated prose after `sk-` has none.
    HasDigit,
    /// An AWS secret is exactly 40 characters, not the start of a longer run.
    AwsSecret,
    Generic,
}

pub struct Spec {
    pub kind: &'static str,
    pub pattern: String,
    pub check: Check,
    /// Lower-case strings of which every match contains one (ASCII case-insensitively).
    pub keywords: &'static [&'static str],
    /// Whether a match can span lines (then it is searched in the whole text).
    pub multiline: bool,
}

const WS: &str = r"\t\n\x0b\x0c\r ";

fn spec(
    kind: &'static str,
    pattern: String,
    check: Check,
    keywords: &'static [&'static str],
) -> Spec {
    Spec {
        kind,
        pattern,
        check,
        keywords,
        multiline: false,
    }
}

pub fn builtin_specs() -> Vec<Spec> {
    let keyword = r"(?:(?:api|secret|private|access|auth|signing|encryption|master|client)[_.-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credentials?)";
    let ws_no_space = &WS[..WS.len() - 1];
    let generic = format!(
        r#"((?i-u:[A-Za-z0-9_.-]*{keyword}(?:[_.-]?(?:id|value|[0-9]+))?))["']?[\t ]*(?::=|=>|[:=])[\t ]*(?:"([^"{ws_no_space}]*)"|'([^'{ws_no_space}]*)'|([^{WS}"',;()\[\]{{}}<>]+))"#
    );
    vec![
        Spec {
            kind: "private_key",
            pattern: format!(
                r"-----BEGIN[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\\{WS}]*)"
            ),
            check: Check::Always,
            keywords: &["private key"],
            multiline: true,
        },
        spec(
            "aws_access_key_id",
            r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)".into(),
            Check::Always,
            &["akia", "asia", "abia", "acca"],
        ),
        spec(
            "aws_secret_access_key",
            r#"(?i-u:aws[_-]?secret[_-]?(?:access[_-]?)?key)["']?[\t ]*(?::=|=>|[:=])[\t ]*["']?([A-Za-z0-9/+=]{40})"#.into(),
            Check::AwsSecret,
            &["secret"],
        ),
        spec(
            "github_token",
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?-u:\b)".into(),
            Check::Always,
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        ),
        spec(
            "slack_token",
            r"(?-u:\b)(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}".into(),
            Check::Always,
            &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-"],
        ),
        spec(
            "slack_webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}".into(),
            Check::Always,
            &["hooks.slack.com"],
        ),
        spec(
            "anthropic_api_key",
            r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}".into(),
            Check::Always,
            &["sk-ant-"],
        ),
        spec(
            "openai_api_key",
            r"(?-u:\b)sk-[A-Za-z0-9_-]{20,}".into(),
            Check::HasDigit,
            &["sk-"],
        ),
        spec(
            "stripe_key",
            r"(?-u:\b)[rs]k_(?:live|test)_[A-Za-z0-9]{16,}".into(),
            Check::Always,
            &["k_live_", "k_test_"],
        ),
        spec(
            "jwt",
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}".into(),
            Check::Always,
            &["eyj"],
        ),
        spec(
            "bearer_token",
            r#"(?-u:\b)(?i-u:authorization)["']?[\t ]*[:=][\t ]*["']?(?i-u:bearer|basic|token)[\t ]+([A-Za-z0-9._~+/=-]{8,})"#.into(),
            Check::NotPlaceholder,
            &["authorization"],
        ),
        spec(
            "url_password",
            format!(r#"(?-u:\b)(?i-u:[a-z][a-z0-9+.-]*)://[^{WS}/:@"'<>]+:([^{WS}/@"'<>]+)@"#),
            Check::NotPlaceholder,
            &["://"],
        ),
        spec(
            "generic_secret",
            generic,
            Check::Generic,
            &["key", "secret", "token", "passw", "passphrase", "pwd", "credential"],
        ),
    ]
}

/// Obviously-not-secret values, which survive redaction.
const PLACEHOLDER_WORDS: [&str; 18] = [
    "changeme",
    "change_me",
    "password",
    "passwd",
    "secret",
    "token",
    "none",
    "null",
    "nil",
    "undefined",
    "true",
    "false",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "test",
    "pass",
];
const PLACEHOLDER_PREFIXES: [&str; 6] = [
    "your",
    "example",
    "placeholder",
    "insert",
    "replace",
    "enter",
];
const PLACEHOLDER_STARTS: [&str; 6] = ["$", "%(", "{{", "<", "[redacted", "***"];

pub const PASSWORD_MIN_LENGTH: usize = 6;
pub const PASSWORD_MIN_ENTROPY: f64 = 2.0;
pub const SECRET_MIN_LENGTH: usize = 8;
pub const SECRET_MIN_ENTROPY: f64 = 3.0;

pub fn is_placeholder(value: &str) -> bool {
    let lowered = value.to_lowercase();
    let mut chars = value.chars();
    let first = chars.next();
    value.is_empty()
        || PLACEHOLDER_WORDS.contains(&lowered.as_str())
        || PLACEHOLDER_PREFIXES.iter().any(|p| lowered.starts_with(p))
        || PLACEHOLDER_STARTS.iter().any(|p| lowered.starts_with(p))
        || chars.all(|c| Some(c) == first)
}

/// `name` or `dotted.name` (ASCII), as a bare value in code usually is.
fn is_identifier(value: &str) -> bool {
    value.split('.').all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The parts of a match a check looks at, as byte offsets into the whole text.
pub struct Found<'t> {
    pub text: &'t str,
    pub match_end: usize,
    pub key: &'t str,
    pub value: &'t str,
    pub value_end: usize,
    /// Which capture group holds the value (4 is a bare, unquoted value).
    pub group: usize,
}

pub fn passes(check: Check, found: &Found<'_>) -> bool {
    match check {
        Check::Always => true,
        Check::NotPlaceholder => !is_placeholder(found.value),
        Check::HasDigit => found
            .value
            .get(3..)
            .is_some_and(|body| body.chars().any(|c| c.is_ascii_digit())),
        Check::AwsSecret => !found.text[found.value_end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || "/+=".contains(c)),
        Check::Generic => generic(found),
    }
}

fn generic(found: &Found<'_>) -> bool {
    let value = found.value;
    if is_placeholder(value) {
        return false;
    }
    if found.group == 4 {
        let follow = found.text[found.match_end..].chars().next();
        if matches!(follow, Some('(' | '[')) {
            return false;
        }
        if is_identifier(value) && !value.chars().any(|c| c.is_ascii_digit()) {
            return false;
        }
    }
    let key = found.key.to_ascii_lowercase();
    let length = value.chars().count();
    if key.contains("passw") || key.contains("pwd") || key.contains("passphrase") {
        length >= PASSWORD_MIN_LENGTH && shannon_entropy(value) >= PASSWORD_MIN_ENTROPY
    } else {
        length >= SECRET_MIN_LENGTH && shannon_entropy(value) >= SECRET_MIN_ENTROPY
    }
}
