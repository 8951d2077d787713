"""Realistic (fake) secrets of every kind in ``sf_native.SECRET_KINDS``, in the places
they turn up — env files, code, logs, URLs, headers — and near-misses that must
survive redaction untouched. Shared by the native tests and the benchmark."""

from __future__ import annotations

PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aFDrBz9vFqU4yU0P6w5gQmJ0d3WbN4h3Zx5W7Kq9p8R2v1Xo3LmT6YbHc4Nf5Jt2\n"
    "-----END RSA PRIVATE KEY-----"
)

SF_TOKEN = "sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg"

# (kind, the secret, the text it appears in)
SAMPLES: list[tuple[str, str, str]] = [
    ("private_key", PRIVATE_KEY, f"deploy key:\n{PRIVATE_KEY}\n"),
    (
        "aws_access_key_id",
        "AKIAZ7QJ3N5R8TXW2PLM",
        "export AWS_ACCESS_KEY_ID=AKIAZ7QJ3N5R8TXW2PLM\n",
    ),
    (
        "aws_secret_access_key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9vL2m",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT9vL2m\n",
    ),
    (
        "github_token",
        "ghp_R8sK2mQ9vX4tL7pB1nC6dF3hJ5wY0zA2eG8u",
        "git clone https://x:ghp_R8sK2mQ9vX4tL7pB1nC6dF3hJ5wY0zA2eG8u@github.com/o/r\n",
    ),
    (
        "github_token",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234",
        'token: "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01234"',
    ),
    (
        "slack_token",
        "xoxb-2847561930-4857201938-Xk3Lm8Np2Qr7St4Uv9Wx5Yz1",
        "SLACK_BOT_TOKEN=xoxb-2847561930-4857201938-Xk3Lm8Np2Qr7St4Uv9Wx5Yz1\n",
    ),
    (
        "slack_webhook",
        "https://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1",
        "curl -X POST https://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1 -d @msg.json",
    ),
    (
        "anthropic_api_key",
        "sk-ant-api03-Qw8Er5Ty2Ui9Op3As6Df1Gh4Jk7Lz0Xc3Vb6Nm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz9X",
        "client = Anthropic(api_key='sk-ant-api03-Qw8Er5Ty2Ui9Op3As6Df1Gh4Jk7Lz0Xc3Vb6Nm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz9X')",
    ),
    (
        "openai_api_key",
        "sk-proj-Vb3N8qR2tY6uI9oP1aS4dF7gH0jK5lZ3xC6vB9nM2qW5eR8t",
        "2026-11-23 04:12:01 DEBUG calling with key sk-proj-Vb3N8qR2tY6uI9oP1aS4dF7gH0jK5lZ3xC6vB9nM2qW5eR8t\n",
    ),
    (
        "stripe_key",
        "sk_live_51Hq2Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9",
        "STRIPE_SECRET=sk_live_51Hq2Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "cookie session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c; path=/",
    ),
    (
        "bearer_token",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0ZxYwVu",
        "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ZxYwVu\r\n",
    ),
    (
        "url_password",
        "Zq8wP2mLx7Rv4",
        "DATABASE_URL=postgres://deploy:Zq8wP2mLx7Rv4@db.internal:5432/app\n",
    ),
    (
        "generic_secret",
        "h7G2kP9xQ4mZ8vR3tL6wN1bY5cJ0",
        'config = {"api_key": "h7G2kP9xQ4mZ8vR3tL6wN1bY5cJ0", "region": "eu-west-1"}',
    ),
    ("generic_secret", "Tr0ub4dor&3xKq9!vLm2", "DB_PASSWORD=Tr0ub4dor&3xKq9!vLm2\n"),
    # The kinds a security review found missing.
    (
        "google_api_key",
        "AIzaSyhouppeqTMd2qT1XWE1CqxdYGsDccJ91HO",
        "GET https://maps.googleapis.com/maps/api/geocode/json?address=Oslo&key=AIzaSyhouppeqTMd2qT1XWE1CqxdYGsDccJ91HO\n",
    ),
    (
        "gitlab_token",
        "glpat-Xk3Lm8Np2Qr7St4Uv9Wx",
        "git remote add origin https://oauth2:glpat-Xk3Lm8Np2Qr7St4Uv9Wx@gitlab.com/acme/api.git",
    ),
    (
        "twilio_api_key",
        "SK2c7e4f9a1b3d5e6f708192a3b4c5d6e7",
        'client = Client("SK2c7e4f9a1b3d5e6f708192a3b4c5d6e7", api_secret, account_sid)',
    ),
    (
        "sendgrid_api_key",
        "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",
        "SENDGRID_API_KEY=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\n",
    ),
    (
        "mailgun_api_key",
        "key-3f9a2c1e8b7d6f5a4c3b2a19k8j7h6g5",
        "curl -s --user 'api:key-3f9a2c1e8b7d6f5a4c3b2a19k8j7h6g5' https://api.mailgun.net/v3/mg.acme.io/messages",
    ),
    (
        "azure_storage_key",
        "k1urN0XtzWbnXjgSTdd8PM5Pp/7vtA3R6DiZezwfg5y9cqBruxXI21kXNxSwH7/1K7wP94pJmBDal6Q0xdTuTB==",
        "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey=k1urN0XtzWbnXjgSTdd8PM5Pp/7vtA3R6DiZezwfg5y9cqBruxXI21kXNxSwH7/1K7wP94pJmBDal6Q0xdTuTB==;EndpointSuffix=core.windows.net",
    ),
    (
        "mysql_password",
        "K8s!vR2qLm9x",
        "$ mysql -h db.internal -u deploy -pK8s!vR2qLm9x app_prod < backup.sql\n",
    ),
    (
        "secret_key",
        "django-insecure-9x#k(2v@q!z7m_l$w3^e8r&t*y)u0i-p=a+s",
        "SECRET_KEY=django-insecure-9x#k(2v@q!z7m_l$w3^e8r&t*y)u0i-p=a+s\n",
    ),
    ("url_password", "Hq7vN2xK9pLm", "REDIS_URL=redis://:Hq7vN2xK9pLm@cache.internal:6379/0\n"),
    (
        "aws_secret_access_key",
        "pOnC1/4EakoKm5b/OAYGSTWjRlLK6sNdVU72lZ+o",
        "Access key ID,Secret access key\nAKIAZ7QJ3N5R8TXW2PLM,pOnC1/4EakoKm5b/OAYGSTWjRlLK6sNdVU72lZ+o\n",
    ),
]

SAMPLES += [
    # SF's own rules added with gitleaks' set: the formats gitleaks has no rule for.
    (
        "sf_api_token",
        "sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg",
        "$ sf runs list --token sf_Q2hhbmdlZC1tZS1zb29uLTlmOGU3ZDZjNWI0YTM5Mjg --project 3",
    ),
    (
        "stripe_webhook_secret",
        "whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g",
        "STRIPE_WEBHOOK_SECRET=whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g",
    ),
    (
        "azure_sas_signature",
        "Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D",
        "https://acme.blob.core.windows.net/logs/a.txt?sv=2022-11-02&se=2026-12-01&sr=b&sp=r"
        "&sig=Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D",
    ),
    (
        "npm_auth",
        "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=",
        "registry=https://npm.acme.io/\n_auth=ZGVwbG95OlpxOHdQMm1MeDdSdjQ=\nalways-auth=true\n",
    ),
    (
        "docker_auth",
        "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=",
        '{"auths": {"ghcr.io": {"auth": "ZGVwbG95OlpxOHdQMm1MeDdSdjQ="}}}',
    ),
    (
        "kube_client_key",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        "users:\n- name: admin\n  user:\n"
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB\n",
    ),
]

#: What a security review found the redaction missing: (what, the secret, the text).
#: Each came through unredacted before gitleaks' rule set and SF's additions.
REVIEW_MISSES: list[tuple[str, str, str]] = [
    (what, secret, text)
    for what, secret, text in [
        ("sf token, bare", SF_TOKEN, SF_TOKEN),
        (
            "sf token, in a command",
            SF_TOKEN,
            f"$ sf runs list --token {SF_TOKEN} --project 3",
        ),
        (
            "hugging face",
            "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",
            "HF_TOKEN=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",
        ),
        (
            "pypi",
            "pypi-AgEIcHlwaS5vcmcCJDk3ZDY1YjM2LTA4NzQtNDE5Yy1hMGY5LTk2ZjYxYjQxYmQ3NwACKlsz",
            "twine upload -u __token__ -p "
            "pypi-AgEIcHlwaS5vcmcCJDk3ZDY1YjM2LTA4NzQtNDE5Yy1hMGY5LTk2ZjYxYjQxYmQ3NwACKlsz dist/*",
        ),
        (
            "stripe webhook",
            "whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g",
            "whsec_7pQ2xZ9vK4mL8nR3tW6yB1cF5hJ0sD2g",
        ),
        (
            "databricks",
            "dapi3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5",
            "DATABRICKS dapi3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5\n",
        ),
        (
            "azure sas",
            "Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D",
            "?sv=2022-11-02&sig=Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef%2BGh3Ij8Kl%3D",
        ),
        (
            "digitalocean",
            "doo_v1_3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4",
            "export DO=doo_v1_3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4\n",
        ),
        (
            "heroku",
            "HRKU-AAx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Qw5Er4Ty3Ui2Op1As0Df",
            "heroku: HRKU-AAx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Az6Qw5Er4Ty3Ui2Op1As0Df\n",
        ),
        (".npmrc _auth", "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=", "_auth=ZGVwbG95OlpxOHdQMm1MeDdSdjQ=\n"),
        ("docker auth", "ZGVwbG95OlpxOHdQMm1MeDdSdjQ=", '{"auth": "ZGVwbG95OlpxOHdQMm1MeDdSdjQ="}'),
        (
            "kubeconfig",
            "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
            "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
        ),
        (
            "jwt, unsigned (alg none)",
            "eyJhbGciOiJub25lIn0.eyJyb2xlIjoiYWRtaW4ifQ.",
            "Authorization header was eyJhbGciOiJub25lIn0.eyJyb2xlIjoiYWRtaW4ifQ. (alg none)",
        ),
        (
            "npm token",
            "npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3",
            "use npm_Xk3Lm8Np2Qr7St4Uv9Wx5Yz1Ab6Cd0Ef2Gh3 to publish",
        ),
        (
            "github, zero-width split",
            "ghp_R8sK2mQ9vX4tL7pB1nC\u200b6dF3hJ5wY0zA2eG8u",
            "token ghp_R8sK2mQ9vX4tL7pB1nC\u200b6dF3hJ5wY0zA2eG8u here",
        ),
        (
            "github, wrapped",
            "ghp_R8sK2mQ9vX4tL7pB1nC6dF3h\n> J5wY0zA2eG8u",
            "> pushed with ghp_R8sK2mQ9vX4tL7pB1nC6dF3h\n> J5wY0zA2eG8u and it worked\n",
        ),
    ]
]

#: Look-alikes that must not be redacted (hashes, ids, names).
LOOK_ALIKES: list[str] = [
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
    "id: 123e4567-e89b-12d3-a456-426614174000",
    "digest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "image@sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "the module sf_native is built with maturin; see sf_web and sf_cli",
]

# Text that looks a little like a secret and must come through unchanged.
NEAR_MISSES: list[str] = [
    "token = get_token()",
    "api_key = settings.API_KEY",
    "password: changeme",
    "API_KEY=${API_KEY}",
    "secret = '<your-secret-here>'",
    "OPENAI_API_KEY=your-key-here",
    "AWS_SECRET_ACCESS_KEY=",
    "git checkout 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "https://example.com/path?page=2&sort=desc",
    "postgres://localhost:5432/app",
    "the word skeleton and sk-8 skates",
    "AKIA is how AWS key ids begin",
    "Bearer tokens go in the Authorization header",
    "uuid = 123e4567-e89b-12d3-a456-426614174000",
    "-----BEGIN PUBLIC KEY-----",
    "token_count = 4096",
    "password_hash = make_password(raw)",
    # Documented example keys (AWS's, the Azure storage emulator's) are kept as they are.
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAI44QH8DHBEXAMPLE,je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "UseDevelopmentStorage: AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    # A git SHA is 40 hex digits, like a bare AWS secret's length.
    "Merge: 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
    "def testCase1ShouldReturnValidResponseForAll(self):",
    "SECRET_KEY = get_random_secret_key()",
    'SECRET_KEY = env("DJANGO_SECRET_KEY")',
    "mysql -u root -p app_prod",
    "redis://:${REDIS_PASSWORD}@cache:6379/0",
    "a key-value store keeps key-abcdefghijklmnopqrstuvwxyzabcdef",
]
