"""The YAML layer of SKILL.md: splitting front matter from the body, reading it safely (with
the ``": "`` repair), and writing it back."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

_KEY_LINE = re.compile(r"(?P<indent> *)(?P<key>[\w][\w.-]*):(?:[ \t]+(?P<value>.*))?", re.ASCII)


class SkillParseError(ValueError):
    """No usable skill could be read. ``rule`` says why, as a stable id."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


class _Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """Safe YAML without YAML 1.1 surprises: ``yes``/``no``/``on``/``off`` and dates stay text."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML ships no types
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None
    if any(ch in value for ch in "\r\x85\u2028\u2029\ufeff"):
        style = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def normalize_text(text: str) -> str:
    """Drop a leading BOM and turn CRLF / CR line endings into LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str, str]:
    """Split normalised SKILL.md text into (front matter source, body)."""
    first_end = text.find("\n")
    if (text if first_end == -1 else text[:first_end]).rstrip() != "---":
        raise SkillParseError("no-frontmatter", "SKILL.md must open with a '---' line "
                              "starting the YAML front matter")
    start = pos = len(text) if first_end == -1 else first_end + 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        if text[pos:end].rstrip() == "---":
            return text[start:pos], _clean_body(text[end + 1 :])
        pos = end + 1
    raise SkillParseError("frontmatter-unclosed", "the front matter is never closed by '---'")


def load_frontmatter(source: str) -> tuple[Any, str | None]:
    """Read front matter YAML. Returns (data, repaired): ``repaired`` describes the YAML error
    when plain values holding ``": "`` or opening with ``@`` or a backtick (characters YAML
    reserves, as in ``description: @Observable state…``) had to be quoted before the YAML
    could be read."""
    try:
        return yaml.load(source, Loader=_Loader), None
    except yaml.YAMLError as error:
        original = error
    problem = str(getattr(original, "problem", ""))
    if "mapping values are not allowed" in problem or "cannot start any token" in problem:
        repaired = _quote_colon_values(source)
        if repaired != source:
            try:
                return yaml.load(repaired, Loader=_Loader), _describe(original)
            except yaml.YAMLError:
                pass
    raise SkillParseError("yaml-invalid", f"the front matter is not valid YAML: "
                          f"{_describe(original)}")


def render_skill(frontmatter: dict[str, Any], body: str) -> str:
    """Serialise front matter and body to SKILL.md text that ``parse_skill`` reads back."""
    dumped = yaml.dump(frontmatter, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                       default_flow_style=False, width=100)
    body = _clean_body(body.replace("\r\n", "\n").replace("\r", "\n"))
    return f"---\n{dumped}---\n" + (f"\n{body}\n" if body else "")


def _clean_body(body: str) -> str:
    return re.sub(r"\A(?:[ \t]*\n)+", "", body).rstrip()


def _describe(error: yaml.YAMLError) -> str:
    problem = getattr(error, "problem", None) or str(error)
    mark = getattr(error, "problem_mark", None)
    return problem if mark is None else f"{problem} (line {mark.line + 2} of SKILL.md)"


def _quote_colon_values(source: str) -> str:
    """Quote plain ``key: value`` values (with their continuation lines) that contain ``": "``
    or open with ``@`` or a backtick, which no plain YAML value may. Block scalars and values
    already quoted or in flow style are left alone."""
    lines = source.split("\n")
    out: list[str] = []
    block_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if block_indent is not None and (not line.strip() or indent > block_indent):
            out.append(line)
            i += 1
            continue
        block_indent = None
        match = _KEY_LINE.fullmatch(line)
        value = _strip_comment(match["value"] or "") if match else ""
        if not match or not value or value[0] in "\"'[{&*!%|>":
            block_indent = indent if value[:1] in ("|", ">") else None
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() and lines[j].startswith(" " * (indent + 1)):
            j += 1
        text = " ".join(p for p in [value, *(_strip_comment(x) for x in lines[i + 1 : j])] if p)
        if ": " in text or text.endswith(":") or text[0] in "@`":
            out.append(f"{match['indent']}{match['key']}: {json.dumps(text, ensure_ascii=False)}")
        else:
            out.extend(lines[i:j])
        i = j
    return "\n".join(out)


def _strip_comment(value: str) -> str:
    value = value.strip()
    if value.startswith("#"):
        return ""
    cut = value.find(" #")
    return (value if cut == -1 else value[:cut]).rstrip()


def set_name_line(text: str, name: str) -> str:
    """SKILL.md ``text`` with its top-level ``name:`` set to ``name`` (a normalised name: plain
    YAML), everything else kept byte for byte; a skill without one gains it first."""
    text = normalize_text(text)
    source, _ = split_frontmatter(text)
    start = text.find("\n") + 1
    lines = source.split("\n")
    for i, line in enumerate(lines):
        match = _KEY_LINE.fullmatch(line)
        if match and not match["indent"] and match["key"] == "name":
            end = i + 1  # continuation lines of a folded or multi-line value go with it
            while end < len(lines) and lines[end][:1] in (" ", "\t"):
                end += 1
            lines[i:end] = [f"name: {name}"]
            return text[:start] + "\n".join(lines) + text[start + len(source):]
    return f"{text[:start]}name: {name}\n{text[start:]}"
