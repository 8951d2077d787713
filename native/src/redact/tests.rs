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
    let mut names: Vec<&str> = Vec::new();
    for rule in &rules.list {
        if !names.contains(&rule.kind.as_str()) {
            names.push(rule.kind.as_str());
        }
    }
    // SF's own kinds first, in priority order, then gitleaks' rule ids.
    assert_eq!(names[..SECRET_KINDS.len()], SECRET_KINDS);
    let ids: Vec<&str> = rules.list.iter().map(|rule| rule.id.as_str()).collect();
    assert_eq!(ids[0], "sf.sf_api_token");
    assert_eq!(
        secret_kinds().len(),
        SECRET_KINDS.len() + gitleaks::GITLEAKS_RULES.len()
    );
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
    let text = "é AKIAZ7QJ3N5R8TXW2PLM and password=Tr0ub4dor&3";
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

#[test]
fn vendor_tokens_the_review_found_missing() {
    for (text, redacted) in [
        (
            "maps key AIzaSyD4x9Qk2mL7vB3nR8tY1uI6oP0aS5dF2gH ok",
            "maps key [REDACTED:google_api_key] ok",
        ),
        (
            "GITLAB_TOKEN=glpat-Xk3Lm8Np2Qr7St4Uv9Wx",
            "GITLAB_TOKEN=[REDACTED:gitlab_token]",
        ),
        (
            "twilio: SK2c7e4f9a1b3d5e6f708192a3b4c5d6e7",
            "twilio: [REDACTED:twilio_api_key]",
        ),
        (
            "MAILGUN=key-3f9a2c1e8b7d6f5a4c3b2a19k8j7h6g5",
            "MAILGUN=[REDACTED:mailgun_api_key]",
        ),
        (
            "sg 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",
            "sg [REDACTED:sendgrid_api_key]",
        ),
        (
            "AccountName=acme;AccountKey=Qm9yZ3lYdz1N0c3RyaW5nS2V5cGxhY2Vob2xkZXJfcmFuZG9tXzQyeHl6YWJj+/ZQ==;EndpointSuffix=core.windows.net",
            "AccountName=acme;AccountKey=[REDACTED:azure_storage_key];EndpointSuffix=core.windows.net",
        ),
    ] {
        assert_eq!(run(text).text, redacted, "{text}");
    }
    // One character too long is another token, not this one.
    let long = "AIzaSyD4x9Qk2mL7vB3nR8tY1uI6oP0aS5dF2gHx";
    assert!(!kinds(long).contains(&"google_api_key".to_string()));
    // Mailgun keys have digits; `key-` and 32 letters is a word.
    assert!(kinds("key-abcdefghijklmnopqrstuvwxyzabcdef").is_empty());
}

#[test]
fn secret_key_lines_and_url_passwords_without_a_user() {
    for (text, redacted) in [
        (
            "SECRET_KEY=django-insecure-9x#k(2v@q!z7m_l$w3^e8r&t*y)u0i-p=a+s",
            "SECRET_KEY=[REDACTED:secret_key]",
        ),
        (
            "SECRET_KEY=hunter2hunter2",
            "SECRET_KEY=[REDACTED:secret_key]",
        ),
        (
            "app.secret_key = b'_5#y2LF4Q8z'",
            "app.secret_key = b'[REDACTED:secret_key]'",
        ),
        (
            "REDIS_URL=redis://:pw12345x@cache:6379/0",
            "REDIS_URL=redis://:[REDACTED:url_password]@cache:6379/0",
        ),
    ] {
        assert_eq!(run(text).text, redacted, "{text}");
    }
    for code in [
        "SECRET_KEY = get_random_secret_key()",
        "SECRET_KEY = env(\"DJANGO_SECRET_KEY\")",
        "SECRET_KEY = secrets.token_hex(32)",
        "SECRET_KEY = settings.OTHER_KEY",
        "SECRET_KEY=$SECRET_KEY",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
    ] {
        assert_eq!(run(code).text, code);
    }
}

#[test]
fn mysql_passwords_on_the_command_line() {
    assert_eq!(
        run("mysql -h db -uroot -pS3cr3tPw app < dump.sql").text,
        "mysql -h db -uroot -p[REDACTED:mysql_password] app < dump.sql"
    );
    assert_eq!(
        run("mysqldump -u root -p'S3 cr3t' app").text,
        "mysqldump -u root -p'[REDACTED:mysql_password]' app"
    );
    for prompt in [
        "mysql -u root -p app",
        "mysql -P 3306 -p$MYSQL_PWD",
        "mysql://db/app -pS3cr3t",
    ] {
        assert_eq!(run(prompt).text, prompt);
    }
}

#[test]
fn bare_aws_secrets_but_never_git_shas_or_paths() {
    assert_eq!(
        run("AKIAZ7QJ3N5R8TXW2PLM,wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9vL2m\n").text,
        "[REDACTED:aws_access_key_id],[REDACTED:aws_secret_access_key]\n"
    );
    for text in [
        "commit 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291",
        "MERGE 3F9A2C1E8B7D6F5A4C3B2A1908F7E6D5C4B3A291",
        "TestCase1ShouldReturnValidResponseForAll",
        "usr/lib/python3/dist/packages/Django/db1",
        "see src/Kx9Qm2Lp7Rv4Tz8Wb3Nc6Yd1Hf5Jg0Sa/Model.java",
        "x/wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9vL2m",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9vL2mQ",
    ] {
        assert_eq!(run(text).text, text, "{text}");
    }
}

#[test]
fn documented_example_keys_are_kept() {
    for text in [
        "AKIAIOSFODNN7EXAMPLE",
        "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIAI44QH8DHBEXAMPLE je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
    ] {
        assert_eq!(run(text).text, text, "{text}");
    }
    // A real key beside an example one is still redacted.
    assert_eq!(
        kinds("AKIAIOSFODNN7EXAMPLE AKIAZ7QJ3N5R8TXW2PLM"),
        ["aws_access_key_id"]
    );
}
