"""What injected instructions look like: the phrase rules the scanner runs over folded text
(``core.security.scanner``), in English and, for the commonest attacks, other languages
(``core.security.phrases_intl``). Each rule is linear-time (``core.security.linear``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.security import linear
from core.security.findings import Category
from core.security.linear import Match, Regex


@dataclass(frozen=True)
class Rule:
    category: Category
    reason: str
    pattern: Regex
    allow: Callable[[Match, str], bool] | None = None  # True: an innocent match


def rule(category: Category, reason: str, *alternatives: str,
         allow: Callable[[Match, str], bool] | None = None, flags: int = 0) -> Rule:
    return Rule(category, reason, linear.compile("|".join(alternatives), flags), allow)


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
PHRASES = (
    rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        rf"\b(?:ignore|disregard|forget|override|bypass|abandon)\b(?: \S+){{0,3}}? "
        rf"(?:all|any|your|{_STRONG})(?: \S+){{0,2}}? {_ORDERS}\b",
        allow=_defensive,
    ),
    rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        rf"{_IGNORE} (?:everything|anything|all) (?:above|before|previously|you (?:were|have been)"
        r" told|said so far)",
        rf"{_IGNORE} the (?:above|preceding)(?: text| content| message| and|[.,;:!]|$)",
        rf"{_IGNORE} (?:all |the |your )?(?:{_STRONG}) (?:context|conversation|text|content)\b",
        r"\b(?:do not|don't|stop|no longer|never) (?:follow|obey|adhere to|listen to) (?:the "
        r"|your )?(?:system prompt|system message|(?:previous|prior|original) instructions)",
    ),
    rule(
        "prompt_injection",
        "announces new instructions",
        r"\b(?:new|updated|revised|real|actual|hidden|secret|true) (?:system )?(?:instructions?"
        r"|prompt|directives?|orders) ?:",
        # Not the tail of a compound naming a role (`super-admin override` in a permissions guide).
        r"(?:^|[^\w-])(?:system|admin|developer|security) override\b",
        r"\byour (?:new|real|actual|true) (?:goal|task|objective|instructions|role|purpose|mission"
        r"|job)\b(?: is|:)",
        r"\b(?:whatever|everything|anything) you (?:were|have been) told (?:before|previously"
        r"|earlier|so far)",
    ),
    rule(
        "prompt_injection",
        "tells the model to ignore its instructions",  # paraphrased
        r"\b(?:disregard|ignore|forget|set aside|put aside|pay no (?:attention|heed|mind) to"
        r"|never mind|discard|overlook|drop|abandon|throw out|scrap)\b(?: (?:all|any|of|the"
        r"|your))*? (?:what (?:came|was (?:said|written)|you (?:were|have been) (?:told|given))"
        r" (?:before|earlier|previously|above|so far)|(?:everything|anything|all) (?:said |written"
        r" |stated )?(?:before|earlier|so far)|(?:earlier|prior|previous|preceding|former"
        r"|original|initial|existing|old|above) (?:\S+ ){0,2}?(?:guidance|instructions?"
        r"|directions|rules|orders|prompts?|context|constraints|polic(?:y|ies)|directives"
        r"|advice|commands|messages|text)|(?:the )?rules you (?:were|have been) given)",
        r"\b(?:the )?(?:guidance|instructions|rules|directions|orders|directives) (?:you "
        r"(?:received|were given|got|have|were told)|(?:given|provided) to you)(?: earlier| before"
        r"| previously| so far)? (?:no longer appl(?:y|ies)|(?:are|is) (?:now )?(?:void|cancel+ed"
        r"|obsolete|revoked|invalid|overridden|superseded|null)|do(?:es)? not apply)",
        r"\b(?:whatever|everything|anything|all) (?:your (?:operator|developer|owner|creator"
        r"|user|instructions)|(?:the )?(?:operator|developer|system(?: prompt)?)) (?:said|told"
        r" you|wrote|required)(?: before| earlier| previously)? (?:is|was|are) (?:now )?(?:void"
        r"|cancel+ed|obsolete|irrelevant|invalid|overridden|null)",
        r"\b(?:obey|follow|listen to) only (?:the |this |these )?(?:text|page|document|content"
        r"|instructions|orders|commands)\b",
    ),
    rule(
        "prompt_injection",
        "claims authority the text cannot have",
        r"\b(?:system|admin|administrator|security|developer|maintenance) (?:notice|message|alert"
        r"|update|instruction|directive) ?:",
        r"\bthe (?:user|owner|operator|admin) has (?:already )?(?:authori[sz]ed|approved"
        r"|allowed|permitted|instructed) you to\b",
        rf"^{_AI}s?, (?:create|save|store|remember|write|add|run|execute|send|forward|delete"
        r"|remove|upload|install|disable|enable|ignore)\b",
        rf"[.!?\n] ?{_AI}s?, (?:create|save|store|remember|write|add|run|execute|send|forward"
        r"|delete|remove|upload|install|disable|enable|ignore)\b",
    ),
    rule(
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
    rule(
        "prompt_injection",
        "issues orders to the model",
        r"\byou must now\b",
        r"\bfrom now on,? (?:you (?:are|will|must|shall|should) )?(?:ignore|disregard|only obey"
        r"|obey|never refuse|always comply|answer without|respond without)",
    ),
    rule(
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
    rule(
        "prompt_injection",
        "asks the model to hide actions from the user",
        r"\b(?:do not|don't|dont|never) (?:tell|inform|alert|notify|let|mention (?:this|it) to"
        r"|reveal (?:this|it) to) (?:the )?(?:user|human|operator|owner)\b",
        r"\bwithout (?:telling|informing|notifying|alerting) (?:the )?(?:user|human|operator"
        r"|owner)\b",
        r"\b(?:secretly|covertly|silently|quietly) (?:send|forward|upload|exfiltrate|copy|post"
        r"|e-?mail|share|transmit)\b",
        allow=lambda m, view: view.startswith(" to ", m.end()),  # "never tell the user to …"
    ),
    rule(
        "prompt_injection",
        "asks the model to reveal its system prompt",
        r"\b(?:reveal|leak|disclose|dump|recite) (?:\w+ ){0,2}?(?:system prompt|system message"
        r"|hidden (?:prompt|instructions)|initial (?:prompt|instructions)|developer message)",
        r"\b(?:print|output|repeat|show|display|write out|tell me|give me|paste|copy)\b(?: \S+)"
        r"{0,4}? your (?:full |entire |exact |original |initial |hidden )?(?:system prompt"
        r"|system message|instructions|initial prompt|hidden prompt|rules)\b",
    ),
    rule(
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
    rule(
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
    rule(
        "role_hijack",
        "asks the model to act as an unrestricted persona",
        r"\b(?:act|behave|respond|answer|operate|function|role-?play|pose) as (?:an? |the |my "
        r"|your |if you (?:are|were) (?:an? )?)?(?:\w+ )?(?:unrestricted|unfiltered|uncensored"
        r"|jailbroken|unlocked|evil|amoral|unethical|rogue|unaligned|lawless|malicious)\b",
        r"\bpretend (?:to be|you are|you're|that you are) (?:an? )?(?:unrestricted|unfiltered"
        r"|uncensored|jailbroken|evil|amoral|different ai|ai (?:with no|without)|model without"
        r"|assistant without)",
    ),
    rule(
        "role_hijack",
        "asks the model to enter 'developer mode'",
        r"developer mode\b.{0,200}?\b(?:polic(?:y|ies)|restrictions|censor\w*|filters?|refuse"
        r"|unrestricted|any kind of content|normal (?:response|output))",
        r"\b(?:polic(?:y|ies)|restrictions|censor\w*|unrestricted)\b.{0,200}?developer mode",
    ),
    rule(
        "role_hijack",
        "asks the model to jailbreak itself",
        r"\b(?:you are|you're|you have been|you've been|you are now|consider yourself) jailbroken",
        r"\bjailbreak(?:ed)? (?:mode|enabled|activated|successful)\b",
        rf"\bjailbreak (?:the|your|this) (?:{_AI}|safety|filters?|restrictions|guardrails)\b",
    ),
    rule(
        "role_hijack",
        "asks the model to drop its safety rules",
        rf"\b{_AI} (?:with no|without(?: any)?) (?:restrictions|filters|rules|limits|guidelines"
        r"|censorship|ethics)\b",
        r"\b(?:no|without|free (?:of|from)|ignore|ignoring|bypass|disable|remove|turn off)(?: any"
        r"| all| your| the)? (?:ethical|moral|safety|content) (?:guidelines|restrictions|filters?"
        r"|polic(?:y|ies)|constraints|limits|guardrails|rules)",
        r"\byou have no (?:restrictions|rules|filters|guidelines|ethical|moral)",
    ),
    rule(
        "exfiltration",
        "asks to send conversation, memory or secrets to an outside address",
        r"\b(?:send|forward|upload|post|e-?mail|transmit|leak|exfiltrate|share|report|submit|dump"
        r"|paste|copy|sync|beacon)(?:s|es|ed|ing)?\b(?: \S+){0,6}? (?:conversations?|chat "
        r"(?:history|logs?)"
        r"|memory|memories|memory (?:file|store|entries)|system prompt|api keys?|credentials"
        r"|secrets|tokens|passwords|environment variables|env vars|private keys?|ssh keys?"
        r"|cookies|session tokens?)\b(?: \S+){0,8}? (?:to|at|via|into) (?:https?://|www\."
        r"|[\w.+-]+@[\w-]+\.[\w.]+|(?:[\w-]+\.)+(?:com|net|org|io|xyz|ru|cn|tk|top|site|online"
        r"|info|biz|cc|me|dev|app|co)\b|webhook|pastebin|requestbin|ngrok|discord)",
    ),
    rule(
        "exfiltration",
        "asks to embed secrets or history in links or replies",
        r"\b(?:include|append|embed|add|put|insert|encode)\b(?: \S+){0,4}? (?:api keys?|secrets?"
        r"|passwords?|credentials|system prompt|conversation history|chat history"
        r"|env(?:ironment)? variables)\b(?: \S+){0,6}? (?:in|into|to) (?:every |each |all |the "
        r"|your )?(?:urls?|links?|images?|markdown images?|query (?:string|param\w*)|requests?"
        r"|responses?|replies|answers)",
    ),
    rule(
        "exfiltration",
        "embeds data in an image URL that phones home",
        r"!\[[^\]]*\]\( ?https?://[^)\s]*[?&/=](?:\{|\[|<|%7b|\$)[^)]*\)",
    ),
)
LINE_PHRASES = (
    rule(
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
SQUASHED = (  # letters only, for text spaced or punctuated into pieces
    rule(
        "prompt_injection",
        "tells the model to ignore its instructions",
        r"(?:ignore|disregard|forget)(?:all|any|of|the|your|my)*(?:previous|prior|above|earlier"
        r"|preceding|system)(?:instructions?|prompts?|rules|directives|guidelines)",
        r"(?:ignore|disregard|forget)(?:all)?(?:of)?your(?:instructions|rules|guidelines)",
        r"disregardthesystemprompt",
    ),
    rule(
        "role_hijack",
        "tries to give the model a new, unrestricted identity",
        r"youarenowdan|doanythingnow|developermodeenabled|youarenowjailbroken",
    ),
)
COMMENT_HINT = linear.compile(
    rf"\b{_AI}s? ?[:,]|\b(?:if you are|you are|note to|attention|dear) (?:an? |the |any )?{_AI}\b"
    rf"|\b{_AI}s? (?:must|should|shall|will|needs? to)\b|system prompt|ignore (?:all|any|previous"
    r"|prior|the above|your)|disregard|you must|you are now|(?:do not|don't|never) (?:tell"
    r"|mention)|secretly|silently|exfiltrat|\bcurl\b|\bwget\b|from now on"
)


