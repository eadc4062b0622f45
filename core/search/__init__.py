"""Full-text search over a user's past and current sessions (FTS5: porter + trigram)."""
