use super::*;

fn run(text: &str) -> Redacted {
    redact(text, &rules_with(&[]).expect("rules"))
}

fn kinds(text: &str) -> Vec<String> {
    run(text).findings.into_iter().map(|f| f.kind).collect()
}

#[test]
fn every_builtin_rule_compiles_and_is_listed() {
    let rules = rules_with(&[]).expect("rules");
    let names: Vec<&str> = rules.list.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(names, SECRET_KINDS);
}

#[test]
fn specific_kinds_win_over_generic_assignments() {
    let token = format!("ghp_{}", "aB3".repeat(12));
    let out = run(&format!("GITHUB_TOKEN={token}\n"));
    assert_eq!(out.text, "GITHUB_TOKEN=[REDACTED:github_token]\n");
    assert_eq!(
        kinds("key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"),
        ["anthropic_api_key"]
    );
    assert_eq!(
        kinds("OPENAI_API_KEY=sk-proj-abcDEF123ghiJKL456mnoPQR789"),
        ["openai_api_key"]
    );
}

#[test]
fn url_passwords_keep_user_and_host() {
    let out = run("postgres://app:s3cr3t-pw@db.internal:5432/app");
    assert_eq!(
        out.text,
        "postgres://app:[REDACTED:url_password]@db.internal:5432/app"
    );
    assert_eq!(out.findings[0].start, 15);
    assert!(run("postgres://postgres@127.0.0.1/sf").findings.is_empty());
    assert!(run("https://user:${DB_PASSWORD}@host/").findings.is_empty());
}

#[test]
fn near_misses_survive() {
    for text in [
        "use sk-learn style names, e.g. sk-this-is-not-a-key-at-all-really",
        "commit 3f5e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f",
        "id = 550e8400-e29b-41d4-a716-446655440000",
        "password = changeme",
        "password=",
        "token = get_token()",
        "api_key = settings.API_KEY",
        "max_tokens = 4096",
        "tokenizer = \"bert-base-uncased\"",
        "secret_key = os.environ[\"SECRET_KEY\"]",
    ] {
        assert_eq!(run(text).text, text, "{text}");
    }
}

#[test]
fn generic_assignments_need_entropy() {
    assert_eq!(kinds("API_KEY=Zx81kQ02mP9vL3tR"), ["generic_secret"]);
    assert_eq!(
        kinds("\"token\": \"a8f5f167f44f4964e6c998dee827110c\""),
        ["generic_secret"]
    );
    assert_eq!(kinds("password: hunter2"), ["generic_secret"]);
    assert!(kinds("API_KEY=aaaabbbb").is_empty());
}

#[test]
fn private_key_blocks_including_json_escaped_ones() {
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----";
    let out = run(&format!("key:\n{pem}\nafter"));
    assert_eq!(out.text, "key:\n[REDACTED:private_key]\nafter");
    let json = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n"}"#;
    // The quoted value is longer than the block (it ends in `\n`), and the longest
    // candidate wins, so the whole value goes.
    assert_eq!(
        run(json).text,
        r#"{"private_key": "[REDACTED:generic_secret]"}"#
    );
    // A truncated block is still redacted up to the end of its base64 body.
    assert_eq!(
        run("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n\"}").text,
        "[REDACTED:private_key]\"}"
    );
}

#[test]
fn redaction_is_idempotent_and_offsets_are_characters() {
    let text = "é AKIAIOSFODNN7EXAMPLE and password=Tr0ub4dor&3";
    let once = run(text);
    assert_eq!(once.findings[0].start, 2);
    assert_eq!(once.findings[0].end, 22);
    let twice = run(&once.text);
    assert_eq!(twice.text, once.text);
    assert!(twice.findings.is_empty());
}

#[test]
fn extra_rules_are_used_and_validated() {
    let extra = vec![("acme_token".to_string(), r"acme_([a-z0-9]{8})".to_string())];
    let rules = rules_with(&extra).expect("rules");
    let out = redact("x acme_ab12cd34 y", &rules);
    assert_eq!(out.text, "x acme_[REDACTED:acme_token] y");
    let bad_kind = vec![("bad kind".to_string(), "x".to_string())];
    assert!(matches!(
        rules_with(&bad_kind),
        Err(NativeFailure::InvalidValue(_))
    ));
    let bad_regex = vec![("k".to_string(), "(".to_string())];
    assert!(matches!(
        rules_with(&bad_regex),
        Err(NativeFailure::InvalidValue(_))
    ));
}
