"""One module per schema migration, named mNNN_description.py, each with ``migrate(db)``."""
