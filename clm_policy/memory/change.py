"""What one commit writes, and the one redactor everything in it passes.

A :class:`Change` collects the files and appends of one commit. The write path
(:meth:`~clm_policy.memory.git.write.MemoryRepo.commit`) turns it into bytes: every text, every
JSON value (keys included), every path, the commit's subject, body and trailers go through the
change's :class:`~clm_policy.memory.redact.Redactor`, and the number of secrets it replaced
becomes the ``Clm-Redactions`` trailer. No caller redacts on its own.

A caller that cuts or reflows its input (a summary line of 240 characters, whitespace folded)
calls :meth:`Change.clean` on the raw input first, with the same redactor: a private key whose
lines are folded into one, or a token cut in half, is no longer recognisable afterwards.

Identifiers that must stay as written — paths, branch names, the session, parent session and
memory key trailers — are never rewritten: one that looks like a secret is refused
(:class:`SecretIdentifierError`) before anything is written.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

from clm_policy.base.errors import InputError
from clm_policy.base.record import Record
from clm_policy.memory.redact import Redactor, redact_text
from clm_policy.memory.trailers import CommitMessage

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

Content = str | bytes
IDENTIFIER_TRAILERS = (
    "Clm-Session",
    "Clm-Parent-Session",
    "Clm-Key",
    "Clm-Manifest",
    "Clm-Handoff",
    "Clm-Seed",
)
REDACTIONS_TRAILER = "Clm-Redactions"


class SecretIdentifierError(InputError):
    """An identifier that is committed as written (a session id, a path) looks like a secret."""


class JsonDoc(Record):
    """A JSON file: ``data`` is redacted as data (so ``{"password": ...}`` is caught by its key),
    then ``validate`` (if given) checks the redacted value, then it is written indented."""

    data: Any
    validate: Callable[[Any], object] | None = None
    HASHABLE = False


class JsonLines(Record):
    """Records appended to a ``.jsonl`` file, one JSON object per line, each redacted as data."""

    records: tuple[Any, ...]
    HASHABLE = False


class Prepared(Record):
    """A change ready for git: redacted bytes, the rendered message, what was replaced."""

    files: dict[str, bytes]
    appends: dict[str, bytes]
    message: str
    redactions: int
    HASHABLE = False


def check_identifier(kind: str, value: str) -> str:
    """``value`` if no secret rule matches it; otherwise :class:`SecretIdentifierError`."""
    found = redact_text(value).counts
    if found:
        raise SecretIdentifierError(
            f"refusing to commit a {kind} that looks like a secret ({', '.join(found)}); "
            "choose another name"
        )
    return value


class Change:
    """The files and appends of one commit, and the redactor that counts its secrets.

    The redactor has two passes: :meth:`clean` on raw input a caller will cut, and the pass
    over everything the commit holds when it is prepared. ``Clm-Redactions`` counts the
    distinct secrets replaced in what is committed: one that sat only in a message the
    commit does not keep is not counted."""

    def __init__(
        self,
        files: Mapping[str, Content | JsonDoc] | None = None,
        appends: Mapping[str, Content | JsonLines] | None = None,
    ) -> None:
        self._first = Redactor(tag=True)  # raw input, before it is cut (clean)
        self._last = Redactor()  # everything that reaches git (prepare)
        self.files: dict[str, Content | JsonDoc] = dict(files or {})
        self.appends: dict[str, Content | JsonLines] = dict(appends or {})

    def clean(self, value: T) -> T:
        """``value`` with its secrets replaced, before anything cuts or reflows it: a string,
        plain data, a state (:class:`~clm_policy.models.state.SessionState`) or another of
        the documents' plain classes with ``from_dict`` (each rebuilt from its redacted JSON
        data). Its markers carry tags the write path removes (see :class:`Change`)."""
        if isinstance(value, str):
            return self._first.text(value)  # type: ignore[return-value]
        from clm_policy.models.state import SessionState, read_state

        if isinstance(value, SessionState):
            # A message without text (content and name empty: one a compaction does not read)
            # has nothing to redact; the others are walked as the whole state would walk them.
            data = value.as_dict()
            messages = data.pop("messages")
            data = self._first.data(data)
            data["messages"] = [
                m if not m["content"] and m["name"] is None else self._first.data(m)
                for m in messages
            ]
            # strings stay strings and a session id is checked before (check_identifiers):
            # the redacted state is as valid as the raw one
            state = read_state(data)
            if state is None:
                raise InputError("the state is not valid once its secrets are replaced")
            return state  # type: ignore[return-value]
        as_dict = getattr(value, "as_dict", None)
        if as_dict is not None and hasattr(value, "from_dict"):
            cleaned = self._first.data(as_dict())
            return type(value).from_dict(cleaned)  # type: ignore[no-any-return]
        return self._first.data(value)  # type: ignore[no-any-return]

    @property
    def secrets(self) -> dict[str, str]:
        """Each distinct secret replaced in what the commit holds, with its rule."""
        return {**self._first.secrets, **self._last.secrets}

    @property
    def redactions(self) -> int:
        """Distinct secrets replaced in what the commit holds (known once prepared)."""
        return len(self.secrets)

    @property
    def counts(self) -> dict[str, int]:
        """:attr:`redactions` per rule id."""
        return dict(Counter(self.secrets.values()))

    def _text(self, text: str) -> str:
        return self._last.text(self._first.settle(text))

    def _data(self, value: Any) -> Any:
        return self._last.data(self._first.settle(value))

    def prepare(self, message: CommitMessage, paths: Callable[[str], str]) -> Prepared:
        """Everything redacted and rendered; ``paths`` checks each path (raising to refuse)."""
        files, appends = (
            {check_identifier("path", paths(p)): self._bytes(c) for p, c in contents.items()}
            for contents in (self.files, self.appends)
        )
        text = self._message(message)
        return Prepared(files, appends, text, self.redactions)

    def _bytes(self, content: Content | JsonDoc | JsonLines) -> bytes:
        if isinstance(content, JsonDoc):
            data = self._data(content.data)
            if content.validate is not None:
                content.validate(data)
            text = json.dumps(data, indent=2, allow_nan=False) + "\n"
        elif isinstance(content, JsonLines):
            records = (self._data(r) for r in content.records)
            text = "".join(json.dumps(r, sort_keys=True, allow_nan=False) + "\n" for r in records)
        else:
            if isinstance(content, bytes):
                try:
                    content = content.decode("utf-8")
                except UnicodeDecodeError:
                    raise InputError("refusing to commit bytes that are not UTF-8 text") from None
            text = self._text(content)
        # a lone surrogate (valid in JSON "\ud800", not in UTF-8) must not stop a commit
        return text.encode("utf-8", "replace")

    def _message(self, message: CommitMessage) -> str:
        trailers = {
            key: check_identifier(key, str(value))
            if key in IDENTIFIER_TRAILERS
            else self._text(str(value))
            for key, value in message.trailers.items()
            if key != REDACTIONS_TRAILER
        }
        subject = self._text(message.subject)
        body = self._text(message.body)
        trailers[REDACTIONS_TRAILER] = str(self.redactions)
        return CommitMessage(subject, body, trailers).render()
