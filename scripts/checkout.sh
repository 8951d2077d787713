# Sourced by scripts/setup.sh. The names that keep two checkouts on one host apart:
# each gets its own PostgreSQL database, Celery queue and channel-layer prefix, derived
# from the checkout's absolute path, unless the environment or .sf/env names them.

# checkout_id PATH: 8 hex digits, stable for one path.
checkout_id() { printf '%s' "$1" | sha256sum | cut -c1-8; }

# checkout_names PATH: "DATABASE CELERY_QUEUE CHANNELS_PREFIX" on one line.
checkout_names() {
  local id; id=$(checkout_id "$1")
  echo "sf_$id sf-$id sf-$id"
}

# env_file_keep FILE NAME...: for each NAME not set in the environment, take its value
# from FILE (an earlier run's .sf/env), so a checkout keeps the names it started with.
env_file_keep() {
  local file=$1 key value name; shift
  [ -f "$file" ] || return 0
  while IFS='=' read -r key value || [ -n "$key" ]; do
    for name in "$@"; do
      if [ "$key" = "$name" ] && [ -z "${!name:-}" ]; then printf -v "$name" '%s' "$value"; fi
    done
  done < "$file"
}
