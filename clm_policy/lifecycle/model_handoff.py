"""A handoff written by a model when the agent wrote none (an automatic compaction at the hard
limit, an agent that did not comply, a crash) and a model is configured
(``CLM_POLICY_SUMMARIZER=openai``): the same handoff the agent is asked for, from clm-policy's
record and the conversation (:func:`prompt`), kept whole and labelled as a model's reading
(source ``model``). Any failure leaves the handoff as it would be without a model, and the
commit says why: the handoff is never lost for want of a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clm_policy.lifecycle.request import what_to_write

if TYPE_CHECKING:
    from collections.abc import Mapping

    from clm_policy.lifecycle.compose import Words
    from clm_policy.transcripts.reading import TranscriptReading

WORDS_CHARS = 6_000
"""The length the model is asked to keep to: the seed holds its handoff whole beside the record
within a hook's 9,400 (a longer one is cut at a heading, the rest kept in the manifest)."""
SYSTEM_PROMPT = (
    "You write the handoff of an AI coding agent's working session for the next session, "
    "which starts with a fresh context and sees only your handoff and clm-policy's record of "
    "the session. You are given that record (facts read from the transcript) and the "
    "conversation. You are not the agent: write what they show, keep file paths, commands, "
    "results and names exactly as written, and say 'unknown' rather than guess. The next "
    "session sees the record beside your handoff: do not copy its lists, say what they mean "
    f"for the work. Keep the handoff under {WORDS_CHARS:,} characters; a longer one is cut at a "
    "heading. Answer with the handoff only."
)
MAX_PROMPT_CHARS = 100_000
"""The conversation sent is cut (the oldest items after the first request first) to about
this many characters, the record included."""
REQUEST_CHARS = 4_000
"""Each of the person's requests, the agent's messages and its compaction summaries is cut to
this many characters (its head and tail), SAID_CHARS, SUMMARY_CHARS."""
SAID_CHARS = 1_500
SUMMARY_LABEL = "**The agent's summary of its context when it compacted:**"
SUMMARY_CHARS = 12_000
RECORD_CHARS = 9_400
"""The record shown to the model is as long as the seed a hook gives (Claude Code's
SessionStart takes 10,000 characters)."""
HOOK_TIMEOUT = 40.0
"""The most a hook waits for the model (the agents stop a Stop or PreCompact hook after 60 s;
the handoff is committed in the time left)."""
TRAILER = "Clm-Summarizer"


def prompt(reading: TranscriptReading, record: str) -> str:
    """The user's message to the model: what to write, ``record``, then the conversation,
    oldest first (the first request always, then as many of the newest items as fit)."""
    head = (
        f"Write {what_to_write()}\n\n# clm-policy's record of the session\n\n{record.strip()}\n\n"
        "# The conversation, oldest first\n\n"
    )
    items = _timeline(reading)
    room = MAX_PROMPT_CHARS - len(head)
    first = items[:1] if items and items[0][1].startswith("**The person:**") else []
    room -= sum(len(text) + 2 for _order, text in first)
    kept: list[str] = []
    for _order, text in reversed(items[len(first) :]):
        room -= len(text) + 2
        if room < 0:
            break
        kept.append(text)
    left = len(items) - len(first) - len(kept)
    gap = [f"({left} earlier items left out)"] if left else []
    body = [text for _order, text in first] + gap + kept[::-1]
    return head + ("\n\n".join(body) or "(none)") + "\n"


def _timeline(reading: TranscriptReading) -> list[tuple[int, str]]:
    work = reading.work
    if work is None:
        return [(0, f"**The person:** {reading.goal}")] if reading.goal else []
    items = [
        (order, f"**The person:** {_clip(request.text, REQUEST_CHARS)}")
        for order, request in zip(work.request_orders, work.requests, strict=False)
    ]
    items += [(order, f"**The agent:** {_clip(text, SAID_CHARS)}") for order, text in work.said]
    items += [
        (order, f"{SUMMARY_LABEL} {_clip(text, SUMMARY_CHARS)}")
        for order, text, _ in work.summaries
    ]
    items += [(order, f"- {line}") for order, line in work.tools]
    return sorted(items, key=lambda item: item[0])


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half].rstrip()}\n[… {len(text) - 2 * half} characters left out]\n" + (
        text[-half:].lstrip()
    )


def with_model(
    reading: TranscriptReading,
    words: Words | None,
    env: Mapping[str, str],
    *,
    strict: bool = False,
    timeout: float | None = None,
) -> tuple[Words | None, dict[str, str]]:
    """The handoff's words and the commit's trailers: ``words`` when they are the agent's own
    handoff or no model is configured; else the handoff the model writes (what it is sent
    redacted first), or ``words`` when it fails, ``Clm-Summarizer`` saying which. A
    configuration problem raises when ``strict`` (the command line), else falls back (a hook
    never loses the handoff). ``timeout`` caps the configured one."""
    from clm_policy.base.errors import InputError
    from clm_policy.lifecycle.compaction import DETERMINISTIC_NAME
    from clm_policy.lifecycle.compose import MODEL, SUMMARY, Words
    from clm_policy.lifecycle.summarizers import (
        ENV_KIND,
        OpenAISummarizer,
        SummarizerError,
        summarizer_from_env,
    )

    if (words is not None and words.source != SUMMARY) or not env.get(ENV_KIND):
        return words, {}
    try:
        model = summarizer_from_env(env)
    except InputError:
        if strict:
            raise
        return words, {TRAILER: f"{DETERMINISTIC_NAME} (fallback: configuration)"}
    if not isinstance(model, OpenAISummarizer):
        return words, {}  # the deterministic summarizer writes no handoff: the record is it
    if timeout is not None and model.config.timeout > timeout:
        model = OpenAISummarizer(model.config.replace(timeout=timeout))
    from clm_policy.base.progress import Notice
    from clm_policy.memory.redact import redact_text

    # a person at a terminal is told what the command waits for (the model may take its
    # whole timeout), and that Ctrl-C stops it with nothing committed
    waiting = Notice(
        f"clm-policy: {model.name} is writing the handoff the agent did not (at most "
        f"{model.config.timeout:g} s; Ctrl-C stops, nothing committed)"
    )
    try:
        sent = redact_text(prompt(reading, record_of(reading, words))).text
        waiting.say()
        text = model.answer(SYSTEM_PROMPT, sent)
    except SummarizerError as exc:
        fallback = f"{DETERMINISTIC_NAME} (fallback: {exc.reason}; tried {model.name})"
        return words, {TRAILER: fallback}
    finally:
        waiting.close()
    return Words(MODEL, text.strip()), {TRAILER: model.name}


def record_of(reading: TranscriptReading, words: Words | None = None) -> str:
    """The record the model is shown: the seed of ``reading`` without a model."""
    from datetime import UTC, datetime

    from clm_policy.lifecycle.compose import compose
    from clm_policy.lifecycle.handoff import preview

    return preview(compose(reading, words), now=datetime.now(UTC), budget=RECORD_CHARS)[1]
