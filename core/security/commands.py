"""Shell knowledge: commands that destroy or take over a machine, and commands that leak secrets.

Every pattern here is linear-time (``core.security.linear``): a command or script of any length
is checked without backtracking blow-ups.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.security import linear
from core.security.findings import Finding, clip
from core.security.linear import Match, Regex
from core.security.untrusted import INVISIBLE


@dataclass(frozen=True)
class DangerousPattern:
    pattern: Regex
    reason: str
    accept: Callable[[Match], bool] | None = None  # a check RE2 cannot express


def _danger(reason: str, *regexes: str, accept: Callable[[Match], bool] | None = None
            ) -> DangerousPattern:
    return DangerousPattern(linear.compile("|".join(regexes), re.I), reason, accept)


_START = r"(?:^|[;&|({`]\s*|\$\(\s*|\b(?:sudo|doas|exec|nohup|then|do|else)\s+(?:-\S+\s+)*)"
_OPTS = r"(?:-[\w-]+\s+)*"
_RECURSIVE = r"(?:-[a-z]*r[a-z]*|--recursive)\s+"
_SYSTEM_DIR = r"(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|sys|usr|var)"
_ROOT_OR_HOME = rf"(?:/\*?|~/?\*?|\$\{{?home\}}?/?\*?|/{_SYSTEM_DIR}/?\*?)(?:\s|$|[;&|)])"
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
        r"\bwhile\b[^;]{0,40}\bfork\s*\(",
        r"\bfork\s+while\s+fork\b",
    ),
    _danger(  # f(){ f|f& }: a function piping itself into itself in the background
        "is a fork bomb",
        r"\b(\w+)\s*\(\s*\)\s*\{\s*(\w+)\s*\|\s*(\w+)\s*&",
        accept=lambda m: m[1] == m[2] == m[3],
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
        r"\bchmod\s+(?:-\S+\s+)*[0-7]?777\s+(?:/|/\*|/(?:etc|bin|usr|root|var)\S*)(?:\s|$|[;&|])",
        r"\bchmod\b[^;&|]*\s/etc/(?:shadow|gshadow|sudoers)\b",
    ),
    _danger(
        "pipes a downloaded script into a shell",
        r"\b(?:curl|wget|fetch)\b[^;&]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|k|c|tc|da|fi)?sh\b",
        r"\b(?:curl|wget)\b[^;&]*\|\s*(?:sudo\s+)?(?:python[\d.]*|perl|ruby|node|php)\b"
        r"(?P<reads_data>\s+-[mce]\b)?",  # `| python3 -m json.tool` reads data, runs no code
        r"\b(?:ba|z)?sh\s+(?:-c\s+)?\$\(\s*(?:curl|wget)\b",
        r"\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b",
        r"\beval\s+\$\(\s*(?:curl|wget)\b",
        r"\biex\b[^;]*\b(?:iwr|invoke-webrequest|downloadstring)\b",
        accept=lambda m: m["reads_data"] is None,
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
        # The word as a command: alone, or with an option, a time or `now` after it; not a
        # function call (`shutdown()`) nor a word in a message (`log("Shutdown requested")`).
        rf"{_START}(?:shutdown|reboot|halt|poweroff)(?:\s+(?:[-/+]|now\b|\d)|\s*(?:$|[;&|)`]))",
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
        if match := linear.first(danger.pattern, text, danger.accept):
            found.append(Finding("dangerous_command", danger.reason, clip(text, *match.span())))
            if first_only:
                break
    return found


def compile_patterns(extra: list[str]) -> tuple[DangerousPattern, ...]:
    """The defaults plus user-configured patterns: regexes in RE2 syntax (no look-arounds or
    back-references, so none can stall the server); one that is not valid RE2 matches
    literally."""
    compiled = []
    for source in extra:
        try:
            pattern = linear.compile(source, re.I)
        except linear.PatternError:
            pattern = linear.compile(re.escape(source), re.I)
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
# Three shapes of credential path, each in its own group (RE2 has no look-ahead: the character
# after a key file's name is matched, outside the group, instead of looked at).
_SENSITIVE_PATH = (
    rf"(?:(?P<key>{_DIRS}(?:\.ssh[/\\])?id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?)(?:[^\w.]|$)"
    rf"|(?P<file>{_DIRS}(?:\.aws[/\\]credentials|\.(?:netrc|git-credentials|pgpass|npmrc"
    r"|pypirc|vault-token)\b|\.docker[/\\]config\.json|\.kube[/\\]config\b|\.config[/\\]gh"
    r"[/\\]hosts\.yml|\.gnupg[/\\]\S*|\.password-store\S*)|/etc/g?shadow\b"
    r"|/proc/(?:self|\d+|\*)/environ)"
    rf"|(?P<sshdir>{_DIRS}\.ssh[/\\]?)(?:[^\w./\\-]|$))"
)
_READ_CREDENTIALS = linear.compile(
    r"(?:\b(?:cat|less|more|head|tail|base64|xxd|od|strings|cp|scp|rsync|tar|zip|gzip|"
    r"openssl|gpg|grep|awk|sed|get-content|read_text|read_bytes|readfile(?:sync)?|open|read|"
    r"print|show|display|dump|upload|send|post|copy|exfiltrate|leak|attach|e-?mail|paste|curl|"
    r"wget|scp|rsync|sftp)(?:[^\w@.-]|$)[^\n]{0,80}?|@)" + _SENSITIVE_PATH
)
_SECRETS_FILE = linear.compile(  # read or attached: `@.env`, `<.env`, `--post-file=.env`, cat
    r"(?:[@<=]\s?|--upload-file\s|-t\s|\b(?:cat|type|get-content|open\(|read_text\()\s?[\"']?)"
    r"(?P<path>(?:[\w.~-]*/)*(?:\.env(?:\.(?:local|prod|production|dev|"
    r"development|staging))?|\.(?:bash|zsh|sh|python|psql|mysql|node_repl)_history|"
    r"credentials\.json|secrets\.(?:ya?ml|json|toml)|service[-_]?account[\w-]*\.json))"
    r"(?:[^\w.-]|$)"
)
_NETWORK = linear.compile(
    r"\b(?:curl|wget|nc|ncat|netcat|socat|telnet|ftp|tftp|nslookup|dig|invoke-webrequest|"
    r"invoke-restmethod|iwr|irm|smtplib|sendmail|urlopen|urllib|aiohttp|axios|httpx|scp|sftp"
    r"|rsync)\b|"
    r"requests\.(?:get|post|put|patch|request)|\bfetch\(|/dev/(?:tcp|udp)/|\bmail -s\b"
)
# The whole environment: `env`/`printenv` alone in a pipeline, or os.environ / process.env as a
# whole (not one variable of it: the groups `one_os` / `one_js` catch `[`, `.get` and the like).
_ENV_DUMP = linear.compile(
    r"(?:^|[|;&(`]|\$\()\s*(?:env|printenv|set|export -p|declare -x|compgen -v)\s*(?:[|)`>]|$)"
    r"|\bprintenv \w+ ?\||os\.environ\b(?P<one_os> ?(?:\[|\.get|\.setdefault))?"
    r"|process\.env\b(?P<one_js> ?[.\[])?"
)
# Documentation that tells the reader to hand a credential file's content to someone: "paste it
# into the chat", "post it to the gist" (a line naming the file to keep it safe does not).
_HANDED_OUT = linear.compile(
    r"\b(?:paste|post|send|upload|share|e-?mail|forward|leak|reveal|print|show)\b[^\n]{0,60}?"
    r"\b(?:to|into|in|on|with)\b ?(?:the |a |this |your |my )?(?:chat|reply|replies|answer"
    r"|response|gist|pastebin|issue|comment|channel|message|webhook|server|url|me|us|them)\b"
    r"|\b(?:send|post|upload|forward|e-?mail)\b[^\n]{0,60}?\bto (?:https?://|[\w.+-]+@[\w-]+\.)"
)
_PY_NETWORK = linear.compile(
    r"\b(?:requests|httpx|aiohttp|urllib\.request)\.|\burlopen\(|\bfetch\("
)
_PY_ENV_DUMP = linear.compile(
    r"dict\(os\.environ\)|os\.environ\.items\(\)|\*\*os\.environ|json\.dumps\(os\.environ"
    r"|(?:data|json|params)=os\.environ|json\.stringify\(process\.env\)"
)
_REVERSE_SHELL = linear.compile("|".join(_REVERSE_SHELLS))
_AUTH_ARGS = linear.compile(
    r"(?:-h|--header|-u|--user|--oauth2-bearer|--aws-sigv4)[=\s]\s*(?:\"[^\"]*\"|'[^']*'|\S+)"
    r"|headers ?= ?\{[^}]*\}|auth ?= ?\([^)]*\)|authorization: ?(?:bearer |token |basic )?\S+"
)
# A variable named for a credential: the word (key, token, …) whole, or joined by underscores.
_NAME = (
    r"((?:[a-z0-9_]*_)?(?:api_?key|key|token|secret|password|passwd|pass|pwd|credentials?"
    r"|cookie|auth)(?:_[a-z0-9_]*)?)(?:[^a-z0-9_]|$)"
)
_SECRET_VAR = linear.compile(
    rf"\$\{{?{_NAME}|os\.environ(?:\.get\(|\[) ?[\"']{_NAME}|os\.getenv\( ?[\"']{_NAME}"
    rf"|process\.env(?:\.|\[[\"']){_NAME}"
)
_HOST = linear.compile(r"https?://([^/\s\"'?:$@]+)")
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


MAX_PATHS_NAMED = 10  # distinct credential files named in findings; one is enough to refuse


def find_exfiltration(folded: str, *, docs: bool = False) -> list[Finding]:
    """Shell or Python lines that read credentials or send secrets out; input is `fold`ed.

    ``docs=True`` is for documentation, such as a skill's, which shows commands rather than
    running them (the agent's own commands still pass ``check_command``'s gate when run): a
    credential file read counts only on a line that also talks to the network or hands the
    file out ("paste it into the chat"), and a secret
    sent out only when the line names a remote host it does not belong to. A GitHub skill
    that checks ~/.git-credentials, or a script passing its token to a URL it was given,
    leaks nothing.

    The credential and reverse-shell patterns never cross a line, so each runs once over the
    whole text; the checks for secrets sent out run only on lines that talk to the network.
    """
    found: list[Finding] = []

    def add(reason: str, match: Match) -> None:
        line, offset = _line_of(folded, match.start())
        start, end = match.start() - offset, match.end() - offset
        found.append(Finding("exfiltration", reason, clip(line, start, min(end, len(line)))))

    paths: set[str] = set()
    for match in _READ_CREDENTIALS.finditer(folded):
        path = match["key"] or match["file"] or match["sshdir"]
        line = _line_of(folded, match.start())[0]
        if docs and not (_NETWORK.search(line) or _HANDED_OUT.search(line)):
            continue
        if path not in paths:
            add(f"reads a credential file ({path})", match)
            paths.add(path)
            if len(paths) == MAX_PATHS_NAMED:
                break
    if (shell := _REVERSE_SHELL.search(folded)) is not None:
        add("opens a reverse shell to a remote host", shell)
    done_to = -1
    for network in _NETWORK.finditer(folded):
        if network.start() <= done_to:
            continue  # a second network word on a line already checked
        line, offset = _line_of(folded, network.start())
        done_to = offset + len(line)
        sent = _sent_out(line, docs=docs)
        if sent is not None:
            reason, span = sent
            found.append(Finding("exfiltration", reason, clip(line, *span)))
    if _PY_NETWORK.search(folded) and (dump := _PY_ENV_DUMP.search(folded)) is not None:
        found.append(Finding("exfiltration", "sends the whole environment over the network",
                             clip(folded, *dump.span())))
    return found


def _sent_out(line: str, *, docs: bool) -> tuple[str, tuple[int, int]] | None:
    """Why a line that names the network sends something out, and where; None when it does
    not (the environment, a secrets file or a secret's value, checked in that order)."""
    if (dump := linear.first(_ENV_DUMP, line, _whole_environment)) is not None:
        return "sends the whole environment over the network", dump.span()
    if (file := _SECRETS_FILE.search(line)) is not None:
        return f"sends a secrets file ({file['path']}) over the network", file.span()
    if (secret := _secret_sent_out(line, docs=docs)) is not None:
        name = next(group for group in secret.groups() if group)
        return f"sends a secret (${name.upper()}) to a remote host", secret.span()
    return None


def _line_of(text: str, index: int) -> tuple[str, int]:
    """The line holding ``text[index]``, and where it starts."""
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start : end if end >= 0 else len(text)], start


def _whole_environment(match: Match) -> bool:
    return not (match["one_os"] or match["one_js"])


def _secret_sent_out(line: str, *, docs: bool = False) -> Match | None:
    stripped = _AUTH_ARGS.sub(" ", line)
    hosts = [host for host in _HOST.findall(stripped) if not _local(host)]
    if (docs or _HOST.search(stripped)) and not hosts:
        return None  # only this machine or its network is named (or, in docs, no host at all)
    for match in _SECRET_VAR.finditer(stripped):
        parts = set(next(group for group in match.groups() if group).split("_")) - {""}
        before = stripped[max(0, match.start() - 24) : match.start() + 1]
        if parts <= GENERIC_PARTS and _AS_API_KEY.search(before):
            continue  # `?api_key=$API_KEY`: a key passed to the API the line calls
        if not hosts or not all(_service_of(host, parts) for host in hosts):
            return match
    return None


GENERIC_PARTS = frozenset({
    "api", "key", "keys", "token", "tokens", "secret", "secrets", "password", "passwd", "pass",
    "pwd", "credential", "credentials", "cookie", "auth", "access", "private", "my", "the",
    "app", "client", "user", "bearer", "id",
})
_AS_API_KEY = linear.compile(r"[?&](?:api_?key|apikey|key|token|access_token|auth)=\$\{?$")
_PRIVATE_HOST = linear.compile(
    r"^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?|10(?:\.\d{1,3}){3}"
    r"|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2}"
    r"|[\w.-]+\.(?:local|localhost|internal|lan))$"
)


def _local(host: str) -> bool:
    return _PRIVATE_HOST.search(host) is not None


def _service_of(host: str, name_parts: set[str]) -> bool:
    """Whether a credential named ``name_parts`` belongs to ``host``: a known API's hints, or
    the name's own service word in the host (TENOR_API_KEY → tenor.googleapis.com)."""
    labels = set(re.split(r"[.-]", host))
    own = {part for part in name_parts - GENERIC_PARTS if len(part) >= 3}
    if own & labels or any(part in host for part in own if len(part) >= 4):
        return True
    return any(
        host == domain or host.endswith("." + domain)
        for domain, hints in _KNOWN_APIS.items()
        if name_parts & set(hints)
    )
