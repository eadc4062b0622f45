"""Clone to first answer, as a new user meets it: `git clone`, then `make run` with nothing
configured (so it installs Iris, then the embedded demo model and its engine), then "hello" typed
at the chat prompt; times each step until the demo model's answer is printed. Then the first
hour's steps, each timed and checked: `/cron` with no jobs names `/cron add`; `/remember I live
in Lisbon`, `/new`, `/memory` shows it, and a question in the new session (whose prompt carries
it: read from the database after `/exit`); then `/exit`.

pip's cache is off (PIP_NO_CACHE_DIR=1) so every package is downloaded, as on a fresh machine;
`--pip-cache` keeps it. IRIS_* variables are cleared and IRIS_HOME is a fresh directory.

Run: python3 bench/clone_to_first_answer.py [--source REPO] [--pip-cache]
"""

from __future__ import annotations

import argparse
import codecs
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPT, ANSWER = "you › ", "iris › "


class Watch:
    """A process's output, read on a thread, each line's arrival time kept."""

    def __init__(self, process: subprocess.Popen[bytes], started: float) -> None:
        self.text, self.started = "", started
        self.lines: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, args=(process,), daemon=True).start()

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        decoder, line = codecs.getincrementaldecoder("utf-8")(errors="replace"), ""
        while chunk := process.stdout.read1(4096):  # type: ignore[attr-defined]
            text = decoder.decode(chunk)
            with self.changed:
                self.text += text
                for ch in text:
                    line += ch
                    if ch == "\n":
                        self.lines.append((time.perf_counter() - self.started, line.rstrip()))
                        print(f"{self.lines[-1][0]:7.1f} s  {line.rstrip()}", flush=True)
                        line = ""
                self.changed.notify_all()

    def wait(self, fragment: str, after: int = 0, timeout: float = 7200) -> float:
        deadline = time.monotonic() + timeout
        with self.changed:
            while fragment not in self.text[after:]:
                if not self.changed.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"no {fragment!r} after {timeout:.0f} s")
        return time.perf_counter() - self.started


FIRST_HOUR = [  # typed at the prompt, and what its answer must contain
    ("/cron", "/cron add"),
    ("/remember I live in Lisbon", "Added to user."),
    ("/new", "Started a new session."),
    ("/memory", "[user] I live in Lisbon"),
    ("where do I live?", ""),
]


def first_hour_step(make: subprocess.Popen[bytes], watch: Watch, text: str,
                    expect: str) -> float:
    """Type ``text``; seconds until its answer and the next prompt, the answer checked."""
    assert make.stdin is not None
    typed = len(watch.text)
    sent = time.perf_counter()
    make.stdin.write(text.encode() + b"\n")
    make.stdin.flush()
    watch.wait(ANSWER, after=typed)
    answered = watch.text.find(ANSWER, typed)
    watch.wait(PROMPT, after=answered)
    took = time.perf_counter() - sent
    answer = watch.text[answered:].split(PROMPT, 1)[0]
    if expect not in answer:
        raise AssertionError(f"{text!r} answered {answer!r}, without {expect!r}")
    return took


def prompt_carries(work: Path, fact: str) -> bool:
    """Whether the latest session's frozen system prompt holds ``fact`` (read after /exit)."""
    import sqlite3

    db = sqlite3.connect(work / "iris-home" / "iris.db")
    try:
        row = db.execute("SELECT system_prompt FROM sessions ORDER BY started_at DESC "
                         "LIMIT 1").fetchone()
    finally:
        db.close()
    return bool(row and row[0] and fact in row[0])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default=str(ROOT), help="the repository to clone")
    parser.add_argument("--pip-cache", action="store_true", help="let pip use its cache")
    parser.add_argument("--branch", default=subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True,
        text=True).stdout.strip() or None, help="the branch to clone [default: this one]")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="iris-first-answer-"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("IRIS_", "VIRTUAL_ENV", "MAKE", "PYTHONPATH"))}
    env["IRIS_HOME"] = str(work / "iris-home")
    if not args.pip_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    print("load average (1, 5, 15 min) at the start: "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()), flush=True)
    started = time.perf_counter()
    branch = ["--branch", args.branch] if args.branch else []
    subprocess.run(["git", "clone", "--quiet", *branch, args.source, str(work / "iris")],
                   check=True)
    cloned = time.perf_counter() - started
    print(f"{cloned:7.1f} s  cloned", flush=True)
    make = subprocess.Popen(["make", "run"], cwd=work / "iris", env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    watch = Watch(make, started)
    try:
        prompt_at = watch.wait(PROMPT)
        assert make.stdin is not None
        typed = len(watch.text)
        make.stdin.write(b"hello\n")
        make.stdin.flush()
        answer_at = watch.wait(ANSWER, after=typed)
        watch.wait(PROMPT, after=typed)
        hour = [first_hour_step(make, watch, text, expect) for text, expect in FIRST_HOUR]
        make.stdin.write(b"/exit\n")
        make.stdin.flush()
        make.wait(timeout=120)
        carried = prompt_carries(work, "I live in Lisbon")
    finally:
        if make.poll() is None:
            os.killpg(make.pid, 9)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        shutil.rmtree(work, ignore_errors=True)
    steps = [(at, line.split(" (once")[0]) for at, line in watch.lines
             if line.startswith(("Installing", "Installed", "Building", "Built"))]
    print("\nclone to first answer:")
    print(f"  {cloned:7.1f} s  git clone done")
    for at, line in steps:
        print(f"  {at:7.1f} s  {line}")
    print(f"  {prompt_at:7.1f} s  chat prompt shown")
    print(f"  {answer_at:7.1f} s  first answer printed "
          f"({answer_at / 60:.1f} min; {answer_at - prompt_at:.1f} s after 'hello')")
    print("\nthe first hour (each answer checked):")
    for (text, _), took in zip(FIRST_HOUR, hour, strict=True):
        print(f"  {took:7.1f} s  {text}")
    print(f"  the new session's prompt carries the fact: {carried}")
    print(f"load average (1, 5, 15 min) at the end: {load}")
    return 0 if carried else 1


if __name__ == "__main__":
    sys.exit(main())
