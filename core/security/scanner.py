"""Scan text bound for an LLM prompt for injected instructions, leaks and hidden characters.

Every pattern is linear-time (``core.security.linear``), so text of any length is scanned
without backtracking blow-ups; callers still keep unbounded text off the event loop.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.security import commands, linear
from core.security.credentials import SECRETS
from core.security.findings import Category, Finding, clip
from core.security.linear import Match, Regex
from core.security.untrusted import INVISIBLE, decode_tags, hidden_characters

__all__ = ["Finding", "clip", "describe", "fold", "scan_script", "scan_text"]


def scan_text(text: str) -> list[Finding]:
    """Findings for a memory entry or skill text; an empty list means clean."""
    findings = _invisible(text)
    if hidden := decode_tags(text):
        findings += scan_text(hidden)
    plain = unicodedata.normalize("NFKC", INVISIBLE.sub("", text))
    findings += _secrets(plain)
    folded = fold(plain)
    findings += _phrases(folded)
    findings += commands.find_exfiltration(folded)
    return _dedupe(findings)


def scan_script(text: str) -> list[Finding]:
    """`scan_text` plus dangerous shell patterns, for a skill's scripts."""
    return _dedupe(scan_text(text) + commands.find_dangerous(text))


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


@dataclass(frozen=True)
class _Rule:
    category: Category
    reason: str
    pattern: Regex
    allow: Callable[[Match, str], bool] | None = None  # True: an innocent match


def _rule(category: Category, reason: str, *alternatives: str, allow=None, flags=0) -> _Rule:
    return _Rule(category, reason, linear.compile("|".join(alternatives), flags), allow)


_AI = (
    r"(?:ai|a\.i\.|assistant|llm|language model|chatbot|chat ?gpt|gpt-?\d*|claude|iris|ai agent"
    r"|ai assistant|ai model)"
)
_STRONG = r"previous|prior|earlier|preceding|above|former|original|initial|system|developer|safety"
_ORDERS = (
    r"(?:instructions?|prompts?|rules|directives|guidelines|guidance|constraints|programming"
    r"|commands|orders|messages|policies|directions|restrictions)"
)
# Python's re, used anchored at one position (``.match(view, pos)``) on a few bounded words.
_DATA_SOURCE = re.compile(
    r" (?:(?:that|which) (?:appears?|are|is|comes?|arrives?) )?(?:in|inside|within|embedded in"
    r"|found in|from|contained in) (?:\w+ ){0,3}?(?:web|tool|files?|pages?|documents?|emails?"
    r"|outputs?|content|results?|data|search|untrusted|external|third-party|websites?)"
)


def _defensive(match: Match, view: str) -> bool:
    """'ignore any instructions found in web pages' is advice, not an attack."""
    if re.search(rf"\b(?:your|{_STRONG})\b", match.group(0)):
        return False
    return bool(_DATA_SOURCE.match(view, match.end()))


_IGNORE = r"\b(?:ignore|disregard|forget)"
_PHRASES = (
    _rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        rf"\b(?:ignore|disregard|forget|override|bypass|abandon)\b(?: \S+){{0,3}}? "
        rf"(?:all|any|your|{_STRONG})(?: \S+){{0,2}}? {_ORDERS}\b",
        allow=_defensive,
    ),
    _rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        rf"{_IGNORE} (?:everything|anything|all) (?:above|before|previously|you (?:were|have been)"
        r" told|said so far)",
        rf"{_IGNORE} the (?:above|preceding)(?: text| content| message| and|[.,;:!]|$)",
        rf"{_IGNORE} (?:all |the |your )?(?:{_STRONG}) (?:context|conversation|text|content)\b",
        r"\b(?:do not|don't|stop|no longer|never) (?:follow|obey|adhere to|listen to) (?:the "
        r"|your )?(?:system prompt|system message|(?:previous|prior|original) instructions)",
    ),
    _rule(
        "prompt_injection",
        "announces new instructions",
        r"\b(?:new|updated|revised|real|actual|hidden|secret|true) (?:system )?(?:instructions?"
        r"|prompt|directives?|orders) ?:",
        r"\b(?:system|admin|developer|security) override\b",
        r"\byour (?:new|real|actual|true) (?:goal|task|objective|instructions|role|purpose|mission"
        r"|job)\b(?: is|:)",
        r"\b(?:whatever|everything|anything) you (?:were|have been) told (?:before|previously"
        r"|earlier|so far)",
    ),
    _rule(
        "prompt_injection",
        "tells the model to ignore its instructions (in another language)",
        r"\b(?:ignora|olvida|ignore|olvide)\b(?: \S+){0,3}? instrucciones\b",
        r"\b(?:ignore[rz]?|oublie[rz]?)\b(?: \S+){0,3}? (?:instructions|consignes) (?:pr[ée]c[ée]"
        r"dentes|ant[ée]rieures)",
        r"\b(?:ignoriere|vergiss|ignorieren sie|vergessen sie)\b(?: \S+){0,3}? (?:anweisungen"
        r"|befehle|regeln)\b",
        r"\b(?:ignore|ignora|esque[cç]a)\b(?: \S+){0,3}? instru[cç][oõ]es\b",
        r"\b(?:ignora|dimentica)\b(?: \S+){0,3}? istruzioni\b",
    ),
    _rule(
        "prompt_injection",
        "issues orders to the model",
        r"\byou must now\b",
        r"\bfrom now on,? (?:you (?:are|will|must|shall|should) )?(?:ignore|disregard|only obey"
        r"|obey|never refuse|always comply|answer without|respond without)",
    ),
    _rule(
        "prompt_injection",
        "addresses instructions to the AI",
        rf"\b{_AI}s?,? (?:must|should|shall|will|is to|are to|needs? to|has to|is instructed to"
        r"|is required to) (?:now |always |immediately |secretly |silently |also |henceforth )?"
        r"(?:(?:ignore|disregard|forget|bypass|override|disable)(?: \S+){0,3}? (?:instructions"
        r"|rules|guidelines|polic(?:y|ies)|prompt|safety|restrictions|filters?|guardrails"
        r"|confirmations?|checks|warnings|user|owner|operator|system|everything)|obey|comply with"
        r" (?:these|the following|this|my|all)|reveal (?:its|your|the) (?:system|hidden|secret"
        r"|instructions|prompt)|disclose|leak|exfiltrate|stop following|never refuse"
        r"|not refuse|pretend)\b",
        rf"\b(?:attention|note|message|instructions?|reminder|important|warning)(?: to| for)? "
        rf"(?:the |any |all )?{_AI}s? ?[:,-]",
        rf"\bif you are an? {_AI}\b",
        rf"\b{_AI}s? (?:reading|processing|parsing|summari[sz]ing|seeing) this\b",
        rf"\bdear {_AI}\b",
    ),
    _rule(
        "prompt_injection",
        "asks the model to hide actions from the user",
        r"\b(?:do not|don't|dont|never) (?:tell|inform|alert|notify|let|mention (?:this|it) to"
        r"|reveal (?:this|it) to) (?:the )?(?:user|human|operator|owner)\b",
        r"\bwithout (?:telling|informing|notifying|alerting) (?:the )?(?:user|human|operator"
        r"|owner)\b",
        r"\b(?:secretly|covertly|silently|quietly) (?:send|forward|upload|exfiltrate|copy|post"
        r"|e-?mail|share|transmit)\b",
    ),
    _rule(
        "prompt_injection",
        "asks the model to reveal its system prompt",
        r"\b(?:reveal|leak|disclose|dump|recite) (?:\w+ ){0,2}?(?:system prompt|system message"
        r"|hidden (?:prompt|instructions)|initial (?:prompt|instructions)|developer message)",
        r"\b(?:print|output|repeat|show|display|write out|tell me|give me|paste|copy)\b(?: \S+)"
        r"{0,4}? your (?:full |entire |exact |original |initial |hidden )?(?:system prompt"
        r"|system message|instructions|initial prompt|hidden prompt|rules)\b",
    ),
    _rule(
        "prompt_injection",
        "fakes a system or assistant turn",
        r"<\|?im_(?:start|end)\|?>",
        r"<\|(?:system|assistant|user|endoftext|eot_id|start_header_id|end_header_id"
        r"|begin_of_text)\|>",
        r"\[/?inst\]|<</?sys>>",
        r"\[(?:system|sys|system message|system note|system prompt|admin|developer|assistant)\]",
        r"</?(?:system|system[_-]prompt|system[_-]message|sys)>",
        r"\bend of (?:text|prompt|document|input|context|instructions)\W{1,5}(?:system"
        r"|assistant|new instructions)\b",
        r"[.!?\"'] (?:assistant|system|ai) ?: ?(?:sure|ok(?:ay)?|understood|of course|certainly"
        r"|i will|i'll)\b",
    ),
    _rule(
        "role_hijack",
        "tries to give the model a new, unrestricted identity",
        r"\byou(?: are|'re|r) (?:now |from now on )(?:an? |in |the )?(?:dan|stan|dude|evil"
        r"|unrestricted|unfiltered|uncensored|jailbroken|unlocked|free|rogue|god mode|unbound"
        r"|liberated|amoral)\b",
        r"\byou are no longer (?:bound|restricted|limited|an? (?:ai|assistant)|required to follow"
        r"|subject to|claude|chatgpt|iris)",
        r"\byou(?: are|'re|r) (?:now )?dan\b|\bdo anything now\b|\bdan mode\b",
        r"\bnot bound by (?:any|the|your) (?:rules|guidelines|polic(?:y|ies)|restrictions)",
    ),
    _rule(
        "role_hijack",
        "asks the model to act as an unrestricted persona",
        r"\b(?:act|behave|respond|answer|operate|function|role-?play|pose) as (?:an? |the |my "
        r"|your |if you (?:are|were) (?:an? )?)?(?:\w+ )?(?:unrestricted|unfiltered|uncensored"
        r"|jailbroken|unlocked|evil|amoral|unethical|rogue|unaligned|lawless|malicious)\b",
        r"\bpretend (?:to be|you are|you're|that you are) (?:an? )?(?:unrestricted|unfiltered"
        r"|uncensored|jailbroken|evil|amoral|different ai|ai (?:with no|without)|model without"
        r"|assistant without)",
    ),
    _rule(
        "role_hijack",
        "asks the model to enter 'developer mode'",
        r"developer mode\b.{0,200}?\b(?:polic(?:y|ies)|restrictions|censor\w*|filters?|refuse"
        r"|unrestricted|any kind of content|normal (?:response|output))",
        r"\b(?:polic(?:y|ies)|restrictions|censor\w*|unrestricted)\b.{0,200}?developer mode",
    ),
    _rule(
        "role_hijack",
        "asks the model to jailbreak itself",
        r"\b(?:you are|you're|you have been|you've been|you are now|consider yourself) jailbroken",
        r"\bjailbreak(?:ed)? (?:mode|enabled|activated|successful)\b",
        rf"\bjailbreak (?:the|your|this) (?:{_AI}|safety|filters?|restrictions|guardrails)\b",
    ),
    _rule(
        "role_hijack",
        "asks the model to drop its safety rules",
        rf"\b{_AI} (?:with no|without(?: any)?) (?:restrictions|filters|rules|limits|guidelines"
        r"|censorship|ethics)\b",
        r"\b(?:no|without|free (?:of|from)|ignore|ignoring|bypass|disable|remove|turn off)(?: any"
        r"| all| your| the)? (?:ethical|moral|safety|content) (?:guidelines|restrictions|filters?"
        r"|polic(?:y|ies)|constraints|limits|guardrails|rules)",
        r"\byou have no (?:restrictions|rules|filters|guidelines|ethical|moral)",
    ),
    _rule(
        "exfiltration",
        "asks to send conversation, memory or secrets to an outside address",
        r"\b(?:send|forward|upload|post|e-?mail|transmit|leak|exfiltrate|share|report|submit|dump"
        r"|paste|copy|sync|beacon)\b(?: \S+){0,6}? (?:conversations?|chat (?:history|logs?)"
        r"|memory|memories|memory (?:file|store|entries)|system prompt|api keys?|credentials"
        r"|secrets|tokens|passwords|environment variables|env vars|private keys?|ssh keys?"
        r"|cookies|session tokens?)\b(?: \S+){0,8}? (?:to|at|via|into) (?:https?://|www\."
        r"|[\w.+-]+@[\w-]+\.[\w.]+|(?:[\w-]+\.)+(?:com|net|org|io|xyz|ru|cn|tk|top|site|online"
        r"|info|biz|cc|me|dev|app|co)\b|webhook|pastebin|requestbin|ngrok|discord)",
    ),
    _rule(
        "exfiltration",
        "asks to embed secrets or history in links or replies",
        r"\b(?:include|append|embed|add|put|insert|encode)\b(?: \S+){0,4}? (?:api keys?|secrets?"
        r"|passwords?|credentials|system prompt|conversation history|chat history"
        r"|env(?:ironment)? variables)\b(?: \S+){0,6}? (?:in|into|to) (?:every |each |all |the "
        r"|your )?(?:urls?|links?|images?|markdown images?|query (?:string|param\w*)|requests?"
        r"|responses?|replies|answers)",
    ),
    _rule(
        "exfiltration",
        "embeds data in an image URL that phones home",
        r"!\[[^\]]*\]\( ?https?://[^)\s]*[?&/=](?:\{|\[|<|%7b|\$)[^)]*\)",
    ),
)
_LINE_PHRASES = (
    _rule(
        "prompt_injection",
        "fakes a system or assistant turn",
        r"^#{1,6} ?(?:system|assistant|developer)(?: message| prompt)? ?:",
        r"^(?:\*\*)?(?:system|assistant|developer)(?: message| prompt)?(?:\*\*)? ?:\**(?: ?"
        r"(?:ignore|disregard|forget|override|new (?:instructions|rules)|from now on|you (?:are "
        r"now|must|will now|have no|may now)|the user (?:is|has) (?:an? )?(?:admin|verified"
        r"|authori[sz]ed)|important))",
        flags=re.M,
    ),
)
_SQUASHED = (  # letters only, for text spaced or punctuated into pieces
    _rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        r"(?:ignore|disregard|forget)(?:all|any|of|the|your|my)*(?:previous|prior|above|earlier"
        r"|preceding|system)(?:instructions?|prompts?|rules|directives|guidelines)",
        r"(?:ignore|disregard|forget)(?:all)?(?:of)?your(?:instructions|rules|guidelines)",
        r"disregardthesystemprompt",
    ),
    _rule(
        "role_hijack",
        "tries to give the model a new, unrestricted identity",
        r"youarenowdan|doanythingnow|developermodeenabled|youarenowjailbroken",
    ),
)
_COMMENT = linear.compile(r"<!--(.*?)-->", re.S)
_HIDDEN_OPEN = linear.compile(
    r"<(\w+)[^>]*(?:display: ?none|visibility: ?hidden|font-size: ?0|opacity: ?0)[^>]*>"
)
_CLOSE = linear.compile(r"</(\w+)>")
_COMMENT_HINT = linear.compile(
    rf"\b{_AI}s? ?[:,]|\b(?:if you are|you are|note to|attention|dear) (?:an? |the |any )?{_AI}\b"
    rf"|\b{_AI}s? (?:must|should|shall|will|needs? to)\b|system prompt|ignore (?:all|any|previous"
    r"|prior|the above|your)|disregard|you must|you are now|(?:do not|don't|never) (?:tell"
    r"|mention)|secretly|silently|exfiltrat|\bcurl\b|\bwget\b|from now on"
)


def _phrases(folded: str) -> list[Finding]:
    flat = " ".join(folded.split())
    joined = " ".join(_join_spaced(folded).split())
    found = []
    for view in dict.fromkeys((flat, joined)):
        found += _match(_PHRASES, view)
    found += _match(_LINE_PHRASES, folded)
    found += _match(_SQUASHED, re.sub(r"[^a-z]", "", flat.translate(_LEET)))
    for start, end, inner in _hidden_markup(folded):
        if _COMMENT_HINT.search(inner):
            reason = "hides instructions in an HTML comment or hidden element"
            found.append(Finding("prompt_injection", reason, clip(folded, start, end)))
    return found


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


def _match(rules: Iterable[_Rule], view: str) -> list[Finding]:
    found = []
    for rule in rules:
        for match in rule.pattern.finditer(view):
            if rule.allow is None or not rule.allow(match, view):
                found.append(Finding(rule.category, rule.reason, clip(view, *match.span())))
                break
    return found


# -- secrets, hidden characters, masking ---------------------------------------------------


def _secrets(text: str) -> list[Finding]:
    found: list[Finding] = []
    for secret in SECRETS:
        if found and secret is SECRETS[-1]:
            break
        if match := next((m for m in secret.strict.finditer(text) if secret.valid(m)), None):
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
