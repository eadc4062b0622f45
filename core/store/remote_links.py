"""One ``RemoteLink`` per thread, so that threads talk to a remote database at the same time.

A Hrana stream is one connection's worth of state (its baton, an open transaction's log, the
commit marker), so a link serves one caller at a time. Giving each thread its own link lets the
store's threads (``core.lanes``' ``store`` lane) wait for their round trips side by side instead
of queueing behind one lock; the server orders their writes as it orders separate processes'
(``BEGIN IMMEDIATE``, busy retries). A file database keeps its single connection: libsql holds
the GIL while it waits for a lock (``core.store.db``).

Links of threads that have ended are closed when the next link is made (lane threads retire
when idle), and their counters are kept, so ``counters()`` covers the process's whole life.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from core.store.remote import RemoteLink


class ThreadLinks:
    def __init__(self, make: Callable[[], RemoteLink]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._links: dict[int, tuple[weakref.ref[threading.Thread], RemoteLink]] = {}
        self._retired = {"round_trips": 0, "waited_ms": 0}
        self._closed = False

    def current(self) -> RemoteLink:
        """The calling thread's link, made on its first use."""
        thread = threading.current_thread()
        with self._lock:
            found = self._links.get(thread.ident or 0)
            if found is not None and found[0]() is thread:
                return found[1]
            if self._closed:
                raise RuntimeError("the database is closed")
            self._prune()
            link = self._make()
            self._links[thread.ident or 0] = (weakref.ref(thread), link)
            return link

    def _prune(self) -> None:
        """Close the links of threads that have ended (lock held)."""
        for ident, (ref, link) in list(self._links.items()):
            thread = ref()
            if thread is None or not thread.is_alive():
                del self._links[ident]
                self.retire(link)

    def retire(self, link: RemoteLink) -> None:
        """Close ``link``, keeping its counters."""
        for name, value in link.counters.items():
            self._retired[name] = self._retired.get(name, 0) + value
        self._retired["round_trips"] += link.round_trips
        self._retired["waited_ms"] += link.waited_ms
        link.close()

    def count(self) -> int:
        with self._lock:
            return len(self._links)

    def counters(self) -> dict[str, int]:
        """Retries, replays, resolved commits, round trips and time waited, all links summed."""
        with self._lock:
            total = dict(self._retired)
            for _, link in self._links.values():
                for name, value in link.counters.items():
                    total[name] = total.get(name, 0) + value
                total["round_trips"] += link.round_trips
                total["waited_ms"] += link.waited_ms
            return total

    def close(self) -> None:
        with self._lock:
            self._closed = True
            links, self._links = list(self._links.values()), {}
            for _, link in links:
                self.retire(link)
