from tests.core.skills.conftest import alice, bob, editor, library

__all__ = ["alice", "bob", "editor", "library"]
