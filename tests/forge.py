"""What a forge makes of Markdown, for the tests of the Markdown-safe printer and of the
pull-request body: markdown-it-py's GFM-like parser (CommonMark with tables, strikethrough and
autolinks) and GitHub's mention and issue-reference patterns.

The patterns are written from GitHub's documented behaviour: a mention is ``@`` and a user or
team name (letters, digits, ``-``) after the start of the text or any character that is not a
letter, digit or ``_``; an issue reference is ``#N``, ``owner/repo#N`` or ``GH-N``. Mentions
and references are not read inside code spans, code blocks or links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9][A-Za-z0-9-]*")
REFERENCE = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#[0-9]+|(?<![A-Za-z0-9_])GH-[0-9]+",
    re.IGNORECASE,
)
BLOCKS = frozenset(
    {
        "heading_open",
        "heading_close",
        "paragraph_open",
        "paragraph_close",
        "bullet_list_open",
        "bullet_list_close",
        "list_item_open",
        "list_item_close",
        "inline",
    }
)
"""The block tokens a handoff's Markdown is made of: headings, paragraphs, bullet lists."""
INLINES = frozenset({"text", "softbreak", "code_inline", "strong_open", "strong_close"})
"""The inline tokens it is made of (its own bold field names and code spans, and text)."""
PARSER = MarkdownIt("gfm-like")


def parse(markdown: str) -> list[Token]:
    return PARSER.parse(markdown)


def text_of(inline: Token) -> str:
    """What an inline token shows, as text: its text, code spans and line breaks."""
    shown = []
    for child in inline.children or []:
        if child.type in ("text", "code_inline"):
            shown.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            shown.append("\n")
    return "".join(shown)


def notifying(tokens: list[Token]) -> list[str]:
    """Every mention and issue reference a forge would read in the rendered text (outside code
    spans and links), with the word joiners the printer puts in left where they are."""
    found: list[str] = []
    for token in tokens:
        in_link = False
        for child in token.children or []:
            if child.type == "link_open":
                in_link = True
            elif child.type == "link_close":
                in_link = False
            elif child.type == "text" and not in_link:
                found += MENTION.findall(child.content) + REFERENCE.findall(child.content)
    return found


@dataclass
class Section:
    """A ``##`` heading and what follows it, up to the next heading."""

    heading: str
    tokens: list[Token] = field(default_factory=list)

    def paragraphs(self) -> list[str]:
        """The text of each top-level paragraph (word joiners removed)."""
        return [
            text_of(self.tokens[i + 1]).replace("\u2060", "")
            for i, t in enumerate(self.tokens)
            if t.type == "paragraph_open" and t.level == 0
        ]

    def items(self) -> list[str]:
        """The text of each item of a top-level bullet list (word joiners removed)."""
        found = []
        for i, t in enumerate(self.tokens):
            if t.type == "list_item_open" and t.level == 1:
                parts = []
                for inner in self.tokens[i + 1 :]:
                    if inner.type == "list_item_close" and inner.level == 1:
                        break
                    if inner.type == "inline":
                        parts.append(text_of(inner))
                found.append("\n".join(parts).replace("\u2060", ""))
        return found


def sections(tokens: list[Token]) -> list[Section]:
    """The ``##`` sections of a document, in order (what comes before the first is left out)."""
    found: list[Section] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            found.append(Section(tokens[i + 1].content))
        elif found and token.type not in ("heading_close",) and not _heading_inline(tokens, i):
            found[-1].tokens.append(token)
    return found


def _heading_inline(tokens: list[Token], i: int) -> bool:
    return tokens[i].type == "inline" and i > 0 and tokens[i - 1].type == "heading_open"


def unexpected(tokens: list[Token]) -> set[str]:
    """Token types beyond headings, paragraphs, bullet lists, text, code spans and bold: an
    image, HTML, a comment, a fence, a table, a quote, a rule, emphasis, a link with a text of
    its own... (The parser links bare domains and e-mail addresses, ``auth.md``, which GitHub
    does not: a link that shows its own target is let through.)"""
    found = {t.type for t in tokens} - BLOCKS
    for token in tokens:
        children = token.children or []
        for i, child in enumerate(children):
            if child.type in ("link_open", "link_close") and _shows_its_target(children, i):
                continue
            if child.type not in INLINES:
                found.add(child.type)
    return found


def _shows_its_target(children: list[Token], i: int) -> bool:
    if children[i].type == "link_close":
        return _shows_its_target(children, i - 2) if i >= 2 else False
    href, text = children[i].attrs.get("href"), children[i + 1].content
    return children[i + 2].type == "link_close" and href in (
        text,
        f"http://{text}",
        f"mailto:{text}",
    )
