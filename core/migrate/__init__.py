"""Bringing other agents' homes into Iris (Hermes Agent)."""
