"""The words skill routing matches on: casefolded, stopwords dropped, Porter2-stemmed (the
shared, thread-safe stemmer of ``core.retrieval``). Ranking, the concept lexicon and duplicate
detection all tokenise through here."""

from __future__ import annotations

from functools import lru_cache

from core.retrieval.stemming import ENGLISH
from core.retrieval.text import fold_case, words

_STOPWORD_TEXT = """
a about above after again all also am an and any are aren as at be because been before
being below between both but by can cannot could did do does doing don down during each either
etc even ever every few for from further get gets getting got had has have having he her here
hers herself him himself his how i if in into is isn it its itself just let lets like make me
might more most much must my myself need needs no nor not now of off on once one only or other
our ours ourselves out over own please pls really same shall she should so some something such
than thanks thank that the their theirs them themselves then there these they thing things this
those through to too under until up upon us use used uses using very via want wanna was we were
what when where whether which while who whom why will with within without would yes yet you your
yours yourself yourselves hi hey hello ok okay iris help tell know way ll ve re d s t m
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Short and non-ASCII words are kept as they are."""
    if len(word) <= 3 or not word.isascii():
        return word
    return ENGLISH.stem(word)


def terms(text: str) -> list[str]:
    """Stemmed content words of ``text``: casefolded, stopwords dropped, names split at '-'."""
    out = []
    for word in words(fold_case(text)):
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(stem(word))
    return out
