"""Text handed to a model as a record — an earlier agent's words, a memory topic, a user's
message quoted in a seed — so that it reads as what it is: data about an earlier session, not
an instruction and not a turn of the conversation.

- :func:`quoted` puts every line of the text behind ``> `` (a Markdown block quote): nothing
  in it can close the quote, start a heading of the seed's own, or end the part it stands in.
- :func:`defused` neutralises markup that could pose as another turn or as the harness:
  tags like ``<system>``, ``</system-reminder>``, ``<user>``, ``<assistant>``,
  ``<function_calls>``, ``<command-name>``, chat-template tokens (``<|im_start|>``), and a line
  that starts like a transcript's speaker (``Human:``, ``System:``). The characters stay
  readable: ``<`` becomes U+2039 (a single angle quotation mark) in such a tag, ``|`` in a
  template token becomes U+00A6 (a broken bar), a speaker label gets a ``[quoted]`` mark.
"""

from __future__ import annotations

import re

_TURN_TAG = re.compile(
    r"<(/?)\s*(system[\w-]*|user[\w-]*|assistant[\w-]*|human|developer|tool[\w-]*|"
    r"function[\w-]*|antml[\w:-]*|command-[\w-]+|local-command-[\w-]+|task-notification|"
    r"instructions?|hook[\w-]*|bash-[\w-]+|untrusted[\w-]*)(?=[\s>/])",
    re.I,
)
_TEMPLATE_TOKEN = re.compile(r"<\|([^|<>\n]{1,40})\|>")
_SPEAKER = re.compile(r"^(\s*)(human|assistant|system|user|developer)\s*:", re.I | re.M)


def defused(text: str) -> str:
    """``text`` with the markup that could pose as a turn or as the harness neutralised (the
    module's doc); everything else as written."""
    text = _TURN_TAG.sub(lambda m: f"\u2039{m.group(1)}{m.group(2)}", text)
    text = _TEMPLATE_TOKEN.sub(lambda m: f"\u2039\u00a6{m.group(1)}\u00a6\u203a", text)
    return _SPEAKER.sub(lambda m: f"{m.group(1)}[quoted] {m.group(2)}:", text)


def quoted(text: str) -> str:
    """``text``, defused, as a Markdown block quote: every line behind ``> `` (an empty line
    as ``>``), trailing blanks removed."""
    lines = defused(text).strip("\n").splitlines() or [""]
    return "\n".join(f"> {line}".rstrip() for line in lines)
