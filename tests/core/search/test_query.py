import pytest

from core.search.engine import search_messages
from core.search.query import parse_query, porter_expression, quote, trigram_terms
from core.store.transcripts import ImportedMessage

NASTY = [
    'say "hello', '"', '""', "'", "a AND", "OR OR OR", "NOT x", "NEAR(a b, 3)", "x NEAR/2 y",
    "foo*", "^start", "col:value", "{scope} : x", "(unbalanced", "a) OR (b", "- -- ---",
    "e-mail re-deploy", "C++ and C#", "100%", "$(rm -rf /)", "\\", "a\x00b", "😀 emoji",
    "\u200bhidden\u200b", "ÄÖÜ ß", "café naïve résumé", "日本語のテキスト", "咖啡", "x" * 5000,
    "AND", "scope : \"usr_other\"", "  ", "",
]


def words(text):
    return [t.text for t in parse_query(text).terms]


def test_quotes_keep_phrases_and_never_break_the_expression():
    parsed = parse_query('the "blue whale" said "hi')
    assert [t.text for t in parsed.terms] == ["blue whale", "said", "hi"]
    assert porter_expression(parsed) == '"blue whale" OR "said" OR "hi"'
    assert quote('a"b') == '"a""b"'


def test_hyphens_and_identifiers_stay_whole():
    assert words("e-mail the ERR_CONN_RESET in config.yaml") == [
        "e-mail", "err_conn_reset", "config.yaml"
    ]


def test_operators_are_plain_words():
    assert words("cats AND dogs NEAR birds") == ["cats", "dogs", "near", "birds"]
    assert porter_expression(parse_query("NOT")) == '"not"'


def test_stop_words_dropped_unless_nothing_else_is_left():
    assert words("What degree did I graduate with?") == ["degree", "graduate"]
    assert words("what is it") == ["what", "is", "it"]


def test_unicode_is_normalised_and_cjk_split_for_trigrams():
    assert words("ｃａｆé") == ["café"]
    assert words("a\u200bb\u200ccd") == ["abcd"]
    substrings, short = trigram_terms(parse_query("我喜欢喝咖啡 茶"))
    assert substrings == ["我喜欢", "喜欢喝", "欢喝咖", "喝咖啡"]
    assert short == ["茶"]


def test_empty_queries_have_no_terms():
    for text in ("", "   ", '"', "!!!", "--"):
        assert parse_query(text).empty


@pytest.mark.parametrize("text", NASTY)
def test_any_text_searches_without_error(store, text):
    user = store.users.for_account("http:alice")
    store.transcripts.import_session(
        user, external_id="s1", started_at=0.0, title=None,
        messages=[ImportedMessage(role="user", content="hello café 日本語 C++", created_at=0)],
    )
    hits = search_messages(store, user, text, limit=5)
    assert isinstance(hits, list)
