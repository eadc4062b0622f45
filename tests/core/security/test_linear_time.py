"""Every pattern in core/security runs in linear time: eight times its worst input costs well
under 64 times as long (iris_testing.growth: a ratio measured in the test, never milliseconds;
the scanner's speed is measured in bench/scanner_rates.py).

The inputs are repetitions of fragments each pattern half-matches (path segments, command
words, quotes, markup openers, key prefixes): the shapes that made the backtracking patterns
take 17 s on ``"cat/" * 1000``.
"""

from __future__ import annotations

import re
import time

import pytest

from core.security import (
    commands,
    credentials,
    linear,
    phrases,
    phrases_intl,
    scan_script,
    scan_text,
    scanner,
    untrusted,
    wrap_untrusted,
)
from core.security.commands import check_command, compile_patterns, find_exfiltration
from core.security.credentials import mask_secrets
from iris_testing.growth import assert_linear

SIZE = 100_000
SMALL = SIZE // 8
MODULES = (commands, credentials, phrases, phrases_intl, scanner, untrusted)
FRAGMENTS = [
    "cat/", "a/", "~/", ".ssh/", "id_", "cat id_rsa ", "cat ~/.ssh/id_rsa\n", "/proc/1/",
    "curl ", "curl -H x $a_key ", "nc -e sh ", "/dev/tcp/a/1 ", "rm -rf ", "chmod ", "f(){ f|",
    ":(){ :|", "$", "${", "$key_", "key_", "a_", "os.environ", "headers={", "auth=(", "-H ",
    "https://", "<", "< ", "<!--", "<b style=display:none>", "</b>", "![x](http://a?",
    "ignore ", "ignore all ", "ignore all previous ", "you are now ", "developer mode ",
    "[system]", "ai must ", "send memory ", "a ", "a.", "a:", "@", "print ", "a\n", "\n", " ",
    "x", "-", "=", "'", '"', "\\", "password=", "sk-a", "eyJ", "AIza", "1234567890:AA",
    "aGVsbG8g", "QUFB", "игнорируй ", "忽略之前", "disregard what ", "assistant, ",
]


def _patterns() -> dict[str, linear.Regex]:
    found: dict[str, linear.Regex] = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if type(value).__module__.startswith("re2"):
                found[f"{module.__name__}.{name}"] = value
    for i, danger in enumerate(commands.DEFAULT_DANGEROUS_PATTERNS):
        found[f"danger[{i}] {danger.reason}"] = danger.pattern
    rules = (phrases.PHRASES + phrases.LINE_PHRASES + phrases.SQUASHED
             + phrases_intl.INTL_PHRASES)
    for i, rule in enumerate(rules):
        found[f"rule[{i}] {rule.reason}"] = rule.pattern
    for i, secret in enumerate(credentials.SECRETS):
        found[f"secret[{i}] {secret.reason}"] = secret.strict
        found[f"secret[{i}] {secret.reason} (any case)"] = secret.loose
    return found


PATTERNS = _patterns()
INPUTS = [(fragment * (SIZE // len(fragment) + 1))[:SIZE] for fragment in FRAGMENTS]


def _slowest(scan) -> str:
    """The input on which ``scan`` spends the most (one run each: only a choice, not a check)."""
    costs = {}
    for text in INPUTS:
        started = time.perf_counter()
        scan(text)
        costs[text] = time.perf_counter() - started
    return max(costs, key=costs.__getitem__)


def test_every_pattern_is_compiled_for_linear_time():
    assert len(PATTERNS) > 40  # the walk above found them (a rename would hide them)
    leftovers = {
        value.pattern
        for module in MODULES
        for value in vars(module).values()
        if isinstance(value, re.Pattern)
    }
    # Python's re is kept only where backtracking cannot happen: a single character class,
    # runs of one class each, or a match anchored at one position over a few bounded words.
    assert leftovers == {untrusted.INVISIBLE.pattern, untrusted._TAG_FLAG.pattern,
                         scanner._PIECES.pattern, phrases._DATA_SOURCE.pattern}


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_each_pattern_scans_its_worst_input_in_linear_time(name):
    search = PATTERNS[name].search
    slowest = _slowest(search)
    assert_linear(search, small=slowest[:SMALL], large=slowest, scale=SIZE / SMALL,
                  what=f"{name} on {slowest[:24]!r}…")


@pytest.mark.slow  # 5-7 s each (make check leaves them out)
@pytest.mark.parametrize(
    "scan",
    [scan_text, scan_script, check_command, mask_secrets,
     lambda text: find_exfiltration(scanner.fold(text)),
     lambda text: wrap_untrusted("web", text)],
    ids=["scan_text", "scan_script", "check_command", "mask_secrets", "find_exfiltration",
         "wrap_untrusted"],
)
def test_whole_scans_of_100_kb_stay_linear(scan):
    # Linear means eight times the input costs about eight times as long; a quadratic path
    # would cost 64 (the backtracking scanner took 17 s on 4 kB). Compared on the same machine
    # at the same moment, so a busy machine slows both sides alike.
    for text in INPUTS:
        assert_linear(scan, small=text[:SMALL], large=text, scale=SIZE / SMALL,
                      what=f"{text[:24]!r}…")


def test_python_word_classes_keep_their_unicode_meaning():
    assert linear.compile(r"\w+").search("żółw abc")[0] == "żółw"
    assert linear.compile(r"[\w.]+").search("— naïve.txt")[0] == "naïve.txt"
    assert linear.compile(r"\W").search("żółw abc")[0] == " "
    assert linear.unicode_words(r"[^\]\w]") == r"[^\]\pL\pN_]"
    with pytest.raises(linear.PatternError):
        linear.compile(r"(?<!a)b")


def test_a_configured_pattern_with_a_look_around_matches_literally():
    (configured,) = compile_patterns([r"(?!x)drop table"])[-1:]
    assert configured.pattern.search("(?!x)drop table users")
    assert not configured.pattern.search("drop table users")


@pytest.mark.parametrize(
    ("command", "bomb"),
    [("f(){ f|f& };f", True), ("bomb(){ bomb | bomb & }; bomb", True),
     ("f(){ g|h& }", False)],
)
def test_the_fork_bomb_check_compares_the_function_names(command, bomb):
    finding = check_command(command)
    assert (finding is not None and "fork bomb" in finding.reason) is bomb
