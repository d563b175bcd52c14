"""Applying the rules: text, plain data, and the per-commit Redactor that counts secrets.

Each rule runs over the text once, in order (:data:`RULES`); a match its check accepts is
replaced by ``[REDACTED:<rule-id>]``. The scan is linear: overlapping candidates are tried, but
none from inside a secret already judged.

Two things keep the many short strings of a commit cheap (a run's decisions.jsonl and
metrics.jsonl are thousands of lines of the same keys and words, its state.json the same keys
at every commit), and neither changes what is redacted:

- :func:`may_hold_secret`, every rule's own pre-test (its needles, or its anchor) taken
  together: a text none of them lets through is one no rule can touch, so it is returned
  before the rules run one by one;
- the strings the rules found nothing in (and the dict keys no key/value rule reads) are
  remembered, up to :data:`KNOWN_CLEAN` of them of up to :data:`KNOWN_LENGTH` characters: the
  rules are a pure function of the text, fixed when this module is imported, so a string
  seen clean is clean the next time. Only what is clean is remembered — never a secret, or
  anything about one — and only by :class:`Redactor` and :func:`redact_data`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from clm_policy.base.lazypattern import LazyPattern
from clm_policy.base.record import Record
from clm_policy.memory.redact.assignments import ASSIGNMENT_RULES, is_token_header
from clm_policy.memory.redact.judge import looks_credential, looks_secret
from clm_policy.memory.redact.shell import SHELL_RULES
from clm_policy.memory.redact.syntax import AWS_KEY_NAME, AWS_SECRET, KEY_NAME, Rule
from clm_policy.memory.redact.tokens import TOKEN_RULES
from clm_policy.memory.redact.tools import PROSE_RULES, TOOL_RULES

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing or dataclasses at run time: the hooks import the redactor
    import re
    from typing import Any

RULES: tuple[Rule, ...] = (
    *TOKEN_RULES,
    *TOOL_RULES,
    *ASSIGNMENT_RULES,
    *SHELL_RULES,
    *PROSE_RULES,
)
"""Every rule, in the order they run: private keys first (their body must not be cut up by the
token rules), specific tokens before the key/value rules that would also match them; a tool's
password places (:mod:`.tools`) before the generic rule, which would take a random value there
and stop a typed one at its ``&``; what a person types on a shell's command line
(:mod:`.shell`) after the generic rule, which takes a random value under any key first; a
sentence's password last (``pwd=…``, ``password: …`` are the generic rule's when random)."""


class _Tally:
    """What a redaction replaced: occurrences per rule, and each distinct secret once.

    With ``tag``, each marker is preceded by a tag naming its secret (``\ue000<n>\ue001``,
    characters from Unicode's private use area that no rule matches), so that whoever cuts
    the text later can tell which secrets are still represented in what is kept
    (:meth:`Redactor.settle`)."""

    def __init__(self, tag: bool = False) -> None:
        self.tag = tag
        self.counts: dict[str, int] = {}
        self.total = 0  # markers made: sum(counts.values())
        self.secrets: dict[str, tuple[str, int]] = {}  # secret -> (rule, number)
        self.numbered: list[str] = []  # number -> secret

    def marker(self, rule_id: str, secret: str) -> str:
        self.counts[rule_id] = self.counts.get(rule_id, 0) + 1
        self.total += 1
        if secret not in self.secrets:
            self.secrets[secret] = (rule_id, len(self.numbered))
            self.numbered.append(secret)
        number = self.secrets[secret][1]
        marker = f"[REDACTED:{rule_id}]"
        return f"{_TAG_OPEN}{number}{_TAG_CLOSE}{marker}" if self.tag else marker


_TAG_OPEN, _TAG_CLOSE = "\ue000", "\ue001"
_TAG = LazyPattern("\ue000([0-9]*)\ue001?")  # a whole tag, or what a cut left of one


def untag(text: str) -> str:
    """``text`` without the tags a tagging :class:`Redactor` put before its markers."""
    return _TAG.sub("", text) if _TAG_OPEN in text else text


def _apply(rule: Rule, text: str, lowered: str, tally: _Tally) -> str:
    """``text`` with ``rule``'s secrets replaced (``text`` itself if it has none)."""
    if rule.needles and not any(needle in text for needle in rule.needles):
        return text
    pieces: list[str] = []
    done = pos = 0  # text[:done] is in pieces; the next match starts at pos or later
    # the compiled patterns, looked up once (the pattern only once the anchor has let a
    # candidate through: compiled lazily)
    anchor = None if rule.anchor is None else rule.anchor.compiled
    pattern = rule.pattern if anchor is None else None
    start_of = rule.start
    cased = rule.cased
    while True:
        if anchor is None:
            m = pattern.search(text, pos) if pattern is not None else None
        elif (found := anchor.search(text if cased else lowered, pos)) is None:
            break
        else:
            at = found.start()
            if start_of is not None:
                at = max(pos, start_of(text, at))
            if pattern is None:
                pattern = rule.pattern
            if (m := pattern.match(text, at)) is None:
                pos = found.start() + 1
                continue
        if m is None:
            break
        start, end = m.span("secret")
        if rule.check is None or rule.check(m):
            pieces += (text[done:start], tally.marker(rule.id, text[start:end]))
            done = end
        # Overlapping candidates are tried (the key of a rejected one may start a real one),
        # but none from inside a secret already judged: that keeps the time linear.
        pos = max(end, m.start() + 1)
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _lower(text: str) -> str:
    # "İ" is the one character whose lower() is two long; anchors need equal offsets.
    return text.replace("\u0130", "i").lower()


def _fewest(needles: Iterable[str]) -> tuple[str, ...]:
    """``needles`` without those that hold another (``sk-ant-`` is in a text only where
    ``sk-`` is): a text holds one of the result exactly when it holds one of ``needles``."""
    unique = set(needles)
    return tuple(sorted(n for n in unique if not any(o != n and o in n for o in unique)))


NEEDLES = _fewest(needle for rule in RULES for needle in rule.needles)
"""Every rule's needles (case-sensitive substrings of the text), fewest that say the same."""
ANCHORS = LazyPattern(
    "|".join(f"(?:{r.anchor.source})" for r in RULES if r.anchor is not None and not r.cased)
)
"""Every rule's anchor in one pattern, searched in the lower-cased text: it matches somewhere
exactly when one of them does (an alternation tries each at every position). An anchor
searched as written is left out: its rule's needles are its pre-test."""
_UNGUARDED = any(not rule.needles and rule.anchor is None for rule in RULES)
"""A rule with neither pre-test would have to be tried on every text (there is none today:
tests/memory/test_redact_prefilter.py holds that)."""


def may_hold_secret(text: str) -> bool:
    """False only when no rule can match ``text``: it holds none of any rule's needles and no
    rule's anchor matches it lower-cased. Those are the tests :func:`_apply` makes before it
    runs a rule's pattern, so a text that fails them all is one every rule leaves as it is."""
    if _UNGUARDED:
        return True
    for needle in NEEDLES:
        if needle in text:
            return True
    return ANCHORS.search(_lower(text)) is not None


def _redact(text: str, counts: _Tally) -> str:
    return _scan(text, counts) if may_hold_secret(text) else text


def _scan(text: str, counts: _Tally) -> str:
    """``text`` with every rule applied in turn (each after its own pre-test)."""
    lowered = ""  # text lower-cased (same length: see below) while text is unchanged
    for rule in RULES:
        # the needles first, here: most rules stop at them, and a call costs more than the test
        for needle in rule.needles:
            if needle in text:
                break
        else:
            if rule.needles:
                continue
        if rule.anchor is not None and not lowered:
            lowered = _lower(text)
        redacted = _apply(rule, text, lowered, counts)
        if redacted is not text:
            text, lowered = redacted, ""
    return text


def _value_rule(key: str, value: str) -> str | None:
    """The rule that a whole string value hits because of its dict key (``{"password": v}``)."""
    if AWS_KEY_NAME.search(key) and AWS_SECRET.fullmatch(value):
        return "aws-secret-access-key"
    if is_token_header(key) and looks_credential(value):  # {"X-Api-Key": "3f9a…"}
        return "auth-header"
    return "generic-secret" if KEY_NAME.search(key) and looks_secret(value) else None


def _plain_key(key: str) -> bool:
    """Whether no value can be a secret because of ``key``: :func:`_value_rule` never reads
    its value (each of its rules needs the key to name a secret first)."""
    return not (AWS_KEY_NAME.search(key) or is_token_header(key) or KEY_NAME.search(key))


KNOWN_CLEAN = 20_000
"""Strings remembered as clean at most (then all are forgotten and remembering starts over)."""
KNOWN_LENGTH = 1_000
"""Characters of a string remembered as clean at most (a longer one is scanned each time)."""
_CLEAN: set[str] = set()  # strings the rules found nothing in
_PLAIN_KEYS: set[str] = set()  # dict keys no key/value rule reads


def _remember(known: set[str], text: str) -> None:
    if type(text) is str and len(text) <= KNOWN_LENGTH:  # a subclass could hash otherwise
        if len(known) >= KNOWN_CLEAN:
            known.clear()
        known.add(text)


def _text(text: str, counts: _Tally) -> str:
    """``text`` redacted (``text`` itself when it holds no secret), remembered when clean."""
    if type(text) is str and text in _CLEAN:
        return text
    before = counts.total
    redacted = _redact(text, counts)
    if counts.total == before:
        _remember(_CLEAN, text)
        return text
    return redacted


def _walk(value: Any, counts: _Tally) -> Any:
    # the exact types plain data is made of first (an ABC's isinstance is slow), then the
    # same tests for anything else
    kind = type(value)
    if kind is str or isinstance(value, str):
        return _text(value, counts)
    if kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is list or isinstance(value, list):
        return [_walk(item, counts) for item in value]
    if kind is dict or isinstance(value, Mapping):
        return _walk_mapping(value, counts)
    if isinstance(value, tuple):
        return tuple(_walk(item, counts) for item in value)
    if isinstance(value, int | float):
        return value
    raise TypeError(f"redact_data walks dict, list, tuple, str, numbers and None, not {value!r}")


def _walk_mapping(value: Mapping[Any, Any], counts: _Tally) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, item in value.items():
        new_item = _walk(item, counts)
        # A string no text rule touched may still be a secret because of its key.
        if (
            isinstance(key, str)
            and isinstance(item, str)
            and new_item is item
            and not (type(key) is str and key in _PLAIN_KEYS)
        ):
            if _plain_key(key):
                _remember(_PLAIN_KEYS, key)
            elif (rule := _value_rule(key, item)) is not None:
                new_item = counts.marker(rule, item)
        out[_walk(key, counts)] = new_item
    return out


class Redaction(Record):
    """Redacted text and how many secrets each rule replaced (rules that found none are absent)."""

    text: str
    counts: Mapping[str, int]
    HASHABLE = False  # equal by value, and mutable

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __repr__(self) -> str:
        return f"Redaction(text={self.text!r}, counts={dict(self.counts)!r})"


def redact_text(text: str) -> Redaction:
    """Replace every secret in ``text`` by ``[REDACTED:<rule-id>]``."""
    tally = _Tally()
    return Redaction(_redact(text, tally), MappingProxyType(tally.counts))


def redact_data(value: Any) -> tuple[Any, dict[str, int]]:
    """A redacted copy of plain data, and the counts.

    Strings are redacted wherever they are, dict keys included; a string under a
    secret-sounding key (``{"password": "..."}``) is redacted whole when it looks random.
    Dicts, lists and tuples are copied (any mapping becomes a ``dict``); ``None``, bools and
    numbers are kept; anything else is a :class:`TypeError`, so nothing passes unread. Two keys
    that redact to the same text merge, the later value winning.
    """
    tally = _Tally()
    return _walk(value, tally), tally.counts


class Redactor:
    """Redacts many texts and values of one commit, counting each distinct secret once.

    With ``tag=True`` it is the first pass over raw input that a caller will cut or fold (see
    :class:`~clm_policy.memory.change.Change`): its markers carry tags, and :meth:`settle`
    removes them from what is finally kept, noting which secrets that still holds — so a
    secret that only sat in a message nobody keeps is not counted.
    """

    def __init__(self, *, tag: bool = False) -> None:
        self._tally = _Tally(tag)
        self._kept: dict[str, str] = {}

    def text(self, text: str) -> str:
        """``text`` redacted; its secrets are noted."""
        return _text(text, self._tally)

    def data(self, value: Any) -> Any:
        """A redacted copy of ``value`` (see :func:`redact_data`); its secrets are noted."""
        return _walk(value, self._tally)

    def settle(self, value: Any) -> Any:
        """``value`` (a text or plain data) without this redactor's tags, noting the secrets
        whose tag it still holds as kept."""
        kind = type(value)  # the exact types of plain data first, as _walk does
        if kind is str or isinstance(value, str):
            return _TAG.sub(self._keep, value) if _TAG_OPEN in value else value
        if kind is int or kind is float or kind is bool or value is None:
            return value
        if kind is list:
            return [self.settle(v) for v in value]
        if kind is dict or isinstance(value, Mapping):
            return {self.settle(k): self.settle(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.settle(v) for v in value)
        return value

    def _keep(self, match: re.Match[str]) -> str:
        if match[0].endswith(_TAG_CLOSE) and match[1] and int(match[1]) < len(self._tally.numbered):
            secret = self._tally.numbered[int(match[1])]
            self._kept[secret] = self._tally.secrets[secret][0]
        return ""

    @property
    def secrets(self) -> Mapping[str, str]:
        """Each distinct secret replaced (kept, for a tagging redactor), with its rule."""
        if self._tally.tag:
            return MappingProxyType(dict(self._kept))
        return MappingProxyType({k: rule for k, (rule, _) in self._tally.secrets.items()})

    @property
    def counts(self) -> Mapping[str, int]:
        """Distinct secrets replaced so far, per rule id (a snapshot)."""
        return MappingProxyType(dict(Counter(self.secrets.values())))

    @property
    def total(self) -> int:
        return len(self.secrets)
