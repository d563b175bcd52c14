"""``clm-policy statusline``: one short line for Claude Code's status bar, e.g.::

    ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding

Claude Code runs it on every refresh with a JSON object on standard input. The context is
``current_usage``'s input, cache-creation and cache-read tokens (the sum behind Claude Code's
own ``used_percentage``), shown, like the thresholds, as a share of what Claude Code's "%
context used" counts (:func:`counted_window`). Before the first response: the transcript's
figure (``~``) or ``ctx n/a (no usage yet)``; right after /compact (usage null, or all zeros
in 2.1.x) ``ctx n/a (just compacted)``: an estimate then would leave out the system prompt and
the tools. The window Claude Code reports is kept for the hooks, which never get it.

The verdict is the thresholds', not a full decision (the status line knows nothing of the
session's steps or signals); for the bundled policies the two agree (a test pins it).

A *digest* — names, window and thresholds in tokens — is kept in the policy cache's
directory, keyed by the configuration's path, the flags and environment, the working
directory and the window (or model), holding every file's size and modification time (an
edit is a miss). A hit imports only the lean modules; a miss loads the policy.

A status line never fails visibly: any problem exits 0, leaves one line in
``$XDG_STATE_HOME/clm-policy/statusline.log`` and prints, after the context when known, what is
wrong in a few words — a configuration's or a policy's problem (``clm-policy: policy team.yaml
not found``) — or ``clm-policy: ?`` (input that is not Claude Code's, the program's own error).
"""

from __future__ import annotations

import json
import os

from clm_policy.base.digest import files_fingerprint, sha256_hex
from clm_policy.base.privatefiles import cache_dir, private_dir, read_private, write_private
from clm_policy.base.record import Record, text_or_none
from clm_policy.config.project import ENV, find_config

# Not even `typing` is imported at run time (see clm_policy/__init__.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

FORMAT = "clm-policy-statusline-2"  # part of every digest's key
NEUTRAL = "clm-policy: ?"
DEFAULT_POLICY = "claude-code"
"""The policy when nothing names one: shares of the window, as Claude Code's windows differ
(the ``default`` policy's 250,000 tokens on a 200,000 window would read "compact at 125%")."""
REPLY_RESERVE = 20_000
"""Tokens Claude Code keeps free for the model's reply: its "% context used" counts the window
less these (2.1.332: ``window - min(max output tokens, 20000)``)."""
SEP = " · "
STDIN_LIMIT = 1024 * 1024
LOG_LIMIT = 64 * 1024
LOG_NAME = "statusline.log"

# The command line this module parses without click; tests pin it to the click command's
# options (clm_policy/cli/statusline.py).
OPTIONS = {"--policy": "policy", "-p": "policy", "--profile": "profile"}
HELP = ("-h", "--help")

# Copies of values other modules own, for a hit that must not import them; tests pin each
# equal to its source (clm_policy.config.project, clm_policy.models.enums, clm_policy.policy.cache).
MAX_COUNT = 2**63 - 1
USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class _Problem(Exception):
    """Something about the input that makes the line neutral (logged; never leaves here)."""


class Figures(Record):
    """The context a status-line input gives (tokens None: not known)."""

    tokens: int | None
    window: int | None
    model: str | None
    estimated: bool
    compacted: bool = False


def counted_window(window: int) -> int:
    """The part of ``window`` Claude Code's own "% context used" counts (a window too small to
    spare :data:`REPLY_RESERVE`, whole)."""
    return window - REPLY_RESERVE if window > 2 * REPLY_RESERVE else window


def counted_share(tokens: int, window: int) -> float:
    return 100 * tokens / counted_window(window)


class Digest(Record):
    """What the status line keeps of a policy: names, window, thresholds in tokens."""

    policy: str
    profile: str
    window: int | None
    soft: int | None
    hard: int | None

    def verdict(self, tokens: int) -> str | None:
        """The thresholds' action for ``tokens`` (None without thresholds)."""
        if self.soft is None or self.hard is None:
            return None
        if tokens >= self.hard:
            return "handoff"
        if tokens >= self.soft:
            return "compact"
        return "continue"


# -- the entry points ---------------------------------------------------------------------


def fast_main(argv: list[str], stdin: BinaryIO | None) -> str | None:
    """The line for ``clm-policy statusline ARGV``; None when the arguments ask for help (the
    click command has it)."""
    if any(arg in HELP for arg in argv):
        return None
    try:
        flags = parse_args(argv)
    except _Problem as exc:
        log_problem(str(exc))
        return NEUTRAL
    return status_line(read_stdin(stdin), flags.get("policy"), flags.get("profile"))


def parse_args(argv: list[str]) -> dict[str, str]:
    """``--policy/-p`` and ``--profile`` (``--opt=value`` too); the last one wins, as with
    click."""
    flags: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if eq and name.startswith("--") and name in OPTIONS:
            flags[OPTIONS[name]] = value
        elif arg in OPTIONS:
            if i + 1 == len(argv):
                raise _Problem(f"statusline: {arg} needs a value")
            i += 1
            flags[OPTIONS[arg]] = argv[i]
        else:
            raise _Problem(f"statusline: unexpected argument {arg[:60]!r}")
        i += 1
    return flags


def read_stdin(stdin: BinaryIO | None) -> bytes:
    """At most one byte more than :data:`STDIN_LIMIT` of ``stdin``."""
    if stdin is None:
        return b""
    from clm_policy.base.stdin import read_stdin as read_bounded

    return read_bounded(STDIN_LIMIT, stdin)


def status_line(raw: bytes, policy: str | None = None, profile: str | None = None) -> str:
    """The line for Claude Code's status-line JSON ``raw``; never raises."""
    shown = ""
    try:
        payload = _payload(raw)
        figures = read_figures(payload)
        session = text_or_none(payload.get("session_id"))
        if session is not None:
            record_window(session, payload)
        shown = context_text(figures, figures.window)
        digest, action = thresholds(policy, profile, _start_folder(payload), figures)
        if action is None and figures.tokens is not None:
            action = digest.verdict(figures.tokens)
        if session is not None and handed_off(session):
            action = "handed off"
        return render(figures, digest, action)
    except Exception as exc:  # a status line never fails visibly
        log_problem(_describe(exc))
        said = _footer(exc)
        return f"{shown}{SEP}{said}" if shown else said


# -- the input ------------------------------------------------------------------------------


def _payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > STDIN_LIMIT:
        raise _Problem(f"stdin: more than {STDIN_LIMIT} bytes")
    if not raw.strip():
        raise _Problem("stdin: empty (expected Claude Code's status-line JSON)")
    try:
        data = json.loads(raw)
    except RecursionError:  # (an input problem, not the status line's)
        raise _Problem("stdin: not JSON (nested too deep)") from None
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        where = ""
        if isinstance(exc, json.JSONDecodeError):
            where = f" at line {exc.lineno} col {exc.colno}"
        raise _Problem(f"stdin: not JSON{where}") from None
    if not isinstance(data, dict):
        raise _Problem(f"stdin: expected a JSON object, got {type(data).__name__}")
    return data


def _object(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _count(value: object) -> int | None:
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    return None


def read_figures(payload: dict[str, Any]) -> Figures:
    window_obj = _object(payload, "context_window")
    window = _count(window_obj.get("context_window_size")) or None
    model = text_or_none(_object(payload, "model").get("id"))
    usage = window_obj.get("current_usage")
    if isinstance(usage, dict):
        parts = [_count(usage.get(key)) for key in USAGE_KEYS]
        total = sum(p or 0 for p in parts)
        if total > 0:
            return Figures(min(total, MAX_COUNT), window, model, False)
        if any(p is not None for p in parts):  # all zeros right after /compact (2.1.x)
            return Figures(None, window, model, False, compacted=True)
    share = window_obj.get("used_percentage")
    if (
        window
        and isinstance(share, int | float)
        and not isinstance(share, bool)
        and 0 <= share <= 100
    ):
        return Figures(round(window * share / 100), window, model, False)
    transcript = text_or_none(payload.get("transcript_path"))
    found = _transcript_figure(transcript, window, model) if transcript is not None else None
    return found or Figures(None, window, model, False)


def handed_off(session: str) -> bool:
    """Whether the hooks noted a handoff of this session not applied in place."""
    from clm_policy.agents.sessionfacts import read_facts

    facts = read_facts(session, "hook")
    return bool(facts.get("handoff")) and not facts.get("applied")


def record_window(session: str, payload: dict[str, Any]) -> None:
    """Keep the window Claude Code reports (hooks never get it) among the session's facts."""
    window = _count(_object(payload, "context_window").get("context_window_size"))
    if not window:
        return
    from clm_policy.agents.sessionfacts import update_facts

    model = text_or_none(_object(payload, "model").get("id"))
    update_facts(session, "window", window=window, model=model)


def _transcript_figure(path: str, window: int | None, model: str | None) -> Figures | None:
    """The transcript's context (its window and model where the input names none); None when
    it has none, no figure when Claude Code compacted after its last one."""
    from clm_policy.base.errors import InputError
    from clm_policy.transcripts.claude_code import COMPACTED, COMPACTED_AFTER
    from clm_policy.transcripts.reading import read_context

    try:
        reading = read_context(path, "claude-code")
    except InputError:
        return None  # not written yet (a new session), or not a transcript: no figure
    if reading.context_estimated and (
        COMPACTED in reading.warnings or COMPACTED_AFTER in reading.warnings
    ):
        return Figures(None, window, model, False, compacted=True)
    if reading.context_tokens <= 0 and reading.context_estimated:
        return None
    return Figures(
        reading.context_tokens,
        window or reading.context_window,
        model or reading.model,
        reading.context_estimated,
    )


def _start_folder(payload: dict[str, Any]) -> str:
    for value in (_object(payload, "workspace").get("current_dir"), payload.get("cwd")):
        if isinstance(value, str) and os.path.isabs(value):
            return value
    return os.getcwd()


# -- the thresholds: the digest, or the policy ----------------------------------------------


def thresholds(
    policy: str | None, profile: str | None, start: str, figures: Figures
) -> tuple[Digest, str | None]:
    """The digest, and — on a miss, when the context is known — the policy's action."""
    here = os.getcwd()  # a relative --policy path is relative to it
    config = find_config(start)
    config_stat = _stat(config) if config is not None else None
    directory = cache_dir() if hasattr(os, "geteuid") else None
    key = _key(policy, profile, config, here, figures)
    name = f"statusline-{key}.json"
    if directory is not None and private_dir(directory):
        hit = _read_digest(os.path.join(directory, name), config_stat)
        if hit is not None:
            return hit, None
        writable = True
    else:  # no digests, or a directory someone else could have written: never trusted
        writable = directory is not None and not os.path.lexists(directory)
    return _miss(policy, profile, start, figures, config_stat, name if writable else None)


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return [st.st_mtime_ns, st.st_size]


def _fingerprint() -> str:
    """This module and the engine, by size and time: a changed clm-policy never reads a
    digest another one wrote."""
    here = os.path.dirname(os.path.abspath(__file__))
    return files_fingerprint((__file__, os.path.join(here, "..", "policy", "engine.py")))


def _key(
    policy: str | None, profile: str | None, config: str | None, cwd: str, figures: Figures
) -> str:
    from clm_policy import __version__

    window = f"window:{figures.window}" if figures.window else f"model:{figures.model}"
    parts = (FORMAT, __version__, _fingerprint(), config or "", cwd, policy or "", profile or "")
    from_env = (os.environ.get(ENV[key], "") for key in ("policy", "profile"))
    joined = "\0".join((*parts, *from_env, window))
    return sha256_hex(joined.encode("utf-8", "surrogateescape"))[:32]


def _read_digest(entry: str, config_stat: list[int] | None) -> Digest | None:
    raw = read_private(entry, 64 * 1024)
    if raw is None:
        return None  # missing, a symlink, or not this user's alone
    try:
        data = json.loads(raw)
        if data["config"] != config_stat:
            return None
        for dep in data["deps"]:
            path, mtime, size = dep
            if type(path) is not str or _stat(path) != [mtime, size]:
                return None
        policy, profile, *numbers = (data[name] for name in Digest.FIELDS)
        if type(policy) is not str or type(profile) is not str:
            return None
        if not all(n is None or _count(n) is not None for n in numbers):
            return None
        return Digest(policy, profile, *numbers)
    except Exception:  # stale, corrupt or foreign: a miss
        return None


def _miss(
    policy_flag: str | None,
    profile_flag: str | None,
    start: str,
    figures: Figures,
    config_stat: list[int] | None,
    name: str | None,
) -> tuple[Digest, str | None]:
    """Load the policy, resolve the thresholds, write the digest (to ``name`` in the cache
    directory, unless None) and decide for the context."""
    from clm_policy.base.errors import ClmError
    from clm_policy.config.project import load_config, setting
    from clm_policy.models.enums import FIGURES
    from clm_policy.models.state import SessionState, TokenSnapshot
    from clm_policy.policy.cache import load_policy_cached

    config = load_config(start)
    policy = load_policy_cached(setting("policy", policy_flag, config) or DEFAULT_POLICY)
    prof = policy.profile(setting("profile", profile_flag, config))
    window = figures.window
    if window is None:
        probe = SessionState(session_id=FIGURES, tokens=TokenSnapshot(model=figures.model))
        window = policy.window_for(probe, prof)[0]
    digest = Digest(
        policy.name,
        prof.name,
        window,
        prof.soft_compact.resolve(window),
        prof.hard_handoff.resolve(window),
    )
    directory = cache_dir()
    if name is not None and directory is not None:
        deps = [[p, *(_stat(p) or [0, -1])] for p in policy.source_paths]
        data = {"config": config_stat, "deps": deps}
        data.update((name, getattr(digest, name)) for name in Digest.FIELDS)
        # one digest, atomically, into a directory private to this user (best effort)
        write_private(str(directory), name, json.dumps(data, separators=(",", ":")))
    if figures.tokens is None or digest.soft is None or digest.hard is None:
        return digest, None
    state = SessionState(
        session_id=FIGURES,
        tokens=TokenSnapshot(
            context_tokens=figures.tokens,
            context_window=window,
            model=figures.model,
            estimated=figures.estimated,
        ),
    )
    try:
        return digest, policy.decide(state, prof.name).action.value
    except ClmError as exc:  # a rule that fails on this bare state: the thresholds speak
        log_problem(_describe(exc))
        return digest, None


# -- the line -------------------------------------------------------------------------------


def context_text(figures: Figures, window: int | None) -> str:
    """``ctx 46% 82k/180k`` (of what Claude Code counts of ``window``); ``~``: an estimate."""
    if figures.tokens is None:
        return "ctx n/a (just compacted)" if figures.compacted else "ctx n/a (no usage yet)"
    mark = "~" if figures.estimated else ""
    if not window:
        return f"ctx {mark}{tokens_text(figures.tokens)}"
    share = f"{counted_share(figures.tokens, window):.0f}%"
    counted = tokens_text(counted_window(window))
    return f"ctx {mark}{share} {mark}{tokens_text(figures.tokens)}/{counted}"


def render(figures: Figures, digest: Digest, action: str | None) -> str:
    parts = [context_text(figures, figures.window or digest.window)]
    if digest.soft is None or digest.hard is None:
        parts.append("no window known")
    else:
        parts.append(_next_threshold(figures.tokens, digest))
    if action is not None:
        parts.append(action)
    parts.append(f"{digest.policy}/{digest.profile}")
    return SEP.join(parts)


def _next_threshold(tokens: int | None, digest: Digest) -> str:
    assert digest.soft is not None
    assert digest.hard is not None

    def at(limit: int) -> str:
        if digest.window:  # whole percents, as Claude Code shows its own figure
            return f"{counted_share(limit, digest.window):.0f}%"
        return tokens_text(limit)

    if tokens is None or tokens < digest.soft:  # (a threshold past the window: never)
        return f"compact at {at(digest.soft)}"
    if tokens < digest.hard:
        return f"handoff at {at(digest.hard)}"
    return f"past handoff at {at(digest.hard)}"


def tokens_text(n: int) -> str:
    """``950``, ``82k``, ``1.5M``."""
    if n < 1000:
        return str(n)
    if round(n / 1000) < 1000:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}".removesuffix(".0") + "M"


# -- problems -------------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    if isinstance(exc, _Problem):
        return str(exc)
    from clm_policy.base.errors import ClmError

    if isinstance(exc, ClmError):
        return str(exc) if exc.location is not None else f"clm-policy: {exc}"
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({os.path.basename(frame[0].filename)}:{frame[0].lineno})" if frame else ""
    return f"internal error: {type(exc).__name__}: {exc}{where}"


FOOTER_REASON = 40
"""Characters of a problem's reason the footer shows (the log has it whole)."""


def _footer(exc: BaseException) -> str:
    """What the footer says of a problem, in a few words: the configuration's or the policy's
    (``clm-policy: policy team.yaml not found``, ``clm-policy: unknown profile 'codng'``,
    ``clm-policy: bad.yaml:4 invalid (see log)``); :data:`NEUTRAL` for input that is not
    Claude Code's and for the program's own errors."""
    from clm_policy.base.errors import ClmError, clipped_line

    if not isinstance(exc, ClmError):
        return NEUTRAL
    where = exc.location
    if where is None:  # its first clause: "no bundled policy named 'nope'", ...
        reason = exc.message.split(";")[0].split(" (")[0]
        return f"clm-policy: {clipped_line(reason, FOOTER_REASON)}"
    name = clipped_line(os.path.basename(where.file.rstrip("/")) or where.file, FOOTER_REASON)
    if exc.message.startswith("no such file"):
        return f"clm-policy: policy {name} not found"
    line = f":{where.line}" if where.line > 0 else ""
    return f"clm-policy: {name}{line} invalid (see log)"


def log_problem(message: str) -> None:
    """Append one line to the log (best effort)."""

    from clm_policy.agents.logfile import append

    append(LOG_NAME, message, LOG_LIMIT)
