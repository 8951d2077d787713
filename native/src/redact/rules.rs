//! The built-in secret rules. `native/tests/redact_reference.py` holds
//! the same rules for Python's `re`; the tests hold the two to the same output.
//!
//! Dialect notes: Python compiles its copies with `re.ASCII`, so here word
//! boundaries are `(?-u:\b)`, case-insensitive parts are `(?i-u:…)` (ASCII case
//! folding only, as in Python), and whitespace is spelled out as `\t\n\x0b\x0c\r `.

use super::entropy::shannon_entropy;

/// Every built-in kind, in priority order (the first wins a tie). A kind may have more
/// than one rule: `aws_secret_access_key` also has a rule for a bare 40-character
/// secret, listed last of all (the weakest guess loses every tie).
pub const SECRET_KINDS: [&str; 27] = [
    "sf_api_token",
    "private_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "github_token",
    "stripe_webhook_secret",
    "azure_sas_signature",
    "npm_auth",
    "docker_auth",
    "kube_client_key",
    "gitlab_token",
    "slack_token",
    "slack_webhook",
    "anthropic_api_key",
    "openai_api_key",
    "stripe_key",
    "google_api_key",
    "twilio_api_key",
    "sendgrid_api_key",
    "mailgun_api_key",
    "jwt",
    "azure_storage_key",
    "bearer_token",
    "url_password",
    "mysql_password",
    "secret_key",
    "generic_secret",
];

/// Well-known fakes from vendors' documentation (AWS's example key pairs, the Azure
/// storage emulator's published account key): text quoting them stays readable.
pub const DOCUMENTED_EXAMPLES: [&str; 6] = [
    "AKIAIOSFODNN7EXAMPLE",
    "ASIAIOSFODNN7EXAMPLE",
    "AKIAI44QH8DHBEXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
];

/// What a regex match must also satisfy to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Always,
    NotPlaceholder,
    /// OpenAI-style keys have digits; hyphenated prose after `sk-` has none.
    HasDigit,
    /// A fixed-length token is not the start of a longer run: the value is not
    /// followed by an ASCII letter or digit, nor by one of these characters.
    Exact(&'static str),
    /// A bare 40-character AWS secret (see [`bare_aws_secret`]).
    BareAwsSecret,
    /// `key = value` to a secret-sounding name, with enough entropy.
    Generic,
    /// `SECRET_KEY = value`: the name says it is a secret, so a password's entropy.
    SecretKey,
    /// A random token: not followed by a token character, a digit or an upper-case
    /// letter in it, and at least this entropy (tenths of a bit).
    Random(u8),
    /// A token wrapped over two lines: exactly this many letters and digits after its
    /// four-character prefix, and not continued after the match.
    Wrapped(usize),
}

impl Check {
    /// Whether the rule is `(name) = (value)`: group 1 the name, 2–4 the value.
    pub fn keyed(self) -> bool {
        matches!(self, Check::Generic | Check::SecretKey)
    }
}

pub struct Spec {
    pub kind: &'static str,
    pub pattern: String,
    pub check: Check,
    /// Lower-case strings of which every match contains one (ASCII case-insensitively);
    /// none: the rule searches the whole text (its regex has a literal of its own).
    pub keywords: &'static [&'static str],
    /// Whether a match can span lines (then it is searched in the whole text).
    pub multiline: bool,
}

const WS: &str = r"\t\n\x0b\x0c\r ";

pub(super) fn spec(
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

/// `(name)["']? = ` then a double-quoted, single-quoted (groups 2, 3) or bare (4) value;
/// `bytes` allows Python's `b'…'`; `bare` is what a bare value may not contain.
fn assignment(name: &str, bytes: bool, bare: &str) -> String {
    let ws_no_space = &WS[..WS.len() - 1];
    let b = if bytes { "b?" } else { "" };
    format!(
        r#"({name})["']?[\t ]*(?::=|=>|[:=])[\t ]*(?:{b}"([^"{ws_no_space}]*)"|{b}'([^'{ws_no_space}]*)'|([^{WS}"'{bare}]+))"#
    )
}

/// Tokens with a vendor's own shape, found wherever they are.
pub(super) fn vendor_specs() -> Vec<Spec> {
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
            Check::Exact("/+="),
            &["secret"],
        ),
        spec(
            "github_token",
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?-u:\b)".into(),
            Check::Always,
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        ),
    ]
}

pub(super) fn more_vendor_specs() -> Vec<Spec> {
    vec![
        spec(
            "gitlab_token",
            // Personal, pipeline-trigger, deploy, runner, feed, CI-job, service-account
            // and incoming-mail tokens; a routable token ends in `.` and 9 characters.
            r"(?-u:\b)gl(?:pat|ptt|dt|rt|ft|cbt|soat|imt)-[0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{9}(?-u:\b))?".into(),
            Check::Always,
            &["glpat-", "glptt-", "gldt-", "glrt-", "glft-", "glcbt-", "glsoat-", "glimt-"],
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
    ]
}

pub(super) fn key_specs() -> Vec<Spec> {
    vec![
        spec(
            "google_api_key",
            r"(?-u:\b)AIza[0-9A-Za-z_-]{35}".into(),
            Check::Exact("_-"),
            &["aiza"],
        ),
        // `SK` is too common a keyword (task, disk); the regex's own literal is faster.
        spec(
            "twilio_api_key",
            r"(?-u:\b)SK[0-9a-f]{32}(?-u:\b)".into(),
            Check::Always,
            &[],
        ),
        spec(
            "sendgrid_api_key",
            r"(?-u:\b)SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}".into(),
            Check::Exact("_-"),
            &["sg."],
        ),
        spec(
            "mailgun_api_key",
            r"(?-u:\b)key-[0-9A-Za-z]{32}(?-u:\b)".into(),
            Check::HasDigit,
            &["key-"],
        ),
        spec(
            "jwt",
            r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}".into(),
            Check::Always,
            &["eyj"],
        ),
    ]
}

/// Secrets known by what they are assigned to, where they sit in a URL or a command.
pub(super) fn assignment_specs() -> Vec<Spec> {
    let keyword = r"(?:(?:api|secret|private|access|auth|signing|encryption|master|client)[_.-]?key|secret|token|passw(?:or)?d|passphrase|pwd|credentials?)";
    let generic_name = format!(r"(?i-u:[A-Za-z0-9_.-]*{keyword}(?:[_.-]?(?:id|value|[0-9]+))?)");
    // A Django/Flask secret key may hold `(`, `)` and `#`, never quotes or brackets.
    let secret_key_name = r"(?i-u:secret[_.-]?key(?:[_.-]?(?:base|[0-9]+))?)";
    vec![
        spec(
            "azure_storage_key",
            r#"(?i-u:account[_-]?key)["']?[\t ]*(?::=|=>|[:=])[\t ]*["']?([A-Za-z0-9+/]{20,}={0,2})"#.into(),
            Check::NotPlaceholder,
            &["accountkey", "account_key", "account-key"],
        ),
        spec(
            "bearer_token",
            r#"(?-u:\b)(?i-u:authorization)["']?[\t ]*[:=][\t ]*["']?(?i-u:bearer|basic|token)[\t ]+([A-Za-z0-9._~+/=-]{8,})"#.into(),
            Check::NotPlaceholder,
            &["authorization"],
        ),
        spec(
            "url_password",
            // The user may be empty: `redis://:password@host`.
            format!(r#"(?-u:\b)(?i-u:[a-z][a-z0-9+.-]*)://[^{WS}/:@"'<>]*:([^{WS}/@"'<>]+)@"#),
            Check::NotPlaceholder,
            &["://"],
        ),
        spec(
            "mysql_password",
            // `-pPASSWORD` (no space: `-p alone` prompts) among a MySQL/MariaDB client's
            // arguments, on the same command.
            format!(
                r#"(?-u:\b)(?:mysql(?:dump|admin|import|check|show|slap|pump|binlog)?|mariadb(?:-?(?:dump|admin|import|check|show|slap|binlog))?)(?:[\t ]+[^{WS}|;&]+)*?[\t ]+-p(?:"([^"\n]*)"|'([^'\n]*)'|([^{WS}"'`|;&<>]+))"#
            ),
            Check::NotPlaceholder,
            &["mysql", "mariadb"],
        ),
        spec(
            "secret_key",
            assignment(secret_key_name, true, r",;\[\]{}<>`"),
            Check::SecretKey,
            &["secret"],
        ),
        spec(
            "generic_secret",
            assignment(&generic_name, false, r",;()\[\]{}<>"),
            Check::Generic,
            &["key", "secret", "token", "passw", "passphrase", "pwd", "credential"],
        ),
        // Last of all: any other rule that finds the same span names it better.
        spec(
            "aws_secret_access_key",
            r"[A-Za-z0-9/+]{40}".into(),
            Check::BareAwsSecret,
            &[],
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
    pub value_start: usize,
    pub value_end: usize,
    /// Which capture group holds the value (4 is a bare, unquoted value).
    pub group: usize,
}

pub fn passes(check: Check, found: &Found<'_>) -> bool {
    if DOCUMENTED_EXAMPLES.contains(&found.value) {
        return false;
    }
    match check {
        Check::Always => true,
        Check::NotPlaceholder => !is_placeholder(found.value),
        Check::HasDigit => found
            .value
            .get(3..)
            .is_some_and(|body| body.chars().any(|c| c.is_ascii_digit())),
        Check::Exact(more) => !next_char(found).is_some_and(|c| sticks(c, more)),
        Check::BareAwsSecret => bare_aws_secret(found),
        Check::Generic => generic(found, false),
        Check::SecretKey => generic(found, true),
        Check::Random(tenths) => random(found, tenths),
        Check::Wrapped(length) => wrapped(found, length),
    }
}

fn next_char(found: &Found<'_>) -> Option<char> {
    found.text[found.value_end..].chars().next()
}

/// Whether `c` continues a token: an ASCII letter or digit, or one of `more`.
fn sticks(c: char, more: &str) -> bool {
    c.is_ascii_alphanumeric() || more.contains(c)
}

/// The least entropy of a bare AWS secret: 40 random base64 characters have 4.8 bits
/// a character (1 in 2,000 falls under 4.3); camel-case names and paths have ~4.0-4.2.
pub const BARE_AWS_MIN_ENTROPY: f64 = 4.3;

/// A 40-character base64 token standing alone (not part of a longer run, a path or
/// a dotted name), with upper and lower case and a digit, not hex only (a git SHA
/// is 40 hex digits), at most three `/` (paths have more), and random-looking.
fn bare_aws_secret(found: &Found<'_>) -> bool {
    let value = found.value;
    let before = found.text[..found.value_start].chars().next_back();
    if before.is_some_and(|c| sticks(c, "/+._-")) {
        return false;
    }
    let mut after = found.text[found.value_end..].chars();
    match after.next() {
        Some('.') if after.next().is_some_and(|c| sticks(c, "_")) => return false,
        Some(c) if sticks(c, "/+=_-") => return false,
        _ => {}
    }
    !value.chars().all(|c| c.is_ascii_hexdigit())
        && value.chars().any(|c| c.is_ascii_uppercase())
        && value.chars().any(|c| c.is_ascii_lowercase())
        && value.chars().any(|c| c.is_ascii_digit())
        && value.matches('/').count() <= 3
        && shannon_entropy(value) >= BARE_AWS_MIN_ENTROPY
}

/// Code, not data: a dotted name without digits (`settings.API_KEY`), a name called
/// or indexed (`get_token()`, `os.environ["KEY"]`, `secrets.token_hex(32)`).
fn looks_like_code(found: &Found<'_>) -> bool {
    let value = found.value;
    let follow = found.text[found.match_end..].chars().next();
    if matches!(follow, Some('(' | '[')) {
        return true;
    }
    if is_identifier(value) && !value.chars().any(|c| c.is_ascii_digit()) {
        return true;
    }
    // `name(` or `name(args)` with no other bracket: a call (a bare generic value
    // stops before `(`, so only a secret_key value gets here).
    match value.split_once('(') {
        Some((name, rest)) => {
            is_identifier(name)
                && (rest.is_empty()
                    || (rest.ends_with(')') && !rest[..rest.len() - 1].contains(['(', ')'])))
        }
        None => false,
    }
}

/// `name = value` rules: placeholders and (bare values) code survive; the value needs
/// a password's length and entropy under a password-ish name (or any `SECRET_KEY`,
/// `password_like`), a secret's otherwise.
fn generic(found: &Found<'_>, password_like: bool) -> bool {
    let value = found.value;
    if is_placeholder(value) || (found.group == 4 && looks_like_code(found)) {
        return false;
    }
    let key = found.key.to_ascii_lowercase();
    let length = value.chars().count();
    if password_like || key.contains("passw") || key.contains("pwd") || key.contains("passphrase") {
        length >= PASSWORD_MIN_LENGTH && shannon_entropy(value) >= PASSWORD_MIN_ENTROPY
    } else {
        length >= SECRET_MIN_LENGTH && shannon_entropy(value) >= SECRET_MIN_ENTROPY
    }
}

/// A random token standing alone: see [`Check::Random`].
fn random(found: &Found<'_>, tenths: u8) -> bool {
    let value = found.value;
    !next_char(found).is_some_and(|c| sticks(c, "_-"))
        && value
            .chars()
            .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && shannon_entropy(value) >= f64::from(tenths) / 10.0
}

/// A wrapped token: see [`Check::Wrapped`].
fn wrapped(found: &Found<'_>, length: usize) -> bool {
    let body = found.value.get(4..).unwrap_or("");
    body.chars().filter(char::is_ascii_alphanumeric).count() == length
        && !next_char(found).is_some_and(|c| c.is_ascii_alphanumeric())
}
