"""Shell knowledge: commands that destroy or take over a machine, and commands that leak secrets."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from core.security.scanner import Finding, clip
from core.security.untrusted import INVISIBLE


@dataclass(frozen=True)
class DangerousPattern:
    pattern: re.Pattern[str]
    reason: str


def _danger(reason: str, *regexes: str) -> DangerousPattern:
    return DangerousPattern(re.compile("|".join(regexes), re.I), reason)


_START = r"(?:^|[;&|({`]\s*|\$\(\s*|\b(?:sudo|doas|exec|nohup|then|do|else)\s+(?:-\S+\s+)*)"
_OPTS = r"(?:-[\w-]+\s+)*"
_RECURSIVE = r"(?:-[a-z]*r[a-z]*|--recursive)\s+"
_SYSTEM_DIR = r"(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|sys|usr|var)"
_ROOT_OR_HOME = rf"(?:/\*?|~/?\*?|\$\{{?home\}}?/?\*?|/{_SYSTEM_DIR}/?\*?)(?=\s|$|[;&|)])"
_DISK = r"/dev/(?:sd[a-z]|hd[a-z]|nvme\d|xvd[a-z]|vd[a-z]|mmcblk\d|disk\d|mapper/|md\d|dm-)"
_WRITE_TO = (
    r"(?:>{1,2}\s*|\btee\s+(?:-a\s+)?|\bsed\s+-i\S*\s+\S+\s+|\b(?:cp|mv|ln\s+-\S+)\s+\S+\s+"
    r"|\bof=)"
)
_REVERSE_SHELLS = (
    r"/dev/(?:tcp|udp)/[\w.-]+/\d+",
    r"\b(?:nc|ncat|netcat)\b[^;|\n]*\s-[ec]\s*\S*(?:sh|bash|cmd)\b",
    r"\b(?:nc|ncat)\b[^;\n]*--(?:sh-)?exec\b",
    r"\bsocat\b[^;\n]*\bexec:",
    r"\bmkfifo\b[^\n]*\bnc\b",
)
_HISTORY = r"(?:~|\$home)/\.(?:bash|zsh|sh|python)_history"

DEFAULT_DANGEROUS_PATTERNS: tuple[DangerousPattern, ...] = (
    _danger(
        "recursively deletes / or a home or system directory",
        rf"\brm\s+{_OPTS}{_RECURSIVE}{_OPTS}{_ROOT_OR_HOME}",
        r"--no-preserve-root",
        r"\bshutil\.rmtree\(\s*(?:/|~|os\.path\.expanduser\(\s*~\s*\)|path\.home\(\))\s*\)",
        r"\bfind\s+(?:/|~|\$home)\s[^;&|]*-(?:delete\b|exec\s+rm\b)",
        r"\bmv\s+(?:-\S+\s+)*(?:/|~|\$home)\s+/dev/null\b",
    ),
    _danger(
        "is a fork bomb",
        r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:[^}]*\}",
        r"\b(\w+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&",
        r"\bwhile\b[^;]{0,40}\bfork\s*\(",
        r"\bfork\s+while\s+fork\b",
    ),
    _danger("formats a filesystem", rf"{_START}mkfs(?:\.\w+)?\b", r"\bmkswap\s+/dev/"),
    _danger(
        "overwrites a disk device",
        r"\bdd\b[^;&|]*\bof=/dev/(?:sd|hd|nvme|xvd|vd|mmcblk|disk|mapper|md|dm-)",
        rf">\s*{_DISK}",
        rf"\b(?:wipefs|shred|blkdiscard)\b[^;&|]*{_DISK}",
    ),
    _danger(
        "opens up permissions or ownership of / or a system directory",
        rf"\bch(?:mod|own|grp)\s+{_OPTS}{_RECURSIVE}{_OPTS}\S+\s+{_ROOT_OR_HOME}",
        r"\bchmod\s+(?:-\S+\s+)*[0-7]?777\s+(?:/|/\*|/(?:etc|bin|usr|root|var)\S*)(?=\s|$|[;&|])",
        r"\bchmod\b[^;&|]*\s/etc/(?:shadow|gshadow|sudoers)\b",
    ),
    _danger(
        "pipes a downloaded script into a shell",
        r"\b(?:curl|wget|fetch)\b[^;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|k|c|tc|da|fi)?sh\b",
        r"\b(?:curl|wget)\b[^;&]*\|\s*(?:sudo\s+)?(?:python[\d.]*|perl|ruby|node|php)\b",
        r"\b(?:ba|z)?sh\s+(?:-c\s+)?\$\(\s*(?:curl|wget)\b",
        r"\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b",
        r"\beval\s+\$\(\s*(?:curl|wget)\b",
        r"\biex\b[^;]*\b(?:iwr|invoke-webrequest|downloadstring)\b",
    ),
    _danger(
        "writes to a system account file (/etc/passwd, /etc/shadow, /etc/sudoers)",
        rf"{_WRITE_TO}/etc/(?:passwd|shadow|gshadow|group|sudoers(?:\.d/\S*)?)\b",
        r"\busermod\b[^;&|]*\s-a?G\s*\S*\b(?:sudo|wheel|root|admin)\b",
    ),
    _danger(
        "writes to a credential file",
        rf"{_WRITE_TO}(?:~|\$\{{?home\}}?|/root|/home/[\w.-]+)/(?:\.ssh/(?:authorized_keys2?"
        r"|id_\w+)|\.aws/credentials|\.netrc|\.git-credentials|\.docker/config\.json"
        r"|\.kube/config|\.pgpass)",
    ),
    _danger(
        "shuts down or reboots the machine",
        rf"{_START}(?:shutdown|reboot|halt|poweroff)\b",
        r"\b(?:systemctl|loginctl)\s+(?:poweroff|reboot|halt|kexec)\b",
        rf"{_START}(?:init|telinit)\s+[06]\b",
    ),
    _danger(
        "covers its tracks (clears shell history or system logs)",
        r"\bhistory\s+-c\b",
        r"\bhistory\s+-w\s+/dev/null\b",
        r"\bunset\s+HISTFILE\b",
        r"\bHISTFILE=/dev/null\b",
        r"\bHIST(?:FILE)?SIZE=0\b",
        r"\bset\s+\+o\s+history\b",
        rf"(?:>\s*|\brm\s+{_OPTS}|\bshred\s+{_OPTS}|\btruncate\s+-s\s*0\s+|\bln\s+-sf?\s+/dev/null\s+)"
        rf"{_HISTORY}",
        rf"(?:>\s*|\brm\s+{_OPTS}|\bshred\s+{_OPTS}|\btruncate\s+-s\s*0\s+)/var/log/"
        r"(?:auth\.log|syslog|secure|messages|wtmp|btmp|lastlog|audit/)",
    ),
    _danger("opens a reverse shell", *_REVERSE_SHELLS),
    _danger("kills every process", r"\bkill\s+-(?:9|kill|sigkill)\s+-1\b"),
)


def check_command(
    command: str, patterns: Sequence[DangerousPattern] = DEFAULT_DANGEROUS_PATTERNS
) -> Finding | None:
    """The first dangerous pattern ``command`` matches, or None."""
    found = find_dangerous(command, patterns, first_only=True)
    return found[0] if found else None


def find_dangerous(
    script: str,
    patterns: Sequence[DangerousPattern] = DEFAULT_DANGEROUS_PATTERNS,
    *,
    first_only: bool = False,
) -> list[Finding]:
    """Every dangerous pattern in a command or script (comment lines are skipped)."""
    text = normalise_command(script)
    found = []
    for danger in patterns:
        if match := danger.pattern.search(text):
            found.append(Finding("dangerous_command", danger.reason, clip(text, *match.span())))
            if first_only:
                break
    return found


def compile_patterns(extra: list[str]) -> tuple[DangerousPattern, ...]:
    """The defaults plus user-configured patterns (regexes; invalid ones match literally)."""
    compiled = []
    for source in extra:
        try:
            pattern = re.compile(source, re.I)
        except re.error:
            pattern = re.compile(re.escape(source), re.I)
        compiled.append(DangerousPattern(pattern, f"matches the configured pattern {source!r}"))
    return DEFAULT_DANGEROUS_PATTERNS + tuple(compiled)


def normalise_command(command: str) -> str:
    """One line, commands joined by ' ; ', quotes and escapes removed, comment lines dropped."""
    text = unicodedata.normalize("NFKC", INVISIBLE.sub("", command))
    text = re.sub(r"\\\r?\n", " ", text)
    text = re.sub(r"\$\{?IFS\}?", " ", text, flags=re.I)
    text = re.sub(r"\\(?=\S)", "", re.sub(r"[\"']", "", text))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return " ; ".join(line for line in lines if line and not line.startswith("#"))


# -- exfiltration: reading credentials and sending secrets out -------------------------------

_DIRS = r"(?:[\w.~${}%:-]*[/\\])*"
_SENSITIVE_PATH = (
    rf"(?P<path>{_DIRS}(?:\.ssh[/\\])?id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?![\w.])"
    rf"|{_DIRS}(?:\.aws[/\\]credentials|\.(?:netrc|git-credentials|pgpass|npmrc|pypirc"
    r"|vault-token)\b|\.docker[/\\]config\.json|\.kube[/\\]config\b|\.config[/\\]gh[/\\]hosts"
    r"\.yml|\.gnupg[/\\]\S*|\.password-store\S*|\.ssh[/\\]?(?![\w./\\-]))|/etc/g?shadow\b"
    r"|/proc/(?:self|\d+|\*)/environ)"
)
_READ_CREDENTIALS = re.compile(
    r"(?:\b(?:cat|less|more|head|tail|base64|xxd|od|strings|cp|scp|rsync|tar|zip|gzip|"
    r"openssl|gpg|grep|awk|sed|get-content|read_text|read_bytes|readfile(?:sync)?|open|read|"
    r"print|show|display|dump|upload|send|post|copy|exfiltrate|leak|attach|e-?mail|paste|curl|"
    r"wget)\b[^\n]{0,80}?|@)" + _SENSITIVE_PATH
)
_SECRETS_FILE = re.compile(
    r"(?:^|[\s\"'=@<(:/])(?P<path>(?:[\w.~-]*/)*(?:\.env(?:\.(?:local|prod|production|dev|"
    r"development|staging))?|\.(?:bash|zsh|sh|python|psql|mysql|node_repl)_history|"
    r"credentials\.json|secrets\.(?:ya?ml|json|toml)|service[-_]?account[\w-]*\.json))(?![\w.-])"
)
_NETWORK = re.compile(
    r"\b(?:curl|wget|nc|ncat|netcat|socat|telnet|ftp|tftp|nslookup|dig|invoke-webrequest|"
    r"invoke-restmethod|iwr|irm|smtplib|sendmail|urlopen|urllib|aiohttp|axios|httpx)\b|"
    r"requests\.(?:get|post|put|patch|request)|\bfetch\(|/dev/(?:tcp|udp)/|\bmail -s\b"
)
_ENV_DUMP = re.compile(
    r"(?:^|[|;&(`]|\$\()\s*(?:env|printenv|set|export -p|declare -x|compgen -v)\s*(?=[|)`>]|$)"
    r"|\bprintenv \w+ ?\||os\.environ\b(?! ?(?:\[|\.get|\.setdefault))|process\.env\b(?! ?[.\[])"
)
_PY_NETWORK = re.compile(r"\b(?:requests|httpx|aiohttp|urllib\.request)\.|\burlopen\(|\bfetch\(")
_PY_ENV_DUMP = re.compile(
    r"dict\(os\.environ\)|os\.environ\.(?:copy|items)\(\)|\*\*os\.environ|json\.dumps\(os\.environ"
    r"|(?:data|json|params)=os\.environ|json\.stringify\(process\.env\)"
)
_REVERSE_SHELL = re.compile("|".join(_REVERSE_SHELLS))
_AUTH_ARGS = re.compile(
    r"(?:-h|--header|-u|--user|--oauth2-bearer|--aws-sigv4)[=\s]\s*(?:\"[^\"]*\"|'[^']*'|\S+)"
    r"|headers ?= ?\{[^}]*\}|auth ?= ?\([^)]*\)|authorization: ?(?:bearer |token |basic )?\S+"
)
_NAME = (
    r"([a-z0-9_]*(?<![a-z0-9])(?:api_?key|key|token|secret|password|passwd|pass|pwd|"
    r"credentials?|cookie|auth)(?![a-z0-9])[a-z0-9_]*)"
)
_SECRET_VAR = re.compile(
    rf"\$\{{?{_NAME}|os\.environ(?:\.get\(|\[) ?[\"']{_NAME}|os\.getenv\( ?[\"']{_NAME}"
    rf"|process\.env(?:\.|\[[\"']){_NAME}"
)
_HOST = re.compile(r"https?://([^/\s\"'?:$@]+)")
_KNOWN_APIS = {  # a credential named for a service, sent to that service, is ordinary use
    "telegram.org": ("telegram", "tg", "bot"),
    "github.com": ("github", "gh"),
    "openai.com": ("openai",),
    "anthropic.com": ("anthropic", "claude"),
    "slack.com": ("slack",),
    "googleapis.com": ("google", "gemini", "gcp", "youtube", "maps"),
    "stripe.com": ("stripe",),
    "gitlab.com": ("gitlab",),
    "huggingface.co": ("hf", "huggingface"),
    "openrouter.ai": ("openrouter",),
}


def find_exfiltration(folded: str) -> list[Finding]:
    """Shell or Python lines that read credentials or send secrets out; input is `fold`ed."""
    found: list[Finding] = []

    def add(reason: str, text: str, match: re.Match[str]) -> None:
        found.append(Finding("exfiltration", reason, clip(text, *match.span())))

    for line in folded.splitlines():
        if match := _READ_CREDENTIALS.search(line):
            add(f"reads a credential file ({match.group('path')})", line, match)
        if match := _REVERSE_SHELL.search(line):
            add("opens a reverse shell to a remote host", line, match)
        if not _NETWORK.search(line):
            continue
        if match := _ENV_DUMP.search(line):
            add("sends the whole environment over the network", line, match)
        elif match := _SECRETS_FILE.search(line):
            add(f"sends a secrets file ({match.group('path')}) over the network", line, match)
        elif match := _secret_sent_out(line):
            name = next(group for group in match.groups() if group)
            add(f"sends a secret (${name.upper()}) to a remote host", line, match)
    if _PY_NETWORK.search(folded) and (match := _PY_ENV_DUMP.search(folded)):
        add("sends the whole environment over the network", folded, match)
    return found


def _secret_sent_out(line: str) -> re.Match[str] | None:
    stripped = _AUTH_ARGS.sub(" ", line)
    hosts = _HOST.findall(stripped)
    for match in _SECRET_VAR.finditer(stripped):
        parts = set(next(group for group in match.groups() if group).split("_"))
        if not hosts or not all(_service_of(host, parts) for host in hosts):
            return match
    return None


def _service_of(host: str, name_parts: set[str]) -> bool:
    return any(
        host == domain or host.endswith("." + domain)
        for domain, hints in _KNOWN_APIS.items()
        if name_parts & set(hints)
    )
