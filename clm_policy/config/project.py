"""The project configuration: ``.clm-policy.yaml``, found from the working directory upward
to the project's root.

A project that uses clm-policy from an agent's hooks names its policy, profile, memory
repository and remote once, so that hook commands stay short::

    # .clm-policy.yaml
    version: 1
    policy: claude-code        # a bundled name, or a path relative to this file
    profile: coding
    memory: ~/.local/share/clm-policy/projects/shop/memory
    remote: origin             # push handoffs here (optional)
    memory.backend: hybrid     # file (default), mem0 or hybrid (clm_policy.memory.backends)

Each value comes from the command-line flag, else the environment (:data:`ENV`), else the
file, else the default. Where nothing names a memory repository, a configured project keeps it
outside its work tree (:func:`project_memory`: ``<name>-<hash>``, the hash of the project's
path, so two projects of one name never share one); without a file the default is
``./clm-memory`` for a command, and that same folder outside the project for the hooks and the
MCP server.

Which file counts. The project is the repository the working folder is in (the nearest folder
holding ``.git``), or, outside any repository, the working folder itself; a
``.clm-policy.yaml`` counts in that folder or one below it on the way up (the nearest wins). A
file above the project's root — in a shared folder, in the home folder above every project —
counts only once the person trusts it (``clm-policy trust PATH``: the same record as below);
until then it is ignored and said once (:func:`clm_policy.config.trust.take_ignored`). A file
that counts is read only when it is this user's and no one else may write it
(:func:`clm_policy.base.privatefiles.others_may_write`); else it is refused with one line. The
project's default memory is keyed to the project (:attr:`ProjectConfig.project`), never to the
folder of a file above it: two projects below one trusted file keep two memories.

The file is the project's, committed and cloned: data, not the person's word. It chooses the
policy and the profile; a ``memory`` other than the project's default and a ``remote``
(:data:`NEEDS_TRUST`) count only while the person trusts it as it is
(:mod:`clm_policy.config.trust`), else :func:`setting` ignores them and notes it. Flags and the
environment are the person's own and always count.

The file is a flat mapping of strings, read by a small parser of its own (a hook runs on every
prompt and must not pay for the YAML library); anything else in it is an error at
``file:line:col``. Paths are strings: this is a hot module (docs/architecture.md).
"""

from __future__ import annotations

import os

from clm_policy.base.errors import InputError, Location, quote
from clm_policy.base.record import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    StrPath = str | os.PathLike[str]

FILENAME = ".clm-policy.yaml"
KEYS = ("version", "policy", "profile", "memory", "remote", "memory.backend")
ENV = {
    "policy": "CLM_POLICY_POLICY",
    "profile": "CLM_POLICY_PROFILE",
    "memory": "CLM_POLICY_MEMORY",
    "remote": "CLM_POLICY_REMOTE",
    "memory.backend": "CLM_POLICY_MEMORY_BACKEND",
}
DEFAULT_MEMORY = "clm-memory"
MAX_SIZE = 64 * 1024
NEEDS_TRUST = ("memory", "remote")
"""What the file decides only once trusted: where memory is read and written, where it goes.
(``memory.backend`` is a name: where Mem0's model runs comes from the environment alone.)"""


class ProjectConfig(Record):
    """The file's values for a folder (:func:`setting` adds the environment and defaults).

    ``path``: the ``.clm-policy.yaml`` found, or None; ``root``: the folder its paths are
    relative to (the file's, else the folder looked from); ``project``: the folder the default
    memory is keyed to (the module's docstring); ``where``: each value's position; ``digest``:
    the SHA-256 of the content read (what trust is checked against). Folders are absolute."""

    path: str | None
    root: str
    project: str
    values: Mapping[str, str] = field(default_factory=dict)
    where: Mapping[str, Location] = field(default_factory=dict)
    digest: str | None = None


def project_root(start: StrPath) -> str:
    """The project ``start`` is in: its repository (the nearest folder holding ``.git``), or
    ``start`` itself outside any."""
    from clm_policy.base.paths import repository_root

    folder = os.path.abspath(start)
    return repository_root(folder) or folder


def nearest_config(start: StrPath) -> str | None:
    """The nearest ``.clm-policy.yaml`` in ``start`` or a folder above it, wherever it is
    (what ``clm-policy trust`` names; :func:`find_config` says whether it counts)."""
    from clm_policy.base.paths import folders_up

    found = (os.path.join(here, FILENAME) for here in folders_up(start))
    return next((path for path in found if os.path.isfile(path)), None)


def find_config(start: StrPath) -> str | None:
    """The ``.clm-policy.yaml`` that counts for ``start`` (the module's docstring: "Which file
    counts"), or None."""
    from clm_policy.base.paths import folders_up, is_inside

    root = project_root(start)
    for here in folders_up(start):
        path = os.path.join(here, FILENAME)
        if os.path.isfile(path) and (is_inside(here, root) or _trusted_above(path, root)):
            return path
    return None


def _trusted_above(path: str, project: str) -> bool:
    """Whether ``path``, above ``project``'s root, is a file the person trusts as it is now;
    one they do not is noted (said once, by a command or a hook)."""
    from clm_policy.config.trust import CHANGED, TRUSTED, note_above, status

    try:
        _, _, digest = read_config(path)
    except InputError:
        digest = ""  # unreadable, refused or broken: it does not count either
    found = status(path, digest) if digest else CHANGED
    if found == TRUSTED:
        return True
    note_above(path, digest, project, changed=found == CHANGED and bool(digest))
    return False


def load_config(start: StrPath | None = None) -> ProjectConfig:
    """The project configuration for ``start`` (default: the working directory)."""
    from clm_policy.base.paths import is_inside

    folder = os.path.abspath(start if start is not None else os.getcwd())
    root = project_root(folder)
    path = find_config(folder)
    if path is None:
        return ProjectConfig(None, folder, root)
    info = os.stat(path)
    values, where, digest = _parsed(path, info.st_mtime_ns, info.st_size)
    home = os.path.dirname(path)
    return ProjectConfig(path, home, home if is_inside(home, root) else root, values, where, digest)


# a command resolves several options from one file: parse it once (while it is unchanged)
Parsed = tuple[dict[str, str], dict[str, Location], str]
_PARSED: dict[tuple[str, int, int], Parsed] = {}


def _parsed(path: str, mtime: int, size: int) -> Parsed:
    key = (path, mtime, size)
    found = _PARSED.get(key)
    if found is None:
        if len(_PARSED) >= 8:
            _PARSED.clear()
        found = _PARSED[key] = read_config(path)
    return found


def read_config(path: StrPath) -> Parsed:
    """The key/value pairs of a configuration file, the position of each value, and the
    SHA-256 of the bytes they were read from (one read: what is trusted is what was parsed)."""
    from clm_policy.base.digest import sha256_hex
    from clm_policy.formats.textio import decode, read_bytes

    shown = os.fspath(path)
    data = read_bytes(path, shown, limit=MAX_SIZE, what="configuration", check=_only_yours)
    text = decode(data, shown, MAX_SIZE, "configuration")
    values, where = _values(text, shown)
    return values, where, sha256_hex(data)


def _only_yours(status: os.stat_result) -> str | None:
    """Why a configuration file is not read: another user owns it, or others may write it."""
    from clm_policy.base.privatefiles import others_may_write

    refused = others_may_write(status)
    if refused is None:
        return None
    return f"{refused} (a project's configuration must be a file only you can write)"


def _values(text: str, shown: str) -> tuple[dict[str, str], dict[str, Location]]:
    values: dict[str, str] = {}
    where: dict[str, Location] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _without_comment(raw).rstrip()
        if not line.strip():
            continue
        start = Location(shown, number, 1)
        if line[0] in " \t-":
            raise InputError("expected `key: value` lines (a flat mapping)", start)
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise InputError("expected `key: value`", start)
        key = key.strip()
        if key not in KEYS:
            from clm_policy.base.suggest import suggest

            known = f"(known: {', '.join(KEYS)})"
            raise InputError(f"unknown key {quote(key)}{suggest(key, KEYS)} {known}", start)
        if key in values:
            raise InputError(f"duplicate key {quote(key)}", start)
        at = raw.index(value.strip(), len(key) + 1) + 1 if value.strip() else len(line) + 1
        where[key] = Location(shown, number, at)
        values[key] = _scalar(value.strip(), where[key])
    if values.get("version", "1") != "1":
        raise InputError(
            f"unsupported version {quote(values['version'])} (expected 1)", where["version"]
        )
    return values, where


def _without_comment(line: str) -> str:
    quote_char = ""
    for i, char in enumerate(line):
        if quote_char:
            if char == quote_char:
                quote_char = ""
        elif char in "\"'":
            quote_char = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def _scalar(value: str, where: Location) -> str:
    if not value.isprintable():  # names and paths, shown in terminals and status bars
        bad = next(c for c in value if not c.isprintable())
        at = where.shifted(cols=value.index(bad))
        raise InputError(f"unprintable character U+{ord(bad):04X} in a value", at)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if not value or value[0] in "[{&*!|>%@`":
        raise InputError(f"expected a plain or quoted string, got {quote(value)}", where)
    return value


def setting(key: str, flag: str | None, config: ProjectConfig | None = None) -> str | None:
    """A value by precedence: the flag, the environment, the configuration file.

    A path from the file is relative to the file's folder; ``~`` is expanded everywhere. A
    ``memory`` other than the project's default or a ``remote`` from a file the person has
    not trusted is None, and noted (:func:`clm_policy.config.trust.take_ignored`)."""
    if flag:
        return flag
    from_env = os.environ.get(ENV[key])
    if from_env:
        return os.path.expanduser(from_env) if key == "memory" else from_env
    config = config if config is not None else load_config()
    value = from_file(key, config)
    if value is not None and key in NEEDS_TRUST and config.path is not None:
        if key == "memory" and is_default_memory(config, value):
            return value
        from clm_policy.config.trust import may_choose

        if not may_choose(config.path, config.digest or "", key):
            return None
    return value


def from_file(key: str, config: ProjectConfig) -> str | None:
    """The file's value for ``key`` as :func:`setting` uses it (a path resolved against the
    file's folder), trusted or not."""
    value = config.values.get(key)
    if value is None or key not in ("memory", "policy") or config.path is None:
        return value
    if key == "memory" or _looks_like_path(value):
        joined = os.path.join(config.root, os.path.expanduser(value))  # absolute: as it is
        if key == "policy":
            _check_reach(joined, value, config)
            if not os.path.isfile(joined):
                raise InputError(
                    f"no policy file {quote(value)} (a path is relative to this file's folder)",
                    config.where.get(key),
                )
        return joined
    _check_bundled(value, config)
    return value


def _check_reach(path: str, value: str, config: ProjectConfig) -> None:
    """Refuse a ``policy:`` path outside the file's reach, as ``extends:`` is refused (its
    repository, else its folder, and the folders ``CLM_POLICY_EXTENDS_PATH`` names): a cloned
    project's file must not have ``lint`` print a file of the machine. Checked on the real
    path, before asking whether it exists; the refusal names only what was written."""
    from clm_policy.base.errors import PolicyError
    from clm_policy.base.paths import folder_reach

    try:
        folder_reach(config.root).check(path, value, f"policy {quote(value)}", "the project's")
    except PolicyError as exc:
        raise InputError(exc.message, config.where.get("policy")) from None


def is_default_memory(config: ProjectConfig, memory: str) -> bool:
    """Whether ``memory`` is where the project keeps its memory when nothing names one."""
    return os.path.realpath(memory) == os.path.realpath(project_memory(config.project))


def configured_policy(config: ProjectConfig | None = None) -> tuple[str, str] | None:
    """The policy file the project names — ``$CLM_POLICY_POLICY``, else the configuration's
    ``policy:`` (a bundled name: its bundled file) — and where it is named (the variable, or
    the file's ``file:line:col``); None when neither names one."""
    config = config if config is not None else load_config()
    value = setting("policy", None, config)
    if value is None:
        return None
    where = ENV["policy"] if os.environ.get(ENV["policy"]) else str(config.where.get("policy"))
    if not _looks_like_path(value) and not os.path.isfile(value):
        from clm_policy.base.resources import bundled_policy_file

        value = bundled_policy_file(value)
    return os.path.abspath(value), where


def _check_bundled(name: str, config: ProjectConfig) -> None:
    """A bare name in the file names a bundled policy (or a file of that name here, as a
    flag's would): else the error is placed at the file's value, not left to the loader."""
    from clm_policy.base.resources import bundled_policy_file, bundled_policy_names

    if os.path.isfile(bundled_policy_file(name)) or os.path.isfile(name):
        return
    known = ", ".join(bundled_policy_names())
    raise InputError(
        f"no bundled policy named {quote(name)} (bundled: {known})", config.where.get("policy")
    )


def _looks_like_path(value: str) -> bool:
    return "/" in value or value.endswith((".yaml", ".yml"))


def memory_path(
    flag: str | None, config: ProjectConfig | None = None, *, outside: bool = False
) -> str:
    """The memory repository to use: flag, environment, configuration, or the default — for a
    configured project outside its work tree (:func:`project_memory`), else ``./clm-memory``.
    ``outside``: the project's default outside its tree with no configuration file too (the
    hooks and the MCP server: they run in whatever project the agent opens, and must not add
    a folder to its work tree)."""
    config = config if config is not None else load_config()
    chosen = setting("memory", flag, config)
    if chosen is not None:
        return chosen
    if config.path is not None or outside:
        return project_memory(config.project)
    return DEFAULT_MEMORY


def project_memory(root: StrPath) -> str:
    """Where a configured project keeps its memory repository by default, outside its tree:
    ``$XDG_DATA_HOME/clm-policy/projects/<name>-<hash>/memory``."""
    from clm_policy.base.digest import sha256_hex
    from clm_policy.base.paths import xdg_home

    data = xdg_home("XDG_DATA_HOME")
    resolved = os.path.realpath(root)
    digest = sha256_hex(resolved.encode())[:8]
    name = os.path.basename(resolved)
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in name)[:40] or "project"
    return os.path.join(data, "clm-policy", "projects", f"{safe}-{digest}", "memory")


TEMPLATE = """\
# clm-policy project configuration (clm-policy init --claude-code). Flags and CLM_POLICY_*
# environment variables override each value; see docs/claude-code.md.
version: 1
policy: claude-code
profile: coding
{chosen}# memory: ~/path/to/memory  # default: outside the project, in
#                             # $XDG_DATA_HOME/clm-policy/projects/<name>-<hash>/memory
# Another memory, or a remote, counts once you trust this file: clm-policy trust
"""


def write_config(root: StrPath, remote: str | None = None, memory: str | None = None) -> bool:
    """Write ``root/.clm-policy.yaml`` (policy claude-code, profile coding) unless a
    configuration is already in effect there.

    Returns whether it wrote one. Unless ``memory`` is given (as it is written: a path
    relative to ``root``, or absolute) the file names no memory repository: each machine uses
    the project's default outside the work tree, so the file can be committed and shared."""
    if find_config(root) is not None:
        return False
    chosen = ""
    for key, value in (("remote", remote), ("memory", memory)):
        if value:
            check_value(key, value)
            chosen += f"{key}: {value}\n"
    text = TEMPLATE.format(chosen=chosen)
    from clm_policy.base.atomicfile import replace

    path = os.path.join(root, FILENAME)
    try:
        replace(path, text.encode("utf-8"))
    except OSError as exc:  # a folder not yours to write, a read-only or full file system
        raise InputError(
            f"cannot write it: {exc.strerror or exc}; nothing written", Location(path)
        ) from None
    return True


def check_value(key: str, value: str) -> None:
    """An :class:`InputError` unless ``key: value``, written into the file as it is, reads
    back as ``value``: a control character, a `` #`` (a comment), quotes around it or a
    first character YAML gives a meaning would leave a file every command refuses, or one
    that says something else."""
    problem = ""
    try:
        values, _ = _values(f"{key}: {value}\n", FILENAME)
    except InputError as exc:
        problem = exc.message
    else:
        if values.get(key) != value:
            problem = "it would read back as " + quote(values.get(key, ""))
    if problem:
        raise InputError(f"{key} {quote(value)} cannot be written into {FILENAME}: {problem}")
