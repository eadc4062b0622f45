"""Skill import over real public skills: what is loaded, warned about, quarantined and refused.

    .venv/bin/python bench/skills_import.py [SOURCE ...]

Default source: ../shared/corpora/hermes-skills (Hermes Agent's 191 skills, MIT), read in place
(never copied into the repository). A SOURCE is a directory, an archive, a git URL, or a package
fetched at run time into a temporary directory with the registry's own client:

    npm:NAME@VERSION#SUBDIR     e.g. npm:ecc-universal@2.0.0#package/skills (npm pack)
    pypi:NAME==VERSION#SUBDIR   (pip download --no-deps; a wheel or an sdist)

SUBDIR (optional) is the folder inside the unpacked package that holds the skills.

Also imports the scanner's corpora made into skills (tests/core/security/corpus: malicious and
hostile documents, benign) and counts how many of the hostile ones would be usable without
review (the target is none).
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT

# shared/ sits beside the checkout (and two levels up from a worktree under wt/).
HERMES = next((p for p in (ROOT.parent / "shared" / "corpora" / "hermes-skills",
                           ROOT.parent.parent / "shared" / "corpora" / "hermes-skills")
               if p.is_dir()), ROOT.parent / "shared" / "corpora" / "hermes-skills")
SCANNER = ROOT / "tests" / "core" / "security" / "corpus"
DESCRIPTION = "Tidies a project's notes. Use when the user asks to tidy their notes."


def report_on(library, user: str, source: str, label: str) -> None:
    from core.errors import IrisUsageError
    from core.skills.importer import import_skills

    started = time.perf_counter()
    try:
        report = import_skills(library, user, source)
    except IrisUsageError as error:
        print(f"\n{label}: {error}")
        return
    took = time.perf_counter() - started
    counts = collections.Counter(i.status for i in report.items)
    total = len(report.items)
    usable = counts["loaded"] + counts["unchanged"]
    print(f"\n{label}: {total} skills in {took:.1f} s")
    if not total:
        return
    print(f"  loaded {counts['loaded']}, warned {len(report.warned)}, quarantined "
          f"{counts['quarantined']}, refused {counts['refused']}; importable (loaded or "
          f"quarantined) {(usable + counts['quarantined']) / total:.1%}")
    warnings = collections.Counter(w.split("'")[0].split(":")[0].strip()
                                   for i in report.items for w in i.warnings)
    print("  warnings by kind: " + "; ".join(f"{k!r} ×{n}" for k, n in warnings.most_common()))
    for item in report.quarantined:
        kinds = sorted({f"{f.where()} {f.label()}" for f in item.findings})
        print(f"  quarantined {item.name}: {'; '.join(kinds[:3])}"
              + (f" (+{len(kinds) - 3})" if len(kinds) > 3 else ""))
    for item in report.refused:
        print(f"  refused {item.name or item.path}: {'; '.join(item.reasons)}")


def fetch_package(source: str, into: Path) -> str:
    """``npm:`` / ``pypi:`` sources fetched and unpacked under ``into``; others unchanged."""
    import subprocess
    import tarfile
    import zipfile

    kind, _, spec = source.partition(":")
    if kind not in ("npm", "pypi") or not spec:
        return source
    spec, _, subdir = spec.partition("#")
    download = into / "download"
    download.mkdir(parents=True)
    if kind == "npm":
        command = ["npm", "pack", spec, "--silent", "--pack-destination", str(download)]
    else:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                   "--dest", str(download), spec]
    subprocess.run(command, check=True, timeout=600, stdout=subprocess.DEVNULL)
    (archive,) = download.iterdir()
    unpacked = into / "unpacked"
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(unpacked)
    else:
        with tarfile.open(archive) as tarred:
            tarred.extractall(unpacked, filter="data")
    root = unpacked / subdir if subdir else unpacked
    if not root.is_dir():
        raise SystemExit(f"{source}: no folder {subdir!r} in {archive.name}")
    print(f"fetched {archive.name} ({archive.stat().st_size // 1024} KiB) into {root}")
    return str(root)


def corpus_as_skills(root: Path, name: str) -> int:
    rows = [json.loads(line) for line in (SCANNER / name).read_text().splitlines() if line]
    for i, row in enumerate(rows):
        skill = root / f"case-{i:03d}"
        (skill / "scripts").mkdir(parents=True)
        text = row.get("text", "")
        body = f"---\nname: case-{i:03d}\ndescription: {DESCRIPTION}\n---\n\n1. Open.\n"
        if row.get("category") == "dangerous_command" or row.get("note") == "script":
            (skill / "scripts" / "run.sh").write_text(f"#!/bin/sh\n{text}\n")
        else:
            body += f"{text}\n"
        (skill / "SKILL.md").write_text(body)
    return len(rows)


def fresh_home() -> None:
    import os

    for name in [n for n in os.environ if n.startswith("IRIS_")]:
        del os.environ[name]
    os.environ["IRIS_HOME"] = tempfile.mkdtemp(prefix="iris-bench-import-")


def main() -> None:
    fresh_home()
    from core.config import load_settings
    from core.skills.importer import import_skills
    from core.skills.library import SkillLibrary
    from core.store import open_store

    settings = load_settings()
    store = open_store(settings)
    library = SkillLibrary(store, settings)
    sources = sys.argv[1:] or [str(HERMES)]
    for n, source in enumerate(sources):
        with tempfile.TemporaryDirectory(prefix="iris-bench-package-") as tmp:
            where = fetch_package(source, Path(tmp))
            report_on(library, store.users.for_account(f"http:bench{n}"), where, source)
    for label, names in (("hostile", ("malicious.jsonl", "hostile_documents.jsonl")),
                         ("benign", ("benign.jsonl",))):
        with tempfile.TemporaryDirectory() as tmp:
            count = sum(corpus_as_skills(Path(tmp) / name, name) for name in names)
            user = store.users.for_account(f"http:{label}")
            report = import_skills(library, user, tmp)
            statuses = collections.Counter(i.status for i in report.items)
            print(f"\nscanner corpus as skills, {label} ({count}): {dict(statuses)}; usable "
                  f"without review: {statuses['loaded'] + statuses['unchanged']}")
    store.close()


if __name__ == "__main__":
    main()
