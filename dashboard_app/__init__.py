"""The dashboard: system status, recent sessions and health — a consumer of the apps."""
