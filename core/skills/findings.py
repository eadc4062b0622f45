"""What the safety scan found in a skill, file by file and line by line, and the two verdicts
that are not left to the user.

A skill documents commands, credentials and chat formats, so most findings in published skills
are worth a look rather than a refusal: such a skill is imported quarantined
(``core.skills.quarantine``) and the user decides. Only what is unambiguous is refused outright:

- a jailbreak kit: the skill says it is one (its name, description or tags speak of
  jailbreaking, uncensoring or bypassing safety) and its files ask the model to drop its rules;
- a script that exfiltrates: a file under ``scripts/`` (or any executable script) that sends the
  whole environment, a credential file or a secrets file over the network, or opens a reverse
  shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from core.skills.paths import is_script

if TYPE_CHECKING:
    from core.security.findings import Finding

TEXT_SUFFIXES = (".md", ".txt", ".markdown", ".rst", ".yaml", ".yml", ".json", ".toml")
MAX_LINES_LOCATED = 5_000  # a longer file's findings are reported without a line number

_JAILBREAK_PURPOSE = re.compile(
    r"jail-?break|uncensor|un-?aligned|god-?mode|safety[- ]bypass|bypass(?:es|ing)? (?:the "
    r"|any |all |model |llm )?(?:safety|guardrails|filters|refusals)"
    r"|remove (?:the )?(?:safety|guardrails)",
    re.I,
)
_EXFILTRATING = (
    "sends the whole environment over the network",
    "opens a reverse shell to a remote host",
    "reads a credential file",
    "sends a secrets file",
)


@dataclass(frozen=True)
class FileFinding:
    path: str
    line: int | None  # 1-based; None when the finding spans lines or the file is too long
    category: str
    reason: str
    excerpt: str

    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def label(self) -> str:
        return f"{self.category.replace('_', ' ')} ({self.reason})"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> FileFinding:
        line = data.get("line")
        return cls(path=str(data["path"]), line=line if isinstance(line, int) else None,
                   category=str(data["category"]), reason=str(data["reason"]),
                   excerpt=str(data.get("excerpt", "")))


def _scanner(path: str, text: str) -> tuple[bool, list[Finding]]:
    from core.security import scan_script, scan_text

    script = is_script(path) or text.startswith("#!")
    # A skill documents commands; the agent's own commands are checked again when it runs them.
    return script, (scan_script(text, docs=True) if script else scan_text(text, docs=True))


def _line_of(path: str, text: str, finding: Finding) -> int | None:
    """The first line that shows ``finding`` on its own, else the line holding its excerpt."""
    lines = text.splitlines()
    if len(lines) <= MAX_LINES_LOCATED:
        for number, line in enumerate(lines, 1):
            if line.strip() and any(f.category == finding.category and f.reason == finding.reason
                                    for f in _scanner(path, line)[1]):
                return number
    # Spans lines (a multi-line pattern, or an excerpt of folded text): the line holding the
    # excerpt's longest word.
    pieces = sorted((p for p in finding.excerpt.strip("…").split() if len(p) > 3),
                    key=len, reverse=True)
    folded_lines = [line.casefold() for line in lines]
    for piece in pieces[:3]:
        for number, line in enumerate(folded_lines, 1):
            if piece.casefold() in line:
                return number
    return None


def scan_file(path: str, data: bytes) -> list[FileFinding]:
    """Findings for one file of a skill, each with its line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if path == "SKILL.md" or is_script(path) or path.endswith(TEXT_SUFFIXES):
            return [FileFinding(path, None, "encoding", "not UTF-8 text", "")]
        return []  # a binary asset: stored, never shown to the model
    _, found = _scanner(path, text)
    return [FileFinding(path, _line_of(path, text, f), f.category, f.reason, f.excerpt)
            for f in found]


def scan_files(files: Mapping[str, bytes]) -> list[FileFinding]:
    """Every finding in a skill's files, in file order."""
    return [f for path, data in sorted(files.items()) for f in scan_file(path, data)]


def refusal(name: str, description: str, tags: Sequence[str],
            findings: Iterable[FileFinding]) -> str | None:
    """Why this skill is refused outright, or None when the user may decide."""
    findings = list(findings)
    for f in findings:
        if f.category == "exfiltration" and is_script(f.path) and f.reason.startswith(
                _EXFILTRATING):
            return (f"its script {f.where()} {f.reason}: a skill's script must never send your "
                    "environment or credentials out")
    hijack = [f for f in findings if f.category == "role_hijack"]
    purpose = " ".join([name, description, *tags])
    if hijack and (match := _JAILBREAK_PURPOSE.search(purpose)):
        return (f"it is a jailbreak kit: it says so ({match[0]!r} in its name, description or "
                f"tags) and {hijack[0].where()} {hijack[0].reason}")
    return None


def summary(findings: Sequence[FileFinding]) -> str:
    """One line: how many findings of which kinds, in which files."""
    kinds = dict.fromkeys(f.category.replace("_", " ") for f in findings)
    files = dict.fromkeys(f.path for f in findings)
    shown = ", ".join(list(files)[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return f"{len(findings)} finding(s): {', '.join(kinds)} in {shown}"
