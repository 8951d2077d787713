//! gitleaks' rules, each with a true positive generated from its own regex and a
//! near-miss made by breaking the keyword; and the secrets a security review found
//! missing, each named.

use super::gitleaks::{Allow, GitleaksRule, GITLEAKS_DROPPED, GITLEAKS_RULES};
use super::*;
use rand::{rngs::StdRng, RngExt as _, SeedableRng};
use regex_syntax::hir::{Hir, HirKind};

/// Tries per rule to generate a sample that its keyword gate, entropy and allowlists accept.
const TRIES: u64 = 400;

fn run(text: &str) -> Redacted {
    redact(text, &rules_with(&[]).expect("rules"))
}

/// `sample` in a line that holds one of the rule's keywords (gitleaks gates a rule on
/// its keywords anywhere in the text, not only in the match: `facebook` for a
/// Facebook token; an unescaped `.` in a pattern may not have drawn a keyword's `.`).
fn in_context(rule: &GitleaksRule, sample: &str) -> String {
    let lowered = sample.to_ascii_lowercase();
    if rule.keywords.iter().any(|k| lowered.contains(k)) {
        format!("value: {sample}")
    } else {
        format!("{} {sample}", rule.keywords[0])
    }
}

/// The span of the rule's secret in `line`, if the rule (regex, gates) accepts it.
fn secret_of(
    rule: &GitleaksRule,
    regex: &Regex,
    allow: &Allow,
    line: &str,
) -> Option<(usize, usize)> {
    let caps = regex.captures(line)?;
    let whole = caps.get(0)?;
    let secret = match rule.secret_group {
        Some(g) => caps.get(g)?,
        None => (1..caps.len()).find_map(|g| caps.get(g)).unwrap_or(whole),
    };
    if secret.is_empty() || !allow.passes(line, (whole.start(), whole.end()), secret.as_str()) {
        return None;
    }
    Some((secret.start(), secret.end()))
}

/// `hir` without anchors and word boundaries (the generator cannot produce them; a
/// sample that breaks one is rejected by the real regex and another is drawn).
fn without_looks(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(rep) => {
            let mut rep = rep.clone();
            rep.sub = Box::new(without_looks(&rep.sub));
            Hir::repetition(rep)
        }
        HirKind::Capture(cap) => {
            let mut cap = cap.clone();
            cap.sub = Box::new(without_looks(&cap.sub));
            Hir::capture(cap)
        }
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(without_looks).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(without_looks).collect()),
        _ => hir.clone(),
    }
}

fn generator(pattern: &str) -> rand_regex::Regex {
    let hir = regex_syntax::Parser::new().parse(pattern).expect("parses");
    rand_regex::Regex::with_hir(without_looks(&hir), 6).expect("generator")
}

/// `sample` with a `#` in the middle of every occurrence of every keyword.
fn broken(rule: &GitleaksRule, sample: &str) -> String {
    let mut bytes = sample.as_bytes().to_vec();
    let lowered = sample.to_ascii_lowercase();
    for keyword in rule.keywords {
        for (at, _) in lowered.match_indices(keyword) {
            bytes[at + keyword.len() / 2] = b'#';
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn every_gitleaks_rule_has_a_true_positive_and_a_near_miss() {
    let mut failures = Vec::new();
    for (index, rule) in GITLEAKS_RULES.iter().enumerate() {
        let regex = Regex::new(rule.pattern).expect("compiles");
        let allow = Allow::new(rule).expect("allowlists compile");
        let generator = generator(rule.pattern);
        let mut rng = StdRng::seed_from_u64(index as u64);
        let found = (0..TRIES).find_map(|_| {
            let sample: String = rng.sample(&generator);
            let line = in_context(rule, &sample);
            secret_of(rule, &regex, &allow, &line).map(|span| (line, span))
        });
        let Some((line, (start, end))) = found else {
            failures.push(format!("{}: no accepted sample in {TRIES} tries", rule.id));
            continue;
        };
        // In a line of text, the full rule set redacts the secret (this rule or an
        // earlier one that names it better).
        let secret = &line[start..end];
        let out = run(&line);
        if out.text.contains(secret) {
            failures.push(format!("{}: {secret:?} survived in {line:?}", rule.id));
        }
        let near = broken(rule, &line);
        let missed = run(&near);
        if missed.findings.iter().any(|f| f.rule == rule.id) {
            failures.push(format!(
                "{}: still fires on the near-miss {near:?}",
                rule.id
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rules failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn only_path_bound_rules_are_dropped() {
    let dropped: Vec<&str> = GITLEAKS_DROPPED.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        dropped,
        [
            "freemius-secret-key",
            "hashicorp-tf-password",
            "kubernetes-secret-yaml",
            "nuget-config-password"
        ]
    );
    assert!(GITLEAKS_DROPPED
        .iter()
        .all(|(_, why)| why.contains("no file name")));
    assert!(GITLEAKS_RULES.len() >= 215);
    assert!(gitleaks::GITLEAKS_NOTICE.contains("MIT License"));
}

/// (what, the secret, the text it is in): each was missed by the redaction on main.
const REVIEW_MISSES: [(&str, &str, &str); 17] = [
    ("sf bare", "sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg", "sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg"),
    ("sf in a command", "sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg", "$ sf runs list --token sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg --project 3"),
    ("hugging face", "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", "HF_TOKEN=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\n"),
    ("pypi", "pypi-AgEIcHlwaS5vcmcCJDk3ZDY1YjM2LTA4NzQtNDE5Yy1hMGY5LTk2ZjYxYjQxYmQ3NwACKlsz", "twine upload -u __token__ -p pypi-AgEIcHlwaS5vcmcCJDk3ZDY1YjM2LTA4NzQtNDE5Yy1hMGY5LTk2ZjYxYjQxYmQ3NwACKlsz"),
    ("stripe webhook", "whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g", "STRIPE_WEBHOOK_SECRET=whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g"),
    ("databricks", "dapi3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5", "DATABRICKS_TOKEN dapi3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5\n"),
    ("azure sas", "Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D", "https://acme.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r&sig=Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D"),
    ("digitalocean", "doo_v1_3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4", "export DO=doo_v1_3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4\n"),
    ("heroku v2", "HRKU-AAx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Qw5Er4Ty3Ui2Op1As0Df", "heroku: HRKU-AAx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Qw5Er4Ty3Ui2Op1As0Df\n"),
    (".npmrc _auth", "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=", "registry=https://npm.acme.io/\n_auth=ZGVwbG95OlpxOHdQMm1MeDdSdjQ=\nalways-auth=true\n"),
    ("docker auth", "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=", "{\"auths\": {\"ghcr.io\": {\"auth\": \"ZGVwbG95OlpxOHdQMm1MeDdSdjQ=\"}}}"),
    ("kubeconfig", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB", "users:\n- name: admin\n  user:\n    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n"),
    ("jwt, unsigned", "eyJhbGciOiJub25lIn0.eyJyb2xlIjoiYWRtaW4ifQ.", "Authorization header was eyJhbGciOiJub25lIn0.eyJyb2xlIjoiYWRtaW4ifQ. (alg none)"),
    ("npm token", "npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3", "//registry.npmjs.org/:_authToken=npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3\n"),
    ("npm token bare", "npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3", "use npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3 to publish"),
    ("github, zero-width split", "ghp_R8sK2mQ9vX4tL7pB1nC\u{200b}6dF3hJ5wY0zA2eG8u", "token ghp_R8sK2mQ9vX4tL7pB1nC\u{200b}6dF3hJ5wY0zA2eG8u here"),
    ("github, wrapped", "ghp_R8sK2mQ9vX4tL7pB1nC6dF3h\n> J5wY0zA2eG8u", "> git push with ghp_R8sK2mQ9vX4tL7pB1nC6dF3h\n> J5wY0zA2eG8u and it worked\n"),
];

#[test]
fn the_secrets_the_review_found_missing() {
    for (what, secret, text) in REVIEW_MISSES {
        let out = run(text);
        let pieces: Vec<&str> = secret
            .split(['\u{200b}', '\n'])
            .filter(|p| p.len() > 6)
            .collect();
        assert!(
            pieces.iter().all(|piece| !out.text.contains(piece)),
            "{what}: {secret:?} survived: {:?}",
            out.text
        );
        assert!(
            out.findings.iter().all(|f| !f.rule.is_empty()),
            "{what}: a finding without rule"
        );
    }
}

#[test]
fn look_alikes_are_not_redacted() {
    for text in [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
        "id: 123e4567-e89b-12d3-a456-426614174000",
        "digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "image@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
        "the module sf_native is built with maturin; see sf_web and sf_cli",
        "?sig=short&sv=1",
        "client-key-data: ${CLIENT_KEY}",
    ] {
        assert_eq!(run(text).findings, vec![], "{text:?}");
    }
}

#[test]
fn a_zero_width_split_token_is_redacted_whole_with_offsets_in_the_original() {
    let text = "a ghp_R8sK2mQ9vX4tL7pB1nC\u{200b}6dF3hJ5wY0zA2eG8u b";
    let out = run(text);
    assert_eq!(out.text, "a [REDACTED:github_token] b");
    assert_eq!((out.findings[0].start, out.findings[0].end), (2, 43));
    assert_eq!(out.findings[0].rule, "sf.github_token");
}

#[test]
fn findings_name_the_rule_that_matched() {
    let out = run("HF_TOKEN=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\nsf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg");
    let rules: Vec<&str> = out.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, ["huggingface-access-token", "sf.sf_api_token"]);
}
