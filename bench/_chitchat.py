"""Real two-person chats from the BYU PCC Chit-Chat Challenge dataset, as dated sessions.

The dataset (7,168 conversations between students, 2018, MIT licence) ships inside the PyPI
package ``chitchat-dataset``; it is read from the installed package at bench time and never
copied into this repository. Pairs of people who chatted many times become one Iris user each:
every conversation between them is a session (dated by its real start time), the first person's
turns are ``user`` messages and the other's are ``assistant`` messages named after them.
Consecutive messages by one sender are one turn; a turn's id is ``<conversation[:8]>-<index>``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

# (iris user, the person speaking as "I", the other person and the name they go by here)
PAIRS = [
    ("cc-ana", "a54af4d5", "549cc1d1", "Marcus"),
    ("cc-ben", "31267496", "60576dcf", "Tessa"),
    ("cc-cleo", "31267496", "549cc1d1", "Marcus"),
    ("cc-dev", "720840be", "31267496", "Rowan"),
    # added for the fresh held-out questions (bench/_recall_fresh.py)
    ("cc-eli", "31267496", "3863a74c", "Nora"),
    ("cc-fay", "720840be", "549cc1d1", "Jonah"),
    ("cc-gus", "31267496", "70501b84", "Priya"),
    ("cc-hal", "549cc1d1", "6dd41fff", "Lena"),
]


def load_dataset() -> dict[str, Any]:
    try:
        import chitchat_dataset
    except ImportError as exc:
        raise SystemExit(
            "bench needs the chitchat-dataset package (the real conversations it measures on):\n"
            "    .venv/bin/pip install chitchat-dataset==0.9.0"
        ) from exc
    return dict(chitchat_dataset.Dataset())


def sessions() -> list[dict[str, Any]]:
    """Session lines in `iris sessions import` form, oldest first per user."""
    data = load_dataset()
    by_pair: dict[frozenset[str], list[tuple[str, str]]] = defaultdict(list)
    for cid, convo in data.items():
        senders = frozenset(t["sender"][:8] for group in convo["messages"] for t in group)
        by_pair[senders].append((convo["start"], cid))
    out = []
    for user, me, other, name in PAIRS:
        for _start, cid in sorted(by_pair[frozenset({me, other})]):
            messages = []
            for i, group in enumerate(data[cid]["messages"]):
                mine = group[0]["sender"][:8] == me
                text = "\n".join(t["text"] for t in group if t["text"].strip())
                if not text:
                    continue
                item = {"role": "user" if mine else "assistant", "content": text,
                        "timestamp": group[0]["timestamp"], "id": f"{cid[:8]}-{i}"}
                if not mine:
                    item["name"] = name
                messages.append(item)
            if messages:
                out.append({"user": user, "session_id": cid[:8],
                            "started_at": messages[0]["timestamp"],
                            "title": None, "messages": messages})
    return out
