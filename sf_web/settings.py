"""SF settings: everything comes from the environment (see README, "Environment").

With nothing set SF runs embedded for a one-person trial: SQLite under ``.sf/``, an
in-memory channel layer and Celery tasks executed inline. ``DATABASE_URL``
(PostgreSQL) and ``REDIS_URL`` switch to team mode: PostgreSQL, the Redis channel
layer and Celery workers. ``SF_PROFILE=production`` hardens everything that
``manage.py check --deploy`` looks at.
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from sf_core.env import Env
from sf_web.origins import hosts_from_env, origins_from_env

# litellm fetches a price map from the internet at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

env = Env()
BASE_DIR = Path(__file__).resolve().parent.parent

SF_PROFILE = env.choice("SF_PROFILE", "development", ("development", "production"))
PRODUCTION = SF_PROFILE == "production"
SF_DATA_DIR = Path(env.string("SF_DATA_DIR", str(BASE_DIR / ".sf"))).resolve()

# --- core -----------------------------------------------------------------------------

# Django's debug pages show settings and the URL conf: only when asked for, by name.
DEBUG = env.flag("SF_DEBUG", default=False)
_secret = env.secret("SF_SECRET_KEY", min_length=50)
if _secret is None and PRODUCTION:
    raise ImproperlyConfigured(
        "SF_SECRET_KEY: required when SF_PROFILE=production (50 or more random characters)"
    )
# Development only: a fixed, clearly marked key so sessions survive restarts.
SECRET_KEY = _secret or "sf-development-only-insecure-key-" + "x" * 32
ALLOWED_HOSTS = hosts_from_env(
    env, "SF_ALLOWED_HOSTS", [] if PRODUCTION else ["127.0.0.1", "localhost"]
)
if PRODUCTION and not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "SF_ALLOWED_HOSTS: required when SF_PROFILE=production (the site's host names, "
        "e.g. sf.example.com)"
    )
# Forms and websockets from another origin than the page's own (scheme://host:port)
# are refused unless listed here (sf_web/origins.py checks websockets the same way).
CSRF_TRUSTED_ORIGINS = origins_from_env(env, "SF_CSRF_TRUSTED_ORIGINS")
# A stale token gets a page that says "reload", not Django's technical one.
CSRF_FAILURE_VIEW = "sf_web.errors.csrf_failure"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "axes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "sf_web",
    "agents_app",
    "tasks_app",
    "skills_app",
    "notify_app",
    "dashboard_app",
    "ninja",  # serves its own Swagger UI assets to /api/docs (no CDN)
    "api_app",
    "mcp_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Under /api/, Django's 404 and ninja's 405 answer as problem+json too.
    "api_app.middleware.ApiProblemsMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "sf_web.urls"
ASGI_APPLICATION = "sf_web.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    },
]

# --- database -------------------------------------------------------------------------

_database_url = env.database_url("DATABASE_URL")
# daphne's command line started this process (it loads the application, so settings,
# after daphne.cli): the web server.
_SERVING_ASGI = "daphne.cli" in sys.modules
if _database_url is not None and env.flag("SF_DB_POOL", _SERVING_ASGI):
    # The web server: Django runs each ASGI request in a thread of its own, so a
    # persistent connection is opened per request and left open until it ages out — 20
    # busy clients ran PostgreSQL out of connections ("too many clients"). Django's advice
    # for ASGI: no persistent connections, a pool instead. psycopg's pool (Django 5.1+)
    # lends each request a connection and takes it back. SF_DB_POOL=1 asks for it under
    # another ASGI server; workers keep one connection for a whole unit (below).
    _database = _database_url.as_django()
    _pool = {"min_size": 2, "max_size": env.integer("SF_DB_POOL_SIZE", 10, minimum=1)}
    DATABASES = {
        "default": {
            **_database,
            "OPTIONS": {**_database["OPTIONS"], "pool": {**_pool, "timeout": 30}},  # type: ignore[dict-item]
            "CONN_MAX_AGE": 0,  # Django refuses persistent connections with a pool
        }
    }
elif _database_url is not None:
    DATABASES = {
        "default": {
            **_database_url.as_django(),
            # Workers hold a connection for a whole unit; keep it across requests too.
            "CONN_MAX_AGE": env.integer("SF_DB_CONN_MAX_AGE", 60, minimum=0),
            "CONN_HEALTH_CHECKS": True,
        }
    }
else:
    SF_DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": SF_DATA_DIR / "sf.sqlite3",
            # Inline units and the web server share the file: wait rather than fail.
            "OPTIONS": {"timeout": 20},
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SF_TEAM_MODE = _database_url is not None

# --- redis: channels and celery -------------------------------------------------------

REDIS_URL = env.redis_url("REDIS_URL")
# What this installation's names in Redis start with: the channel layer's groups and
# SF's own keys (the providers' rate limits), so two installations, or two test
# workers, on one Redis never share them.
SF_CHANNELS_PREFIX = env.string("SF_CHANNELS_PREFIX", "sf")
if REDIS_URL is not None:
    # Redis pub/sub (the default): a group message is published once, and each web
    # process that has browsers in the group receives it once and hands it to them in
    # memory. The list layer ("lists") pushes one copy per browser into Redis and each
    # process pops them one by one: 200 browsers on one board made 200 round trips per
    # change, and benchmarks/fanout.py's p95 grew to 21-31 s while daphne sat idle.
    # Neither layer keeps a message for a browser that is not connected: a consumer
    # renders its partial afresh when it connects (sf_core/consumers.py).
    if env.choice("SF_CHANNEL_LAYER", "pubsub", ("pubsub", "lists")) == "pubsub":
        CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                "CONFIG": {
                    "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                    "prefix": SF_CHANNELS_PREFIX,
                },
            }
        }
    else:
        CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    # redis-py 8 reads with a 5 s socket timeout by default, the same as
                    # channels-redis's blocking pop (BZPOPMIN, 5 s): an idle pop answered
                    # a moment late timed out and killed the consumer (close 1011) — 4 of
                    # 200 browsers on one board in benchmarks/fanout.py. Reads wait longer.
                    "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                    "prefix": SF_CHANNELS_PREFIX,
                    "capacity": 1000,
                    "expiry": 30,
                },
            }
        }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The decisions about acks, redelivery and time limits live in sf_web/celery.py.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = REDIS_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_DEFAULT_QUEUE = env.string("SF_CELERY_QUEUE", "sf")

# --- auth, sessions, security ---------------------------------------------------------

# Logging in: the password form (django-axes counts its failures), single sign-on
# with OpenID Connect, and which of them is offered (sf_web/settings_auth.py, docs/sso.md).
from sf_web.settings_auth import *  # noqa: E402, F403

SESSION_COOKIE_SECURE = env.flag("SF_SECURE_COOKIES", default=PRODUCTION)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_SSL_REDIRECT = env.flag("SF_SECURE_SSL_REDIRECT", default=PRODUCTION)
# Health checks (compose's, a load balancer's) ask over plain http from inside: answer them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env.integer("SF_HSTS_SECONDS", 31536000 if PRODUCTION else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = env.flag("SF_HSTS_PRELOAD", default=SECURE_HSTS_SECONDS > 0)
if env.flag("SF_BEHIND_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- static files ---------------------------------------------------------------------

STATIC_URL = "static/"
STATIC_ROOT = SF_DATA_DIR / "static"
# Serve straight from the apps' static folders: no collectstatic step to forget.
WHITENOISE_USE_FINDERS = True
# Development picks up edited static files without a restart, debug pages or not.
WHITENOISE_AUTOREFRESH = DEBUG or not PRODUCTION

# --- i18n -----------------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# --- SF engine ------------------------------------------------------------------------

SF_MODEL_FAST = env.string("SF_MODEL_FAST")
SF_MODEL_SMART = env.string("SF_MODEL_SMART")
SF_MODEL_DEEP = env.string("SF_MODEL_DEEP")
SF_MODEL_FALLBACK = env.string("SF_MODEL_FALLBACK")
# Per model mode: where the model is served, its key, and how it calls tools
# (agents_app/runtime/model_settings.py; a project's policy may override them).
# The most max_tokens any model request asks for; each model's own default is a quarter
# of its context window under this (SF_MODEL_<MODE>_MAX_TOKENS sets it per mode).
SF_MODEL_MAX_TOKENS = env.integer("SF_MODEL_MAX_TOKENS", 4096, minimum=64, maximum=1_000_000)
SF_MODEL_TOOL_CALL_STYLES = ("auto", "native", "text", "json_schema")
SF_MODEL_PROMPT_PROFILES = ("auto", "full", "compact")
SF_MODEL_ENDPOINTS = {
    mode: {
        "api_base": env.http_url(f"SF_MODEL_{mode.upper()}_API_BASE") or "",
        "api_key": env.string(f"SF_MODEL_{mode.upper()}_API_KEY"),
        "tool_calls": env.choice(
            f"SF_MODEL_{mode.upper()}_TOOL_CALLS", "auto", SF_MODEL_TOOL_CALL_STYLES
        ),
        # The input window in tokens; 0: litellm's number for the model, else 8192.
        "context_window": env.integer(
            f"SF_MODEL_{mode.upper()}_CONTEXT_WINDOW", 0, minimum=0, maximum=100_000_000
        ),
        # The answer's max_tokens; 0: a quarter of the window, at most SF_MODEL_MAX_TOKENS.
        "max_tokens": env.integer(
            f"SF_MODEL_{mode.upper()}_MAX_TOKENS", 0, minimum=0, maximum=1_000_000
        ),
        # Sampling; unset: temperature 0 (code wants the likeliest answer), top_p unsent.
        "temperature": env.number(f"SF_MODEL_{mode.upper()}_TEMPERATURE", minimum=0, maximum=2),
        "top_p": env.number(f"SF_MODEL_{mode.upper()}_TOP_P", minimum=0, maximum=1),
        # The tools and system prompt a model gets: auto is compact for small windows.
        "prompt_profile": env.choice(
            f"SF_MODEL_{mode.upper()}_PROMPT_PROFILE", "auto", SF_MODEL_PROMPT_PROFILES
        ),
    }
    for mode in ("fast", "smart", "deep", "fallback")
}

SF_WORKER_HEARTBEAT = env.duration(
    "SF_WORKER_HEARTBEAT", timedelta(seconds=10), minimum=timedelta(seconds=1)
)
# A worker whose last heartbeat is older than this is shown (and treated) as gone.
SF_WORKER_STALE_AFTER = env.duration(
    "SF_WORKER_STALE_AFTER", SF_WORKER_HEARTBEAT * 3, minimum=SF_WORKER_HEARTBEAT
)
# Live updates wait in SF_LIVE_LANES lanes (each sends one message at a time, so at
# most that many of the channel layer's pooled Redis connections are in use by a
# process's broadcasts), SF_LIVE_QUEUE messages in all; a full lane drops its oldest
# (counted: sf_core/live.py).
SF_LIVE_LANES = env.integer("SF_LIVE_LANES", 4, minimum=1, maximum=64)
SF_LIVE_QUEUE = env.integer("SF_LIVE_QUEUE", 2000, minimum=1, maximum=1_000_000)
# Trace events, risk decisions and the session's activity commit without waiting for
# the WAL flush (sf_core/db.py, relaxed_commit); 1: wait for it, as other writes do.
SF_TRACE_SYNCHRONOUS_COMMIT = env.flag("SF_TRACE_SYNCHRONOUS_COMMIT", default=False)
# How long a web process keeps a shared page part (the board's partial) before it
# renders it again: sf_core/microcache.py. 0: every request renders its own.
SF_PAGE_CACHE = env.duration("SF_PAGE_CACHE", timedelta(seconds=1), maximum=timedelta(seconds=30))
SF_STATUS_REFRESH = env.duration(
    "SF_STATUS_REFRESH", timedelta(seconds=5), minimum=timedelta(milliseconds=200)
)
# The longest a unit may run before it is stopped (the hard timeout).
SF_UNIT_HARD_TIMEOUT = env.duration(
    "SF_UNIT_HARD_TIMEOUT",
    timedelta(hours=1),
    minimum=timedelta(seconds=10),
    maximum=timedelta(hours=12),
)

# A unit is told to wrap up at the soft timeout, stopped after the idle timeout without
# a tool call or a model answer, and stopped at the hard timeout whatever it is doing.
SF_UNIT_SOFT_TIMEOUT = env.duration(
    "SF_UNIT_SOFT_TIMEOUT", SF_UNIT_HARD_TIMEOUT * 3 / 4, maximum=SF_UNIT_HARD_TIMEOUT
)
SF_UNIT_IDLE_TIMEOUT = env.duration(
    "SF_UNIT_IDLE_TIMEOUT", timedelta(minutes=10), minimum=timedelta(seconds=1)
)
SF_UNIT_MAX_STEPS = env.integer("SF_UNIT_MAX_STEPS", 60, minimum=1, maximum=1000)
SF_VERIFY_TIMEOUT = env.duration(
    "SF_VERIFY_TIMEOUT", timedelta(minutes=10), minimum=timedelta(seconds=1)
)
# Skill proposals from repeated evidence (tasks_app/features/skills/proposals.py): after one, the
# project gets no other for this long (a storm of failures makes one proposal), and only
# this many of the project's latest units are read for matching evidence.
SF_SKILL_PROPOSAL_COOLDOWN = env.duration("SF_SKILL_PROPOSAL_COOLDOWN", timedelta(hours=1))
SF_SKILL_EVIDENCE_WINDOW = env.integer("SF_SKILL_EVIDENCE_WINDOW", 200, minimum=3, maximum=10_000)
# Agent and verify commands run in a bubblewrap sandbox (agents_app/runtime/sandbox.py);
# "off" is the operator's explicit opt-out (warned at start-up and in the log).
SF_SANDBOX = env.choice("SF_SANDBOX", "bwrap", ("bwrap", "off"))
SF_SANDBOX_BWRAP = env.string("SF_SANDBOX_BWRAP", "/usr/bin/bwrap")
# Host directories sandboxed commands also see, read-only (a toolchain under /opt);
# separated by ":". /usr, /bin, /sbin and /lib* are always there.
SF_SANDBOX_RO_PATHS = [p for p in env.string("SF_SANDBOX_RO_PATHS", "").split(":") if p]
# When SF runs as root, bwrap runs as this unprivileged host user (a name or a uid;
# scripts/setup.sh creates sf-sandbox), never as root (agents_app/runtime/sandbox_user.py).
SF_SANDBOX_USER = env.string("SF_SANDBOX_USER", "sf-sandbox")
# A due task that no worker has taken for this long is dispatched again (a message
# lost with a Redis restart); duplicates are harmless because claims are conditional.
SF_REDISPATCH_AFTER = env.duration(
    "SF_REDISPATCH_AFTER", timedelta(seconds=60), minimum=timedelta(seconds=1)
)
# Back-pressure between units and the merge queue: a project starts at most this many
# new units less its approved tasks waiting to be merged (each waiting task keeps its
# worktree; with merges failing, say on a full disk, units kept producing worktrees
# until the disk could not hold the merges' own: benchmarks/chaos.py). The sweep
# dispatches again once merges have drained the queue.
SF_MERGE_BACKLOG_LIMIT = env.integer("SF_MERGE_BACKLOG_LIMIT", 16, minimum=1, maximum=10_000)
SF_SWEEP_INTERVAL = env.duration(
    "SF_SWEEP_INTERVAL", timedelta(seconds=15), minimum=timedelta(seconds=1)
)
# The doctor (docs/doctor.md): free space under SF_DATA_DIR below which disk.space warns
# and fails (a failing check stops dispatch: a worktree would not fit), the clock skew
# between this process, the database and the workers that warns (a skew near
# SF_WORKER_STALE_AFTER makes live workers look dead: that fails), and how long the
# pre-dispatch gate reuses its report.
SF_DOCTOR_DISK_WARNING_MIB = env.integer("SF_DOCTOR_DISK_WARNING_MIB", 2048, minimum=0)
SF_DOCTOR_DISK_ERROR_MIB = env.integer("SF_DOCTOR_DISK_ERROR_MIB", 256, minimum=0)
SF_DOCTOR_CLOCK_SKEW = env.duration(
    "SF_DOCTOR_CLOCK_SKEW", timedelta(seconds=2), minimum=timedelta(milliseconds=1)
)
SF_DOCTOR_GATE_CACHE = env.duration(
    "SF_DOCTOR_GATE_CACHE", timedelta(seconds=5), minimum=timedelta(0)
)

# Notifications (notify_app, docs/notifications.md). A claimed delivery is retried by
# the sweep once its lease is over (a worker died); the lease must outlast the webhook
# timeout (check sf.E020). Failures back off exponentially up to the maximum, and give
# up after the attempts. SF_PUBLIC_URL makes links in emails and webhooks absolute.
SF_NOTIFY_LEASE = env.duration(
    "SF_NOTIFY_LEASE", timedelta(minutes=2), minimum=timedelta(seconds=1)
)
SF_NOTIFY_WEBHOOK_TIMEOUT = env.duration(
    "SF_NOTIFY_WEBHOOK_TIMEOUT", timedelta(seconds=10), minimum=timedelta(milliseconds=100)
)
SF_NOTIFY_BACKOFF = env.duration(
    "SF_NOTIFY_BACKOFF", timedelta(seconds=30), minimum=timedelta(seconds=0)
)
SF_NOTIFY_BACKOFF_MAX = env.duration(
    "SF_NOTIFY_BACKOFF_MAX", timedelta(hours=1), minimum=timedelta(seconds=0)
)
SF_NOTIFY_MAX_ATTEMPTS = env.integer("SF_NOTIFY_MAX_ATTEMPTS", 8, minimum=1)
SF_PUBLIC_URL = env.http_url("SF_PUBLIC_URL") or ""
# Outbound requests SF makes itself (webhooks, forges) and sandboxed commands' egress
# go only to public addresses, in every profile (sf_core/netguard.py). The hosts an
# operator trusts to be internal (a self-hosted GitLab, a local webhook receiver) are
# listed here, by name or literal address; a project's policy cannot add one.
SF_NET_ALLOW_HOSTS = env.csv("SF_NET_ALLOW_HOSTS")
# Tests only (never read from the environment): a name -> address map used instead of
# DNS, so that a test reaches a loopback listener under a made-up domain.
SF_NET_TEST_HOSTS: dict[str, str] = {}
# Forge API hosts a project's policy may name besides the public ones (api.github.com,
# gitlab.com): a self-hosted GitLab or GitHub Enterprise (tasks_app/forge.py).
SF_FORGE_API_HOSTS = env.csv("SF_FORGE_API_HOSTS")
# Workers on many machines (docs/deploy.md): this machine's name among the worker hosts
# (its workers' names end in @SF_WORKER_HOST; the doctor judges processes of this host
# only), and the repositories of record a project's policy may name (``record.url``):
# URL prefixes a server admin lists (ssh://git@git.example.com/, file:///srv/sf/records/);
# none listed: no project leaves single-host mode.
SF_WORKER_HOST = env.string("SF_WORKER_HOST", "") or socket.gethostname()
SF_RECORD_URL_PREFIXES = env.csv("SF_RECORD_URL_PREFIXES")
# Email goes through Django's backend: SMTP by default (EMAIL_HOST, EMAIL_PORT, …),
# the console backend for a trial; tests use locmem.
EMAIL_BACKEND = env.string("SF_EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env.string("EMAIL_HOST", "localhost")
EMAIL_PORT = env.integer("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env.string("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env.string("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env.flag("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env.string("DEFAULT_FROM_EMAIL", "sf@localhost")

# The API's live events (GET /api/sessions/{id}/events, docs/api.md): a heartbeat event
# this often keeps proxies from closing a quiet stream; the stream looks at the
# database when the engine broadcasts, and at least this often without one; a stream
# ends after SF_API_EVENTS_MAX_AGE (the client reconnects with Last-Event-ID), so no
# connection lives forever behind a proxy or a load balancer.
SF_API_EVENTS_HEARTBEAT = env.duration(
    "SF_API_EVENTS_HEARTBEAT", timedelta(seconds=15), minimum=timedelta(milliseconds=100)
)
SF_API_EVENTS_POLL = env.duration(
    "SF_API_EVENTS_POLL", timedelta(seconds=5), minimum=timedelta(milliseconds=100)
)
SF_API_EVENTS_MAX_AGE = env.duration(
    "SF_API_EVENTS_MAX_AGE", timedelta(minutes=30), minimum=timedelta(milliseconds=100)
)

# Headless (``manage.py sf headless``): how often it emits a heartbeat event, how long
# it waits for a running unit to stop after SIGINT/SIGTERM, and after how many units
# one process asks to be restarted with resume (exit 12; 0 = never).
SF_HEADLESS_HEARTBEAT = env.duration(
    "SF_HEADLESS_HEARTBEAT", timedelta(seconds=60), minimum=timedelta(milliseconds=100)
)
SF_HEADLESS_GRACE = env.duration(
    "SF_HEADLESS_GRACE", timedelta(seconds=30), minimum=timedelta(seconds=0)
)
SF_HEADLESS_UNITS_PER_PROCESS = env.integer(
    "SF_HEADLESS_UNITS_PER_PROCESS", 0, minimum=0, maximum=100_000
)
# A replayed model step waits this long, as a live model would (the demo uses it so
# that its progress can be watched on the dashboard); 0 answers at once.
SF_REPLAY_PACE = env.duration(
    "SF_REPLAY_PACE", timedelta(0), minimum=timedelta(0), maximum=timedelta(minutes=1)
)

# Recorded traces the web offers to replay when no model is configured (the intent
# box's pre-flight): every ``*.jsonl`` trace in this directory.
SF_REPLAY_TRACES = Path(env.string("SF_REPLAY_TRACES", str(BASE_DIR / "examples"))).resolve()

# Where a person may register a repository as a project (agents_app.access): absolute
# paths, colon-separated, resolved with symlinks. Default: the home directory of the
# account SF runs as. SF's own checkout is refused whatever this says.
_repo_roots = env.string("SF_REPO_ROOTS", str(Path.home())).split(":")
for _root in filter(str.strip, _repo_roots):
    if not Path(_root).is_absolute():
        raise ImproperlyConfigured(f"SF_REPO_ROOTS: {_root!r} is not an absolute path")
SF_REPO_ROOTS = [str(Path(root).resolve()) for root in _repo_roots if root.strip()]

# --- logging --------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # Secrets never reach a log: every handler redacts the records it writes.
    "filters": {"redact": {"()": "agents_app.gate.redaction.RedactingFilter"}},
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["redact"]}
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        # litellm's own notices (prices, retries) are not an operator's concern.
        "LiteLLM": {"level": "ERROR"},
        "sf": {
            "handlers": ["stderr"],
            "level": env.choice(
                "SF_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
            ),
            "propagate": False,
        },
    },
}
