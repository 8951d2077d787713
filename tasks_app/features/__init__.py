"""The features built on the engine (docs/architecture.md, "Inside tasks_app"):
each imports the domain and the engine, never a surface; they plug into the engine
through ``tasks_app.engine.extensions``."""
