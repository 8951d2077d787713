//! SF's own formats that gitleaks' rule set has no rule for: its API tokens first of
//! all, and what a security review found missing. Mirrored in
//! `native/tests/redact_reference.py`.

use super::rules::{spec, Check, Spec};

/// SF's own API tokens (`sf_` and `secrets.token_urlsafe(32)`): bare, in a command, in
/// a header; the first rule of all.
pub fn sf_specs() -> Vec<Spec> {
    vec![spec(
        "sf_api_token",
        r"(?-u:\b)sf_[A-Za-z0-9_-]{43}".into(),
        Check::Random(40),
        &["sf_"],
    )]
}

/// Formats a security review found missing that gitleaks has no rule for.
pub fn format_specs() -> Vec<Spec> {
    vec![
        Spec {
            kind: "github_token",
            // A classic token wrapped at a line's end (a terminal, an e-mail, a quoted
            // reply): the rest on the next line after indentation or a quote mark.
            pattern: r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{1,35}\r?\n[\t >#*/]*[A-Za-z0-9]{1,35}".into(),
            check: Check::Wrapped(36),
            keywords: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            multiline: true,
        },
        spec(
            "stripe_webhook_secret",
            r"(?-u:\b)whsec_[A-Za-z0-9+/=]{24,}".into(),
            Check::Always,
            &["whsec_"],
        ),
        spec(
            "azure_sas_signature",
            // A shared-access-signature URL or connection string: `sig=` and the
            // URL-encoded base64 HMAC (32 bytes: 43+ characters, `%2B` for `+`).
            r"(?i-u:[?&;]sig=)([A-Za-z0-9%+/]{30,}(?:=|%3D){0,2})".into(),
            Check::NotPlaceholder,
            &["sig="],
        ),
        spec(
            "npm_auth",
            // `.npmrc`: `_auth=base64(user:password)`, `//registry/:_authToken=…`,
            // `_password=`.
            r#"(?-u:\b)_(?:auth|authToken|password)[\t ]*=[\t ]*["']?([A-Za-z0-9+/=._~-]{8,})"#
                .into(),
            Check::NotPlaceholder,
            &["_auth", "_password"],
        ),
        spec(
            "docker_auth",
            // docker's `config.json`: `"auth": "base64(user:password)"`.
            r#""(?:auth|identitytoken|registrytoken)"[\t ]*:[\t ]*"([A-Za-z0-9+/=]{8,})""#.into(),
            Check::NotPlaceholder,
            &["\"auth\"", "\"identitytoken\"", "\"registrytoken\""],
        ),
        spec(
            "kube_client_key",
            // kubeconfig: the client's private key, base64, inline.
            r#"(?-u:\b)client-key-data["']?[\t ]*:[\t ]*["']?([A-Za-z0-9+/=]{16,})"#.into(),
            Check::NotPlaceholder,
            &["client-key-data"],
        ),
    ]
}
