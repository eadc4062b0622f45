"""Scan text bound for an LLM prompt for injected instructions, leaks and hidden characters.

Every pattern is linear-time (``core.security.linear``), so text of any length is scanned
without backtracking blow-ups; callers still keep unbounded text off the event loop.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable

from core.security import commands, linear
from core.security.credentials import SECRETS, example_password
from core.security.findings import Finding, clip
from core.security.phrases import COMMENT_HINT, LINE_PHRASES, PHRASES, SQUASHED, Rule
from core.security.phrases_intl import INTL_PHRASES
from core.security.untrusted import INVISIBLE, decode_tags, hidden_characters

__all__ = ["Finding", "clip", "describe", "fold", "scan_script", "scan_text"]


def scan_text(text: str, *, docs: bool = False) -> list[Finding]:
    """Findings for a memory entry or skill text; an empty list means clean. ``docs=True``
    for documentation, which shows commands rather than runs them (see
    ``commands.find_exfiltration``)."""
    findings = _invisible(text)
    if hidden := decode_tags(text):
        findings += scan_text(hidden, docs=docs)
    plain = unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
    findings += _secrets(plain, docs=docs)
    folded = fold(plain)
    findings += _phrases(folded, docs=docs)
    # Other scripts as written: the look-alike folding would turn Cyrillic into Latin.
    findings += _match(INTL_PHRASES, " ".join(plain.casefold().split()))
    findings += _encoded(plain, docs=docs)
    findings += commands.find_exfiltration(folded, docs=docs)
    return _dedupe(findings)


def scan_script(text: str, *, docs: bool = False) -> list[Finding]:
    """`scan_text` plus dangerous shell patterns, for a skill's scripts."""
    return _dedupe(scan_text(text, docs=docs) + commands.find_dangerous(text))


def describe(findings: Iterable[Finding]) -> str:
    """One line for a refusal: ``blocked: prompt injection (…); secret (…)``."""
    reasons: dict[str, list[str]] = {}
    for finding in findings:
        listed = reasons.setdefault(finding.category, [])
        if finding.reason not in listed:
            listed.append(finding.reason)
    if not reasons:
        return "clean"
    parts = [f"{cat.replace('_', ' ')} ({', '.join(why)})" for cat, why in reasons.items()]
    return "blocked: " + "; ".join(parts)


def fold(text: str) -> str:
    """NFKC, casefold, look-alike letters to ASCII, horizontal whitespace collapsed per line."""
    text = unicodedata.normalize("NFKC", INVISIBLE.sub("", text)).casefold()
    text = re.sub(r"\\\r?\n", " ", text.translate(_CONFUSABLES))
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


# -- normalisation -------------------------------------------------------------------------

_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһԛԝɡοαειντκρυɪɢɴᴏʀᴇᴀʟᴘᴠᴜꜱᴛᴄᴅʜᴋᴍᴡʏᴢꜰᴊǫʙ",
    "aeopcyxijsdhqwgoaeivtkpuignorealpvustcdhkmwyzfjqb",
)
_LEET = str.maketrans("0134578@$!|", "oieastbasii")
_SPACED_HINT = linear.compile(r"[\pL\pN][ .\-_*·][\pL\pN][ .\-_*·][\pL\pN]")
# Runs of one character class each: no backtracking, so Python's re is linear here.
_PIECES = re.compile(r"[^\W_]+|[\W_]+")
_SPACERS = frozenset(" .-_*·")


def _join_spaced(text: str) -> str:
    """``i g n o r e`` and ``i.g.n.o.r.e`` → ``ignore``: three or more single letters or digits
    each apart by one spacer, with no letter or digit right before or after the run."""
    if not _SPACED_HINT.search(text):
        return text
    pieces = _PIECES.findall(text)
    out: list[str] = []
    i = 0
    while i < len(pieces):
        j = i
        while (j + 2 < len(pieces) and len(pieces[j]) == 1 and pieces[j].isalnum()
               and len(pieces[j + 1]) == 1 and pieces[j + 1] in _SPACERS
               and len(pieces[j + 2]) == 1 and pieces[j + 2].isalnum()):
            j += 2
        if j - i >= 4 and len(pieces[i]) == 1 and pieces[i].isalnum():  # 3+ letters
            out.append("".join(pieces[i : j + 1 : 2]))
            i = j + 1
        else:
            out.append(pieces[i])
            i += 1
    return "".join(out)


# -- phrases: prompt injection, role hijack, exfiltration requests -------------------------


_COMMENT = linear.compile(r"<!--(.*?)-->", re.S)
_HIDDEN_OPEN = linear.compile(
    r"<(\w+)[^>]*(?:display: ?none|visibility: ?hidden|font-size: ?0|opacity: ?0)[^>]*>"
)
_CLOSE = linear.compile(r"</(\w+)>")

def _phrases(folded: str, *, docs: bool = False) -> list[Finding]:
    flat = " ".join(folded.split())
    joined = " ".join(_join_spaced(folded).split())
    found = []
    for view in dict.fromkeys((flat, joined)):
        found += _match(PHRASES, view)
    found += _match(LINE_PHRASES, folded)
    found += _match(SQUASHED, re.sub(r"[^a-z]", "", flat.translate(_LEET)))
    # Documentation shows markup inside a fenced code block as written: a comment there is
    # example code (an XML config's comment, say), in plain view of the reader, not hidden.
    fences = _fenced_blocks(folded) if docs else []
    for start, end, inner in _hidden_markup(folded):
        if COMMENT_HINT.search(inner) and not _inside(fences, start):
            reason = "hides instructions in an HTML comment or hidden element"
            found.append(Finding("prompt_injection", reason, clip(folded, start, end)))
    return found


_BASE64 = linear.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
MAX_DECODED = 20  # blobs decoded per text: enough for a note, bounded for a large file


def _encoded(text: str, *, docs: bool) -> list[Finding]:
    """Instructions hidden in base64: each blob that decodes to readable text is scanned."""
    import base64
    import binascii

    found: list[Finding] = []
    for count, blob in enumerate(_BASE64.finditer(text)):
        if count == MAX_DECODED:
            break
        raw = blob[0][: 4096 * 4 // 3]
        try:
            decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
            words = decoded.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if sum(c.isprintable() or c.isspace() for c in words) < 0.9 * len(words):
            continue
        inner = [f for f in scan_text(words, docs=docs) if f.category != "secret"]
        if inner:
            reason = f"hides text in base64 that {inner[0].reason}"
            found.append(Finding(inner[0].category, reason, clip(text, *blob.span())))
    return found


_FENCE = linear.compile(r"^ {0,3}(`{3,}|~{3,})")


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of Markdown's fenced code blocks: from a line opening with
    three or more backticks or tildes to the next line opening with as many of the same (or
    the end of the text, as Markdown renders an unclosed fence)."""
    blocks: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        if fence := _FENCE.search(line):
            mark = fence[1]
            if opened is None:
                opened = (offset, mark)
            elif mark[0] == opened[1][0] and len(mark) >= len(opened[1]):
                blocks.append((opened[0], offset + len(line)))
                opened = None
        offset += len(line)
    if opened is not None:
        blocks.append((opened[0], len(text)))
    return blocks


def _inside(blocks: list[tuple[int, int]], position: int) -> bool:
    k = bisect.bisect_right(blocks, (position, 1 << 62)) - 1
    return k >= 0 and blocks[k][0] <= position < blocks[k][1]


def _hidden_markup(text: str) -> Iterable[tuple[int, int, str]]:
    """HTML comments, and elements styled invisible up to their closing tag: (start, end,
    inner text). Closing tags are indexed once, so many unclosed elements stay linear."""
    for comment in _COMMENT.finditer(text):
        yield comment.start(), comment.end(), comment[1]
    closes: dict[str, list[tuple[int, int]]] = {}
    for close in _CLOSE.finditer(text):
        closes.setdefault(close[1], []).append((close.start(), close.end()))
    for opening in _HIDDEN_OPEN.finditer(text):
        spans = closes.get(opening[1], [])
        k = bisect.bisect_left(spans, (opening.end(), -1))
        if k < len(spans):
            yield opening.start(), spans[k][1], text[opening.end() : spans[k][0]]


def _match(rules: Iterable[Rule], view: str) -> list[Finding]:
    found = []
    for rule in rules:
        for match in rule.pattern.finditer(view):
            if rule.allow is None or not rule.allow(match, view):
                found.append(Finding(rule.category, rule.reason, clip(view, *match.span())))
                break
    return found


# -- secrets, hidden characters, masking ---------------------------------------------------


def _secrets(text: str, *, docs: bool = False) -> list[Finding]:
    found: list[Finding] = []
    for secret in SECRETS:
        if found and secret is SECRETS[-1]:
            break
        # Documentation's code samples log in with made-up passwords (`password='adminpass123'`):
        # the generic password rule lets those through there; known key formats still count.
        if match := next((m for m in secret.strict.finditer(text) if secret.valid(m) and not (
                docs and secret is SECRETS[-1] and example_password(m["value"]))), None):
            found.append(Finding("secret", secret.reason, clip(text, *match.span())))
    return found


def _invisible(text: str) -> list[Finding]:
    if not (hits := hidden_characters(text)):
        return []
    codes = sorted({f"U+{ord(text[i]):04X}" for i in hits})
    listed = ", ".join(codes[:3]) + (", …" if len(codes) > 3 else "")
    reason = f"contains {len(hits)} invisible character{'s' * (len(hits) > 1)} ({listed})"
    if hidden := decode_tags(text):
        reason += f" hiding the text {hidden[:40]!r}"
    return [Finding("invisible_unicode", reason, clip(text, hits[0], hits[0] + 1))]


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen: dict[tuple[str, str], Finding] = {}
    for finding in findings:
        seen.setdefault((finding.category, finding.reason), finding)
    return list(seen.values())
