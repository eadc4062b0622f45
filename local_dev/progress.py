"""Run a long build step with a line before it and one every 30 s while it runs, its output in
a log (its tail shown when it fails). `make run` installs Iris and the demo model through it,
`make test` its install and the test suite, whose lines also say how far pytest is and about
how long is left (from the ``[ NN%]`` pytest prints):

    python -m local_dev.progress --what "llama.cpp" --expect "5-15 minutes" --log build.log -- \\
        pip install ...
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path


def _elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


VERBS = {"build": ("Building", "building", "Built"),
         "install": ("Installing", "installing", "Installed"),
         "test": ("Running", "running", "Ran")}
PERCENT = re.compile(rb"\[\s*(\d{1,3})%\]")
TAIL_BYTES = 6000


def _last_kb(log: Path) -> bytes:
    """The last 4 KiB of ``log`` (what pytest wrote last), or nothing."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - 4096))
            return handle.read()
    except OSError:
        return b""


def estimate(log: Path, elapsed: float) -> str:
    """``, 40% done, about 6 min left`` from the last percentage pytest wrote, or nothing."""
    found = PERCENT.findall(_last_kb(log))
    percent = int(found[-1]) if found else 0
    if not 0 < percent < 100:
        return ""
    left = elapsed * (100 - percent) / percent
    return f", {percent}% done, about {_elapsed(left)} left"


def run(command: list[str], *, what: str, expect: str, log: Path, every: float = 30.0,
        verb: str = "build") -> int:
    doing, still, done = VERBS[verb]
    print(f"{doing} {what} (once; expect {expect}); output in {log}", flush=True)
    start = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        while True:
            try:
                code = process.wait(timeout=every)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - start
                print(f"  … still {still} {what}: {_elapsed(elapsed)}{estimate(log, elapsed)}",
                      flush=True)
    took = _elapsed(time.monotonic() - start)
    if code != 0:
        print(log.read_text(errors="replace")[-TAIL_BYTES:], file=sys.stderr)
        print(f"{doing} {what} failed after {took} (exit {code}); full output in {log}",
              file=sys.stderr)
        return code
    if verb == "test" and (verdict := summary(log)):
        print(verdict, flush=True)  # pytest's own closing line: how many passed, skipped
    print(f"{done} {what} in {took}.", flush=True)
    return 0


SUMMARY = re.compile(rb"^=*\s*\d+ (?:passed|failed|skipped|errors?)\b.*$", re.MULTILINE)


def summary(log: Path) -> str:
    """The last closing line pytest wrote (``2700 passed, 3 skipped in 512.3s``), or ""."""
    found = SUMMARY.findall(_last_kb(log))
    return found[-1].decode(errors="replace").strip("= \n") if found else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--what", required=True)
    parser.add_argument("--expect", required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--verb", choices=sorted(VERBS), default="build")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    sys.exit(run(command, what=args.what, expect=args.expect, log=args.log, every=args.every,
                 verb=args.verb))


if __name__ == "__main__":
    main()
