from tests.core.memory.conftest import alice, bob, limits

__all__ = ["alice", "bob", "limits"]
