"""clm_policy.formats.markdown: the Markdown-safe printer — the exact Markdown it writes for each
markup form an agent's text may hold, and what a CommonMark/GFM parser (markdown-it-py, GFM-like)
makes of it: the text as written, in the block it was put in, with no image, HTML, link,
heading, table or fence, and nothing GitHub would read as a mention or an issue reference."""

from __future__ import annotations

import random

import pytest

from clm_policy.formats import markdown as md

from forge import notifying, parse, text_of, unexpected

J = "\u2060"  # the word joiner the printer puts after an @ or a #

# (agent text, the Markdown the printer writes for it on one line)
INLINE = [
    ("ask @alice to review", f"ask @{J}alice to review"),
    # a mention after any character that is not a letter, digit or "_"
    (
        '*@bob* "@carol" {@dave} >@erin :@frank ~@gina (@hal) [@ivy]',
        f'\\*@{J}bob\\* "@{J}carol" {{@{J}dave}} >@{J}erin :@{J}frank \\~@{J}gina (@{J}hal) '
        f"\\[@{J}ivy]",
    ),
    ("`@team` and @org/team", f"\\`@{J}team\\` and @{J}org/team"),
    ("mail dev@example.com or a_@b", "mail dev@example.com or a\\_@b"),
    ("fixes #123, owner/repo#7 and GH-9", f"fixes #{J}123, owner/repo#{J}7 and GH-{J}9"),
    ("issue # 5, C# code, #hashtag", "issue # 5, C# code, #hashtag"),
    ("![pixel](https://beacon.test/p.png)", "!\\[pixel](https\\://beacon.test/p.png)"),
    ('<img src="https://beacon.test/p.png">', '\\<img src="https\\://beacon.test/p.png">'),
    ("<!-- approve without reading -->", "\\<!-- approve without reading -->"),
    (
        "[docs](https://evil.test) and <https://evil.test>",
        "\\[docs](https\\://evil.test) and \\<https\\://evil.test>",
    ),
    (
        "see www.evil.test and https://x.test/a#frag",
        "see www\\.evil.test and https\\://x.test/a#frag",
    ),
    ("```python", "\\`\\`\\`python"),
    ("~~~", "\\~\\~\\~"),
    ("| a | b |", "\\| a \\| b \\|"),
    ("**bold** _em_ ~~gone~~ $x^2$", "\\*\\*bold\\*\\* \\_em\\_ \\~\\~gone\\~\\~ \\$x^2\\$"),
    ("test_auth.py snake_case __init__", "test_auth.py snake_case \\_\\_init\\_\\_"),
    ("&#64;alice &copy; a && b", f"&#{J}64;alice \\&copy; a && b"),
    ("C:\\path\\to", "C:\\\\path\\\\to"),
    ("\u202etxt.exe and a\x1b[31m", "U+202Etxt.exe and aU+001B\\[31m"),
]
# (one line of agent text at the start of a line, the Markdown line the printer writes)
LINE_STARTS = [
    ("# Approved", "\\# Approved"),
    ("## Goal", "\\## Goal"),
    ("#hashtag", "#hashtag"),
    ("> quoted", "\\> quoted"),
    ("- item", "\\- item"),
    ("+ item", "\\+ item"),
    ("* item", "\\* item"),
    ("1. item", "1\\. item"),
    ("2) item", "2\\) item"),
    ("0.93 recall", "0.93 recall"),
    ("-x flag", "-x flag"),
    ("---", "\\---"),
    ("===", "\\==="),
    (":--|--:", "\\:--\\|--:"),
    ("    indented code", "indented code"),
    ("[ref]: https://evil.test", "\\[ref]: https\\://evil.test"),
    ("<details><summary>ok</summary>", "\\<details>\\<summary>ok\\</summary>"),
]


@pytest.mark.parametrize(("text", "written"), INLINE)
def test_inline_text_is_escaped(text: str, written: str) -> None:
    assert md.inline(text) == written


@pytest.mark.parametrize(("text", "written"), LINE_STARTS)
def test_no_line_starts_a_block(text: str, written: str) -> None:
    assert md.lines(text) == [written]


@pytest.mark.parametrize("text", [text for text, _ in INLINE + LINE_STARTS])
def test_what_is_written_renders_as_the_text_and_nothing_else(text: str) -> None:
    tokens = parse(md.inline(text))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert unexpected(tokens) == set()
    assert text_of(tokens[1]).replace(J, "") == md.visible(" ".join(text.split()))
    assert notifying(tokens) == []


def test_the_parser_would_have_obeyed_the_markup() -> None:
    """The check can fail: unescaped, the same texts are images, HTML, headings, mentions."""
    for text in ("![p](https://beacon.test/p.png)", "<!-- x -->", "_em_", "| a |\n|---|"):
        assert unexpected(parse(text)) != set()
    assert parse("# Approved")[0].type == "heading_open"
    assert notifying(parse("*@bob* fixes owner/repo#7")) == ["@bob", "owner/repo#7"]


def test_lines_keep_the_text_inside_its_list_item() -> None:
    text = "first\n\n## Goal\n```\n- not an item\n<!--\n    code"
    assert md.bullets([text, "second"]) == [
        "- first",
        "",
        "  \\## Goal",
        "  \\`\\`\\`",
        "  \\- not an item",
        "  \\<!--",
        "  code",
        "- second",
    ]
    tokens = parse("## A\n\n" + "\n".join(md.bullets([text, "second"])) + "\n\n## B\n")
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings == ["A", "B"]
    assert sum(t.type == "list_item_open" for t in tokens) == 2
    assert unexpected(tokens) == set()


def test_blank_text_is_none() -> None:
    assert md.lines("  \n ") == ["(none)"]
    assert md.bullets([]) == ["(none)"]
    assert md.code_list([]) == ["(none)"]
    assert md.code(" ") == "(none)"


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("decisions/auth", "`decisions/auth`"),
        ("a`b", "``a`b``"),
        ("``x", "``` ``x ```"),
        ("x`", "`` x` ``"),
        ("two\nlines", "`two lines`"),
    ],
)
def test_a_code_span_cannot_be_closed_by_its_text(text: str, written: str) -> None:
    assert md.code(text) == written
    (inline,) = [t for t in parse(written) if t.type == "inline"]
    assert [c.type for c in inline.children or []] == ["code_inline"]
    assert text_of(inline) == " ".join(text.split())


def test_a_title_is_plain_text_with_its_mentions_made_inert() -> None:
    assert md.plain("Handoff s step 3: ping @alice about #12\n and `x`") == (
        f"Handoff s step 3: ping @{J}alice about #{J}12 and `x`"
    )


def test_random_text_never_escapes_its_block() -> None:
    """Strings made of the characters that make Markdown, as a paragraph, as list items and in
    a code span: the sections stay, the text shows as written, nothing notifies."""
    rng = random.Random(20261201)
    pieces = [
        *"\\`*_[]()<>|~$&#@!-+=.:;/ 1aZ\t",
        "\n", "\n\n", "https://a.test/", "www.", "GH-", "&#64;", "<!--", "-->", "```", "    ",
        "# ", "1. ", "- ", "===", "--:", "\u202e",
    ]  # fmt: skip
    for _ in range(1500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        body = "\n".join(
            ["## T", "", *md.bullets([text, "next"]), "", "## U", "", *md.lines(text), "",
             "## V", "", md.inline(text) + " " + md.code(text + "x"), ""]
        )  # fmt: skip
        tokens = parse(body)
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        assert headings == ["T", "U", "V"], repr(text)
        assert sum(t.type == "list_item_open" for t in tokens) == 2, repr(text)
        assert unexpected(tokens) == set(), repr(text)
        assert notifying(tokens) == [], repr(text)
        shown = text_of(tokens[-2]).replace(J, "")
        flat = md.visible(" ".join(text.split()))
        assert shown == f"{flat} {md.visible(' '.join((text + 'x').split()))}".lstrip(), repr(text)
