"""Teams: shared notes (and later a shared skill library) among people who keep their own
memory, sessions and skills private. Rows and membership checks: ``core.store.teams`` and
``core.store.team_notes``; the rules for writing notes: ``core.teams.notes``."""
