"""``iris dev`` stops on SIGTERM or Ctrl-C within ``shutdown_seconds``, whatever is stuck.

uvicorn's own shutdown waits for open requests, then the lifespan waits for running turns, then
the interpreter waits for non-daemon threads: each can wait forever on a thread blocked in a
system call. The first signal therefore also arms a deadline after which the process ends with
``os._exit``. Turns cut short stay pending and are resumed by the sweeper at the next start.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import uvicorn


class BoundedServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, seconds: float) -> None:
        super().__init__(config)
        self.seconds = seconds
        self._armed = False

    def handle_exit(self, sig: int, frame: Any) -> None:
        if not self._armed:
            self._armed = True
            threading.Thread(target=_exit_after, args=(self.seconds, 128 + sig),
                             name="exit-deadline", daemon=True).start()
        super().handle_exit(sig, frame)


def _exit_after(seconds: float, code: int) -> None:
    time.sleep(seconds)
    sys.stderr.write(f"iris: still stopping after {seconds:g} s; exiting now\n")
    sys.stderr.flush()
    os._exit(code)


def serve_until_stopped(app: Any, *, host: str, port: int, seconds: float) -> None:
    """Serve ``app`` until a signal; open requests get half of ``seconds`` to finish."""
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            timeout_graceful_shutdown=max(1, int(seconds / 2)))
    BoundedServer(config, seconds).run()
