from core.memory.models import MemoryOperation
from core.memory.ops import Author

AGENT = Author(provenance="agent", who="http:alice", session_id="ses_x")


def op(action, content=None, old_text=None, target="memory"):
    return MemoryOperation(action=action, target=target, content=content, old_text=old_text)
