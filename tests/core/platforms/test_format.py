from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from core.platforms.format_slack import to_mrkdwn
from core.platforms.format_telegram import to_telegram_html
from core.platforms.split import split_message

TELEGRAM_TAGS = {"b", "i", "s", "code", "pre", "a", "blockquote"}


class TagChecker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag not in TELEGRAM_TAGS:
            self.problems.append(f"tag {tag}")
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.problems.append(f"unbalanced {tag}")

    def handle_data(self, data):
        self.text.append(data)


def check_html(markup):
    checker = TagChecker()
    checker.feed(markup)
    checker.close()
    return checker


def test_telegram_html_covers_common_markdown():
    md = ("# Plan\nUse **bold**, *italic*, _under_, ~~old~~ and `a<b>` here & "
          "[docs](https://x.dev/a_b?x=1&y=2).\n- one\n- **two**\n\n> quoted\n\n"
          "```python\nif a < b:\n    pass\n```")
    assert to_telegram_html(md) == (
        "<b>Plan</b>\nUse <b>bold</b>, <i>italic</i>, <i>under</i>, <s>old</s> and "
        "<code>a&lt;b&gt;</code> here &amp; "
        '<a href="https://x.dev/a_b?x=1&amp;y=2">docs</a>.\n• one\n• <b>two</b>\n\n'
        "<blockquote>quoted</blockquote>\n\n"
        '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>'
    )


def test_snake_case_and_arithmetic_are_not_emphasis():
    assert to_telegram_html("call snake_case_name with 2 * 3 * 4") == (
        "call snake_case_name with 2 * 3 * 4")
    assert to_mrkdwn("call snake_case_name with 2 * 3 * 4") == (
        "call snake_case_name with 2 * 3 * 4")


def test_slack_mrkdwn_covers_common_markdown():
    md = "## Done\n**bold** and *it* ~~gone~~ <tag> & [site](https://x.dev|y) <@U42>"
    assert to_mrkdwn(md) == (
        "*Done*\n*bold* and _it_ ~gone~ &lt;tag&gt; &amp; <https://x.dev%7Cy|site> <@U42>")
    assert to_mrkdwn("[site](https://x.dev)") == "<https://x.dev|site>"
    assert to_mrkdwn("```\nx < y\n```") == "```\nx &lt; y\n```"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([*list("ab *_~`[]()#>-\n<&"), "http://x.y", "**", "```"]),
                max_size=60).map("".join))
def test_telegram_html_is_always_balanced_and_keeps_the_words(text):
    checker = check_html(to_telegram_html(text))
    assert checker.problems == []
    assert checker.stack == []
    words = [w for w in text.replace("\n", " ").split(" ") if w.isalpha()]
    rendered = "".join(checker.text)
    for word in words:
        assert word in rendered


def test_split_keeps_paragraphs_whole_and_within_the_limit():
    paragraphs = [f"p{i} " + "x" * 300 for i in range(10)]
    parts = split_message("\n\n".join(paragraphs), 1000, lambda b: b.text)
    assert [p.markdown.count("p") for p in parts] == [3, 3, 3, 1]
    assert all(len(p.rendered) <= 1000 for p in parts)
    assert "\n\n".join(p.markdown for p in parts) == "\n\n".join(paragraphs)


def test_split_cuts_a_huge_paragraph_on_lines_then_words_then_characters():
    from core.platforms.format_telegram import render_block

    text = "\n".join(["line " + "w" * 50] * 30) + "\n" + "word " * 400 + "\n" + "z" * 5000
    parts = split_message(text, 500, render_block)
    assert all(len(p.rendered) <= 500 and len(p.markdown) <= 500 for p in parts)
    assert "".join(p.markdown for p in parts).replace("\n", "").replace(" ", "") == (
        text.replace("\n", "").replace(" ", ""))


def test_a_split_code_block_is_closed_and_reopened():
    from core.platforms.format_telegram import render_block

    code = "\n".join(f"print({i})" for i in range(200))
    parts = split_message(f"Here:\n\n```python\n{code}\n```", 400, render_block)
    assert len(parts) > 3
    for part in parts[1:]:
        assert part.markdown.startswith("```python\n") and part.markdown.endswith("\n```")
        assert part.rendered.startswith('<pre><code class="language-python">')
        assert check_html(part.rendered).problems == []


def test_limits_count_utf16_units_like_telegram():
    text = "😀" * 3000  # 6,000 UTF-16 units
    parts = split_message(text, 4096, lambda b: b.text)
    assert len(parts) == 2
    assert all(len(p.rendered.encode("utf-16-le")) // 2 <= 4096 for p in parts)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=64, max_value=800))
def test_split_is_deterministic_and_always_fits(text, limit):
    from core.platforms.format_slack import render_block

    first = split_message(text, limit, render_block)
    assert first == split_message(text, limit, render_block)
    for part in first:
        assert len(part.rendered.encode("utf-16-le")) // 2 <= limit
        assert part.markdown.strip()
