"""The engine's doctor checks, its git checks and ``/doctor heal`` (docs/doctor.md)."""
