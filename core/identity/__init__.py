"""Identity and access: pairing codes, allow-lists, account links (see docs/memory.md)."""
