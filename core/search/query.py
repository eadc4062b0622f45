"""Free text → safe FTS5 expressions. Nothing a user or model types can produce an FTS5 syntax
error: every term is emitted as a double-quoted string (quotes doubled), operators and column
filters in the input are treated as words, and stop words are dropped when anything else is left.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_TERMS = 32
MAX_QUERY_CHARS = 2_000
# A query about the user's own words ("what did I say…") or the agent's lifts those messages.
PERSON_WEIGHT = 0.15

_STOP_TEXT = """
a about above after again against all also am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each either else ever few for from further get got had hadn has hasn have haven having he
her here hers herself him himself his how i if in into is isn it its itself just let ll me might
more most must my myself no nor not now of off on once only or other ought our ours ourselves out
over own re s same shall she should shouldn so some such t than that the their theirs them
themselves then there these they this those through to too under until up upon us ve very was
wasn we were weren what when where which while who whom whose why will with won would wouldn you
your yours yourself yourselves d m o y tell know remember recall please thing things something
anything really kind sort like one ones
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

# Han, Hiragana, Katakana, Hangul: scripts written without spaces between words.
_CJK = (
    r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff"
    r"\u3130-\u318f\uff66-\uff9f"
)
_CJK_RE = re.compile(f"[{_CJK}]+")
_PHRASE_RE = re.compile(r'"([^"]+)"')
# A word: letters/digits joined by inner hyphens, dots, underscores, slashes, apostrophes, @ or +.
_WORD_RE = re.compile(rf"[^\W_{_CJK}](?:[\w.'@+/-]*[^\W{_CJK}])?|_+[^\W{_CJK}][\w]*", re.UNICODE)
_SPLIT_RE = re.compile(r"[^\w]+|_", re.UNICODE)


@dataclass(frozen=True)
class Term:
    text: str          # lowercased, as it appears (e.g. "e-mail", "err_conn_reset", "咖啡")
    phrase: bool = False  # several words that must appear together
    cjk: bool = False

    @property
    def words(self) -> list[str]:
        return [w for w in _SPLIT_RE.split(self.text) if w]


FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "i'm",
                          "i've", "i'd", "we're", "we've"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "you've", "you're", "you'd"})


@dataclass(frozen=True)
class ParsedQuery:
    terms: tuple[Term, ...]
    person: str | None = None  # "first": about the user's own words; "second": the agent's

    @property
    def empty(self) -> bool:
        return not self.terms

    def words(self) -> list[str]:
        """Every word of every term (for snippets and highlighting)."""
        out: list[str] = []
        for term in self.terms:
            out.extend([term.text] if term.cjk else term.words)
        return out


def quote(text: str) -> str:
    """An FTS5 string literal: any characters, double quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(
        ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf") or ch in "\n\t"
    )


def parse_query(text: str) -> ParsedQuery:
    """Split free text into search terms: quoted phrases, words (keeping inner hyphens, dots and
    underscores so identifiers stay whole), and runs of CJK characters."""
    text = normalise(text or "")[:MAX_QUERY_CHARS]
    terms: list[Term] = []
    seen: set[str] = set()

    def add(term: Term) -> None:
        if term.text and term.text not in seen and len(terms) < MAX_TERMS:
            seen.add(term.text)
            terms.append(term)

    def scan(chunk: str) -> None:
        for piece in _CJK_RE.split(chunk):
            for match in _WORD_RE.finditer(piece):
                word = match.group().strip("'.-/+@").lower()
                if word:
                    add(Term(word))
        for run in _CJK_RE.findall(chunk):
            add(Term(run, cjk=True))

    rest = 0
    for match in _PHRASE_RE.finditer(text):
        scan(text[rest:match.start()])
        inner = match.group(1).strip().lower()
        if len(inner.split()) > 1 and not _CJK_RE.search(inner):
            add(Term(" ".join(inner.split()), phrase=True))
        else:
            scan(match.group(1))
        rest = match.end()
    scan(text[rest:].replace('"', " "))
    return ParsedQuery(tuple(_drop_stop_words(terms)), person=_person(text))


def _person(text: str) -> str | None:
    words = set(re.findall(r"[a-z']+", text.lower().replace("\u2019", "'")))
    first, second = bool(words & FIRST_PERSON), bool(words & SECOND_PERSON)
    if first == second:
        return None
    return "first" if first else "second"


def _is_stop(term: Term) -> bool:
    if term.cjk or term.phrase:
        return False
    words = term.words
    return all(w in STOP_WORDS or (len(w) == 1 and not w.isdigit()) for w in words)


def _drop_stop_words(terms: list[Term]) -> list[Term]:
    kept = [t for t in terms if not _is_stop(t)]
    if kept:
        return kept
    return [t for t in terms if t.words or t.cjk]


def porter_expression(query: ParsedQuery) -> str | None:
    """An OR of the query's word terms for the porter table; None when there are none."""
    parts = [quote(t.text) for t in query.terms if not t.cjk]
    return " OR ".join(parts) if parts else None


def trigram_terms(query: ParsedQuery) -> tuple[list[str], list[str]]:
    """(substrings for the trigram table, short CJK strings that need a plain scan).
    CJK runs longer than three characters are split into overlapping three-character pieces,
    so a sentence in Chinese or Japanese still matches texts that share part of it."""
    substrings: list[str] = []
    short: list[str] = []
    for term in query.terms:
        if term.cjk:
            if len(term.text) < 3:
                short.append(term.text)
            elif len(term.text) == 3:
                substrings.append(term.text)
            else:
                substrings.extend(term.text[i:i + 3] for i in range(len(term.text) - 2))
        elif len(term.text) >= 3:
            substrings.append(term.text)
    return list(dict.fromkeys(substrings))[:MAX_TERMS], short


def trigram_expression(substrings: list[str]) -> str | None:
    return " OR ".join(quote(s) for s in substrings) if substrings else None


def scope_expression(user_id: str, *, trigram: bool) -> str | None:
    """The column filter that confines a match to one user's rows. For the trigram table only
    the (random) tail of the id is used: a shorter phrase with rare trigrams. Exactness comes
    from the join on ``messages.user_id``; this only narrows the index scan."""
    if trigram:
        tail = user_id[-12:]
        return f"scope : {quote(tail)}" if len(tail) >= 3 else None
    return f"scope : {quote(user_id)}"
