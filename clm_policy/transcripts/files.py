"""The files a session touched, as they are at its end: edits by every agent, renames and
deletions applied, files commands made, paths relative to the project.

:class:`FileLog` applies operations in the order they happened: an edit, a file created
(by the agent's write tool, or by a command: :func:`shell_file_ops`, :func:`created_in_output`),
a move and a deletion (of a file or of a folder and all under it). At the end,
:meth:`FileLog.changed` holds the files edited or created that still exist under their current
names, :meth:`FileLog.made` those a command made, :meth:`FileLog.moved` each rename of a file
that existed before the session (``old -> new``) and :meth:`FileLog.deleted` each deleted file
that existed before it (a file the session made and removed again is nowhere).

:class:`Paths` turns a path as the transcript gives it into the path a person reads: relative
to the project (the session's first working directory), else absolute with the home folder as
``~``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable

from clm_policy.transcripts.results import reads_only, split_chain, words_of

EDITED = "edited"
CREATED = "created"
MADE = "made"
"""A file a command made (``touch``, ``> file``, ``cargo new``, a generator's output)."""
RENAMED = "renamed"
"""A file that existed before the session and was only moved."""

_HOME = re.compile(r"^(/home/[^/]+|/Users/[^/]+|/root|[A-Z]:/Users/[^/]+)(?=/|$)")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _slashes(path: str) -> str:
    """A Windows path (``X:\\a\\b``, ``x:/a/b``) written one way: ``X:/a/b``; any other as
    it is."""
    return path[0].upper() + ":" + path[2:].replace("\\", "/") if _DRIVE.match(path) else path


class Paths:
    """Paths as a person reads them: ``root`` (the project) relative, ``home`` (the home
    folder ``root`` lies in) as ``~``. Windows paths are written with ``/`` and an upper-case
    drive letter, however the transcript gives them."""

    def __init__(self, root: str | None) -> None:
        root = _slashes(root) if root else root
        self.root = posixpath.normpath(root) if root else None
        m = _HOME.match(root) if root else None
        self.home = m.group(1) if m else None

    def absolute(self, path: str, cwd: str | None = None) -> str:
        """``path`` made absolute against ``cwd`` (else the project), normalised."""
        path = _slashes(path.strip())
        if path.startswith(("$HOME/", "${HOME}/")):
            path = "~/" + path.split("/", 1)[1]
        if path.startswith("~/") and self.home:
            path = self.home + path[1:]
        base = _slashes(cwd) if cwd else self.root
        if not (path.startswith(("/", "~/")) or _DRIVE.match(path)) and base:
            if _DRIVE.match(base):  # a relative Windows path: src\a.py
                path = path.replace("\\", "/")
            path = posixpath.join(base, path)
        return posixpath.normpath(path) if path else path

    def shown(self, path: str) -> str:
        """An absolute path as shown: relative to the project when inside it."""
        if self.root and (path == self.root or self.inside(path)):
            return posixpath.relpath(path, self.root) if path != self.root else "."
        if self.home and (path == self.home or path.startswith(self.home + "/")):
            return "~" + path[len(self.home) :]
        m = _HOME.match(path)
        return "~" + path[m.end() :] if m else path

    def inside(self, path: str) -> bool:
        """Whether an absolute path lies in the project (files outside it made by a command,
        like ``/tmp/out.txt``, are not the project's)."""
        return self.root is not None and path.startswith(self.root.rstrip("/") + "/")


class FileLog:
    """The files a session touched, operations applied in order (absolute paths)."""

    def __init__(self) -> None:
        self._state: dict[str, str] = {}  # path -> EDITED | CREATED | MADE | RENAMED
        self._origin: dict[str, str] = {}  # current path -> the path it had before the session
        self._deleted: dict[str, None] = {}

    def _under(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        return [p for p in self._state if p == path or p.startswith(prefix)]

    def _exists(self, path: str) -> None:
        """``path`` is there now: neither it nor a folder it is in is deleted any more (a
        folder removed and made again: ``rm -rf x && git worktree add x``)."""
        self._deleted.pop(path, None)
        for gone in [d for d in self._deleted if path.startswith(d.rstrip("/") + "/")]:
            del self._deleted[gone]

    def edit(self, path: str, created: bool = False) -> None:
        """The agent wrote ``path``: it goes last, so the lists run from the file changed
        longest ago to the one changed last (a seed cut for length keeps the last)."""
        self._exists(path)
        kind = self._state.pop(path, None) or (CREATED if created else EDITED)
        # (a file a command made that the agent then wrote is the agent's)
        self._state[path] = {RENAMED: EDITED, MADE: CREATED}.get(kind, kind)

    def made(self, path: str) -> None:
        self._exists(path)
        self._state.setdefault(path, MADE)

    def delete(self, path: str) -> None:
        touched = self._under(path)
        for p in touched:
            kind = self._state.pop(p)
            origin = self._origin.pop(p, None)
            if origin is not None:
                self._deleted[origin] = None
            elif kind not in (CREATED, MADE):
                self._deleted[p] = None
        if not touched:
            self._deleted[path] = None

    def move(self, src: str, dst: str) -> None:
        touched = self._under(src)
        if not touched:  # a file the session had not touched: it existed before
            self._deleted.pop(dst, None)
            self._state[dst] = RENAMED
            self._origin[dst] = src
            return
        for p in touched:
            new = dst + p[len(src) :]
            kind = self._state.pop(p)
            self._deleted.pop(new, None)
            self._state[new] = kind
            origin = self._origin.pop(p, None)
            if origin is None and kind not in (CREATED, MADE):
                origin = p
            if origin is not None and origin != new:
                self._origin[new] = origin

    def changed(self) -> list[str]:
        """Files edited or created (by the agent's tools), under their current names."""
        return [p for p, kind in self._state.items() if kind in (EDITED, CREATED)]

    def made_files(self) -> list[str]:
        return [p for p, kind in self._state.items() if kind == MADE]

    def moved(self) -> list[tuple[str, str]]:
        """(path before the session, path now) of each file that was renamed."""
        return [(origin, p) for p, origin in self._origin.items() if p in self._state]

    def deleted(self) -> list[str]:
        return list(self._deleted)


# ---------------------------------------------------------------------------------------------
# What a shell command does to files

FileOp = tuple[str, str, "str | None"]
"""("edit" | "made" | "move" | "delete", absolute path, the destination of a move)."""

_MAY_TOUCH = re.compile(
    r"\b(?:mv|rm|rmdir|unlink|cp|touch|sed|gsed|perl|tee|cargo|go)\b|>|"
    r"\b(?:Move|Remove|Copy)-Item\b",
    re.I,
)
"""A command that may change files: anything else is not read word by word."""
_SKIP_TARGETS = ("/dev/", "/tmp/", "/proc/", "/var/tmp/")
_CREATED_LINE = re.compile(
    r"^\s*(?:\*\s*)?(?:create|created|creating|CREATE)\s+(?!mode \d{6}\b)([^\s(]+)", re.M
)
"""A generator's line for a file it made — not git's own ``create mode 100644 src/x.ts`` (a
commit's summary) nor ``new file:   x`` (``git status``): git records files, it makes none."""
_WROTE = re.compile(r"^Wrote to (\S+?):?\s*$", re.M)
_GO_MOD = re.compile(r"^go: creating new go\.mod", re.M)


def _args(words: list[str]) -> list[str]:
    """The operands of a command line: words that are no options (all after ``--``)."""
    end = words.index("--") if "--" in words else len(words)
    return [w for w in words[:end] if not w.startswith("-") or w == "-"] + words[end + 1 :]


def _redirect_targets(words: list[str]) -> tuple[list[str], list[str]]:
    """(the words without redirections, the files written by ``>`` / ``>>`` / ``&>``)."""
    kept: list[str] = []
    targets: list[str] = []
    rest = iter(words)
    for word in rest:
        m = re.match(r"^(\d*|&)(>>?)(.*)$", word)
        if m and not word.startswith(">&") and m.group(1) in ("", "1", "&"):
            target = m.group(3) or next(rest, "")
            if target and not target.startswith("&"):
                targets.append(target)
        elif m or re.match(r"^\d*<", word):
            # 2> file: the file is a log, not the project's; < file: read; << EOF, <<< word:
            # a heredoc's delimiter, a here-string
            if (m and not m.group(3)) or re.fullmatch(r"\d*<{1,3}-?", word):
                next(rest, None)
        else:
            kept.append(word)
    return kept, targets


_CMDLETS = {"move-item": "move", "remove-item": "delete", "copy-item": "copy"}
_CMDLET = re.compile(r"\b(?:Move|Remove|Copy)-Item\b", re.I)


def _windows_words(piece: str) -> list[str]:
    """A PowerShell command's words: backslashes kept (they separate folders), quotes off."""
    try:
        words = shlex.split(piece, posix=False)
    except ValueError:
        words = piece.split()
    return [w[1:-1] if len(w) > 1 and w[0] == w[-1] and w[0] in "'\"" else w for w in words]


_CMDLET_FLAGS = frozenset({"-force", "-recurse", "-confirm:$false", "-whatif"})


def _cmdlet(words: list[str]) -> tuple[str, list[str]] | None:
    """(what a PowerShell file cmdlet in ``words`` does, its operands) — the cmdlet may stand
    inside a block (``if (…) { Move-Item a b }``)."""
    for i, word in enumerate(words):
        kind = _CMDLETS.get(word.lower())
        if kind is None:
            continue
        operands: list[str] = []
        named: dict[str, str] = {}
        rest = iter(words[i + 1 :])
        for word in rest:
            if word in ("}", "{") or word.startswith("|"):
                break
            lowered = word.lower()
            if lowered in ("-path", "-literalpath", "-destination"):  # (without a value: no change)
                named[lowered] = next(rest, named.get(lowered, ""))
            elif not lowered.startswith("-") or (
                lowered not in _CMDLET_FLAGS and not lowered[1:2].isalpha()
            ):
                operands.append(word.rstrip("}").strip())
        src = named.get("-path") or named.get("-literalpath") or (operands[0] if operands else None)
        dst = named.get("-destination") or (operands[1] if len(operands) > 1 else None)
        found = [p for p in (src, dst) if p]
        return (kind, [p.replace("\\", "/") for p in found]) if found else None
    return None


def _powershell_ops(
    kind: str, operands: list[str], at: Callable[[str], str], paths: Paths
) -> list[FileOp]:
    """A Move-Item / Remove-Item / Copy-Item as file operations; ``dir/*`` stands for what the
    folder holds."""

    def folder(path: str) -> str:
        return path[:-2] if path.endswith("/*") else path.rstrip("/")

    if kind == "delete":
        return [("delete", at(folder(operands[0])), None)]
    if len(operands) < 2:
        return []
    src, dst = operands[0], operands[1]
    target = dst
    if src.endswith("/*"):
        target = folder(dst)
    elif dst.endswith("/"):
        target = posixpath.join(folder(dst), posixpath.basename(folder(src)))
    if kind == "move":
        return [("move", at(folder(src)), at(target))]
    return [("made", at(target), None)] if paths.inside(at(target)) else []


def shell_file_ops(command: str, cwd: str | None, paths: Paths) -> list[FileOp]:
    """What ``command`` (run in ``cwd``) does to files, as far as its words say: ``mv``,
    ``git mv``, ``rm``, ``git rm``, ``cp``, ``touch``, ``sed -i`` / ``perl -i``, ``tee``,
    ``>`` redirections, ``cargo new`` / ``init``, ``go mod init``. Paths outside the project
    made by a redirection or ``touch`` (``/tmp/x``) are left out."""
    written = script_writes(command)
    if not _MAY_TOUCH.search(command):
        return [("edit", paths.absolute(p, cwd), None) for p in written if "$" not in p]
    here = cwd
    ops: list[FileOp] = []

    def at(path: str) -> str:
        return paths.absolute(path, here)

    for _op, piece in split_chain(command):
        words = words_of(piece)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words.pop(0)
        if words and words[0] in ("sudo", "command", "time", "env"):
            words.pop(0)
        if not words:
            continue
        words, targets = _redirect_targets(words)
        for target in targets:
            path = at(target)
            if not path.startswith(_SKIP_TARGETS) and paths.inside(path):
                ops.append(("made", path, None))
        if not words:
            continue
        cmdlet = _cmdlet(_windows_words(piece)) if _CMDLET.search(piece) else None
        if cmdlet is not None:  # PowerShell: Move-Item / Remove-Item / Copy-Item
            ops += _powershell_ops(*cmdlet, at, paths)
            continue
        name = posixpath.basename(words[0])
        rest = words[1:]
        if name == "git" and rest and rest[0] in ("mv", "rm"):
            name, rest = f"git {rest[0]}", rest[1:]
        if name.lower() in CHANGERS:
            folder = _folder_named(_changer_words(piece, words))
            here = at(folder) if folder else here
        elif name in ("mv", "git mv"):
            ops += [("move", at(src), at(target)) for src, target in _copies(_args(rest))]
        elif name in ("rm", "git rm", "rmdir", "unlink"):
            ops += [("delete", at(p), None) for p in _args(rest)]
        elif name == "touch" or (name == "tee" and "-a" not in rest):
            ops += [("made", at(p), None) for p in _args(rest) if paths.inside(at(p))]
        elif name == "cp":
            copies = _copies(_args(rest))
            ops += [("made", at(t), None) for _src, t in copies if paths.inside(at(t))]
        elif name in ("sed", "gsed", "perl") and any(_in_place(name, w) for w in rest):
            ops += [("edit", at(p), None) for p in _script_files(name, rest)]
        elif name == "cargo" and rest and rest[0] in ("new", "init"):
            operands = _args(rest[1:])
            folder = operands[0] if operands else "."
            main = "src/lib.rs" if "--lib" in rest else "src/main.rs"
            ops += [("made", at(posixpath.join(folder, f)), None) for f in ("Cargo.toml", main)]
        elif name == "go" and rest[:2] == ["mod", "init"]:
            ops.append(("made", at("go.mod"), None))
    ops += [("edit", at(path), None) for path in written]
    # a path with a variable the shell expanded ($TEST_DIR/x) names no file we can tell
    return [op for op in ops if "$" not in op[1] and "$" not in (op[2] or "")]


_FILE_READERS = frozenset({"cat", "head", "tail", "nl", "less", "more", "bat", "wc", "get-content"})
"""Programs whose operands are files they read (``sed -n`` too: its operands after the script)."""
_READ_MAY = re.compile(r"\b(?:cat|head|tail|nl|less|more|bat|wc|sed|Get-Content)\b", re.I)
_VALUED = frozenset({"-n", "-c", "-totalcount", "-tail", "-first", "-encoding", "-delimiter"})
"""Options of the readers that take a value (``head -n 40 x``: 40 is no file)."""


def shell_reads(command: str, cwd: str | None, paths: Paths) -> list[str]:
    """The files ``command`` (run in ``cwd``) reads as far as its words say — ``cat x``,
    ``sed -n '1,80p' x``, ``head -n 40 x``, ``Get-Content x`` — as absolute paths: files that
    existed when it ran."""
    if not _READ_MAY.search(command):
        return []
    here = cwd
    read: list[str] = []
    for _op, piece in split_chain(command):
        words, _targets = _redirect_targets(words_of(piece))
        if not words:
            continue
        name = posixpath.basename(words[0].replace("\\", "/")).lower()
        if name in CHANGERS:
            folder = _folder_named(_changer_words(piece, words))
            here = paths.absolute(folder, here) if folder else here
            continue
        if name == "sed" and not any(_in_place(name, w) for w in words[1:]):
            script = "-e" not in words and "-f" not in words  # else the script is a value
            operands = _operands(words[1:], frozenset({"-e", "-f"}))[1 if script else 0 :]
        elif name in _FILE_READERS:
            operands = _operands(words[1:])
        else:
            continue
        read += [paths.absolute(w, here) for w in operands if "$" not in w and "*" not in w]
    return read


def _operands(words: list[str], valued: frozenset[str] = _VALUED) -> list[str]:
    """The operands of a reader's words: no options, nor the values the options take."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.lower() in valued:
            skip = True
        elif not word.startswith("-") and not word.isdigit() and not word.startswith(("+", "<")):
            out.append(word)
    return out


_PY_PATH_VAR = re.compile(r"""\b(\w+)\s*=\s*(?:pathlib\.)?Path\(\s*r?(['"])([^'"\n]+)\2\s*\)""")
_PY_PATH_WRITE = re.compile(
    r"""(?:pathlib\.)?Path\(\s*r?(['"])([^'"\n]+)\1\s*\)\.write_(?:text|bytes)\("""
)
_PY_OPEN_WRITE = re.compile(
    r"""\bopen\(\s*r?(['"])([^'"\n]+)\1\s*,\s*(?:mode\s*=\s*)?['"][wax]b?\+?['"]"""
)
_NODE_WRITE = re.compile(
    r"""\b(?:fs\.)?(?:writeFileSync|writeFile|appendFileSync)\(\s*(['"`])([^'"`$\n]+)\1"""
)


def script_writes(command: str) -> list[str]:
    """The files an inline script in ``command`` writes, as its literal paths say: Python's
    ``Path('x').write_text(…)``, ``p = Path('x')`` … ``p.write_text(…)``, ``open('x', 'w')``;
    node's ``fs.writeFileSync('x', …)`` (``python - <<'PY'`` and ``node -e`` edits). A path
    built at run time names no file we can tell."""
    if "write" not in command and "open(" not in command:
        return []
    found = [m.group(2) for m in _PY_PATH_WRITE.finditer(command)]
    for m in _PY_PATH_VAR.finditer(command):
        if re.search(rf"\b{re.escape(m.group(1))}\.write_(?:text|bytes)\(", command):
            found.append(m.group(3))
    found += [m.group(2) for m in _PY_OPEN_WRITE.finditer(command)]
    found += [m.group(2) for m in _NODE_WRITE.finditer(command)]
    return [p for p in dict.fromkeys(found) if not p.startswith(("/dev/", "/tmp/"))]


def _copies(operands: list[str]) -> list[tuple[str, str]]:
    """(source, where it goes) of each source of ``mv`` or ``cp`` with these ``operands``."""
    if len(operands) < 2:
        return []
    srcs, dst = operands[:-1], operands[-1]
    into = len(srcs) > 1 or dst.endswith("/") or _looks_like_dir(srcs[0], dst)
    return [
        (src, posixpath.join(dst, posixpath.basename(src.rstrip("/"))) if into else dst)
        for src in srcs
    ]


def _looks_like_dir(src: str, dst: str) -> bool:
    """Whether ``mv src dst`` moves into a folder: ``dst`` has no extension where ``src`` has."""
    return "." in posixpath.basename(src) and "." not in posixpath.basename(dst.rstrip("/"))


def _in_place(name: str, word: str) -> bool:
    if word.startswith("--in-place"):
        return True
    if name == "perl":
        return word.startswith("-") and not word.startswith("--") and "i" in word[1:]
    return word.startswith("-i")


def _script_files(name: str, words: list[str]) -> list[str]:
    """The files ``sed -i`` / ``perl -pi`` edit: the operands after the script."""
    has_script_option = False
    operands: list[str] = []
    rest = iter(words)
    for word in rest:
        if word.startswith("-") and word != "-":
            script = word in ("-e", "-f", "--expression", "--file")
            if script or (name == "perl" and "e" in word[1:]):
                has_script_option = True
                next(rest, None)  # the script
            continue
        operands.append(word)
    return operands if has_script_option else operands[1:]


CHANGERS = frozenset({"cd", "pushd", "set-location", "sl", "chdir"})
"""Commands that change the folder a chain's later commands run in."""


_WINDOWS_FOLDER = re.compile(r"(?i)^\s*(?:set-location|sl)\b|\b[a-z]:\\")


def _changer_words(piece: str, words: list[str] | None = None) -> list[str]:
    """A folder change's words: PowerShell's (its backslashes kept) for ``Set-Location`` or a
    Windows path (``cd C:\\Users\\a``), the shell's otherwise."""
    if _WINDOWS_FOLDER.search(piece):
        return _windows_words(piece)
    return words if words is not None else words_of(piece)


def _folder_named(words: list[str]) -> str | None:
    """The folder a ``cd`` / ``pushd`` / ``Set-Location`` stage goes to (its first operand;
    ``-Path x`` too), or None."""
    return next((w for w in words[1:] if not w.startswith("-")), None)


def folder_after(command: str, cwd: str | None, paths: Paths) -> str | None:
    """The folder ``command`` ends in: ``cwd`` after its ``cd``, ``pushd`` and
    ``Set-Location`` (``cd frontend; npx ng generate …`` runs in ``frontend``)."""
    here = cwd
    for _op, piece in split_chain(command):
        head = piece.split(None, 1)
        if head and head[0].lower() in CHANGERS:
            target = _folder_named(_changer_words(piece))
            here = paths.absolute(target, here) if target else here
    return here


def created_in_output(
    output: str, cwd: str | None, paths: Paths, command: str | None = None
) -> list[str]:
    """Files a generator says it created (``create app/models/user.rb``, ``* creating
    mix.exs``, ``CREATE src/app.ts (12 bytes)``, npm's ``Wrote to …/package.json``), inside
    the project. The output of a ``command`` that only runs git (and folder changes and
    reads: ``git add a && git commit -m x | tail``) names no file made: a commit's ``create
    mode`` lines, ``git status``'s ``new file:``, a log's messages are git's records."""
    said = any(w in output for w in ("reat", "REATE", "Wrote to", "go: creating"))
    if not said or (command is not None and _git_only(command)):
        return []
    tokens = [m.group(1).rstrip(":,") for m in _CREATED_LINE.finditer(output)]
    found = [paths.absolute(t, cwd) for t in tokens if ("." in t or "/" in t) and "://" not in t]
    found += [paths.absolute(m.group(1), cwd) for m in _WROTE.finditer(output)]
    if _GO_MOD.search(output):
        found.append(paths.absolute("go.mod", cwd))
    return [p for p in dict.fromkeys(found) if paths.inside(p)]


def _git_only(command: str) -> bool:
    """Whether every stage of ``command`` is a git command, a folder change or a read."""
    if "git" not in command:
        return False
    has_git = False
    for _op, piece in split_chain(command):
        words = words_of(piece)
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words.pop(0)
        name = posixpath.basename(words[0]).lower() if words else ""
        if name == "git":
            has_git = True
        elif name not in CHANGERS and not reads_only(piece):
            return False
    return has_git
