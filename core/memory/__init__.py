"""Bounded, curated memory per user that never loses a fact (see docs/memory.md)."""
