"""Sessions beyond storage: context compression, titles, and transfer (import/export)."""
