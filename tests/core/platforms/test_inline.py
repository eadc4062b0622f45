"""The linear inline scanner gives what the old regular expressions gave, on any short line
(no NUL: the old renderer used NUL placeholders and broke on them), and is not fooled by NUL."""

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.platforms import inline, markdown
from core.platforms.format_telegram import to_telegram_html
from tests.core.platforms import old_inline

PIECES = [*"ab `*_~[]()<>&#! \t", "http://x.y", "mailto:a", "**", "__", "~~", "```", "](", "\u00a0",
          "1"]
line = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)

WRAPS = {"bold": lambda s: f"B[{s}]", "italic": lambda s: f"I[{s}]",
         "strike": lambda s: f"S[{s}]"}


@pytest.mark.slow  # 3,000 examples: 9 s at load 10 (make check leaves it out)
@settings(max_examples=3000, deadline=None)
@given(line)
@example("``a```")
@example("`a``b`")
@example("[[a](http://x)")
@example("***a***")
@example("*a **b** c*")
@example("__a **b__ c**")
@example("~~**a**~~ **~~b~~**")
@example("_snake_case_ and 2*3*4 *x*")
def test_inline_spans_and_emphasis_match_the_regular_expressions(text):
    spans = [(s.kind, s.text, s.url) for s in inline.inline_spans(text)]
    assert spans == list(old_inline.inline_spans(text))
    assert inline.emphasis(text, **WRAPS) == old_inline.emphasis(text, **WRAPS)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from([*"`~# \t\u00a0a+.-!", "```", "~~~", "##"]), max_size=20)
       .map("".join))
def test_fence_and_heading_lines_match_the_regular_expressions(text):
    old = old_inline.FENCE.match(text)
    assert markdown.fence(text) == ((old.group(1), old.group(2)) if old else None)
    old = old_inline.HEADING.match(text)
    assert markdown.heading(text) == (old.group(1) if old else None)


def test_nul_in_a_reply_is_text_not_a_placeholder():
    assert to_telegram_html("a \x005\x00 **b**") == "a \x005\x00 <b>b</b>"
    assert to_telegram_html("**a** \x000\x00") == "<b>a</b> \x000\x00"


WORDS = st.sampled_from(["word", "**bold**", "*it*", "_under_", "~~old~~", "`code`",
                         "[site](https://x.dev/a?b=1&c=2)", "a<b", "x&y", "😀", "1.", "-", ">"])
PARAGRAPH = st.lists(WORDS, min_size=1, max_size=30).map(" ".join)
MARKDOWN = st.lists(st.one_of(PARAGRAPH, PARAGRAPH.map(lambda p: f"```py\n{p}\n```")),
                    min_size=1, max_size=12).map(lambda ps: "\n\n".join(ps))


@settings(max_examples=300, deadline=None)
@given(MARKDOWN, st.integers(min_value=64, max_value=400),
       st.sampled_from(["telegram", "slack", "whatsapp", "discord"]))
def test_split_cuts_ordinary_markdown_where_the_greedy_splitter_did(text, limit, platform):
    import importlib

    from core.platforms.split import split_message
    from tests.core.platforms import old_split

    render = importlib.import_module(f"core.platforms.format_{platform}").render_block
    new = [(p.markdown, p.rendered) for p in split_message(text, limit, render)]
    assert new == [(p.markdown, p.rendered) for p in old_split.split_message(text, limit, render)]
