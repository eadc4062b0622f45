"""``iris skills export``: a user's skills as plain skill directories, a .zip or a .tar.gz, ready
for ``iris skills import`` or any agent that reads the Agent Skills format."""

from __future__ import annotations

import io
import tarfile
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import IrisUsageError

if TYPE_CHECKING:
    from core.skills.library import SkillLibrary


def _collect(library: SkillLibrary, user_id: str, names: list[str]) -> dict[str, dict[str, bytes]]:
    if not names:
        names = [e.name for e in library.catalog.list(user_id)] if user_id else []
        if not names:
            raise IrisUsageError("this user has no skills of their own to export; name bundled "
                                 "ones explicitly")
    return {name: library.snapshot(user_id, name).all_files() for name in dict.fromkeys(names)}


def export_skills(library: SkillLibrary, user_id: str, names: list[str], out: Path) -> list[str]:
    """Write the named skills (default: all of the user's library) to ``out``."""
    skills = _collect(library, user_id, names)
    lowered = out.name.lower()
    if lowered.endswith(".zip"):
        _refuse_existing(out)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, files in skills.items():
                for path, data in sorted(files.items()):
                    archive.writestr(f"{name}/{path}", data)
    elif lowered.endswith((".tar.gz", ".tgz")):
        _refuse_existing(out)
        with tarfile.open(out, "w:gz") as archive:
            for name, files in skills.items():
                for path, data in sorted(files.items()):
                    info = tarfile.TarInfo(f"{name}/{path}")
                    info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
                    archive.addfile(info, io.BytesIO(data))
    else:
        for name in skills:
            _refuse_existing(out / name)
        for name, files in skills.items():
            for path, data in files.items():
                target = out / name / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
    return list(skills)


def _refuse_existing(path: Path) -> None:
    if path.exists():
        raise IrisUsageError(f"{path} already exists; choose another place (nothing written)")
