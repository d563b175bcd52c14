"""The state a session's commands leave behind them, beside the files: git (branches, commits,
pushes and their refusals, remotes, stashes, resets, conflicts) and processes (started in the
background, stopped), read from each command and its output. A successor needs it: a push
rejected by push protection is the blocker, a server the agent killed must be restarted, a
removed ``origin`` or a force push still owed changes what it may do next.

:func:`facts_of` gives the facts of one run, each one line; :func:`refusal` tells a named
refusal (a rejected push, a permission or authentication failure) — a blocker, not a failing
check.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from clm_policy.base.commands import command_line
from clm_policy.base.errors import clipped_line
from clm_policy.transcripts.files import CHANGERS
from clm_policy.transcripts.results import FAILED, PASSED, split_chain, words_of

_REFUSALS = (
    ("push protection", re.compile(r"push protection|GH013|cannot contain secrets", re.I)),
    ("repository rule", re.compile(r"repository rule violations|protected branch", re.I)),
    ("non-fast-forward", re.compile(r"non-fast-forward|fetch first|\[rejected\]", re.I)),
    (
        "authentication",
        re.compile(
            r"Authentication failed|Permission denied \(publickey|could not read Username|"
            r"403 Forbidden|401 Unauthorized|invalid credentials|requires authentication",
            re.I,
        ),
    ),
    ("permission", re.compile(r"permission denied|access denied|EACCES|EPERM", re.I)),
    ("rate limit", re.compile(r"rate limit|too many requests|\b429\b", re.I)),
)
_COMMIT_LINE = re.compile(r"^\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.M)
_COMMITTED = re.compile(r"^committed on (\S+?)(?: \(amend\))?: ([0-9a-f]{7,40}) ")
"""A commit's fact (:func:`facts_of`): its branch and hash."""
_PUSH_OWN = re.compile(
    r"failed to push some refs|\[(?:remote )?rejected\]|remote rejected|has no upstream branch|"
    r"src refspec \S+ does not match|does not appear to be a git repository|"
    r"Could not read from remote repository|unable to access '|Permission to \S+ denied|"
    r"no configured push destination|The requested URL returned error|RPC failed|"
    r"hook declined",
    re.I,
)
"""What only a push that ran and failed prints (beside the named refusals but the generic
permission and rate-limit ones, which any command may print)."""
_PUSH_TO = re.compile(r"^To \S+", re.M)
_PUSH_RANGE = re.compile(
    r"^\s*[+ ]?\s*([0-9a-f]{7,40})\.\.\.?([0-9a-f]{7,40})\s+(\S+)\s+->\s+(\S+)", re.M
)
_PUSH_DONE = re.compile(r"\[new (?:branch|tag)\]|Everything up-to-date", re.I)
_CONFLICT = re.compile(r"^CONFLICT \([^)]*\): .*?(?:in|of) (\S+)", re.M)
_STATUS_LINE = re.compile(r"^(?:[ MADRCU?!]{2}) (.+)$", re.M)
_LONG_STATUS_LINE = re.compile(
    r"^\t(?:(?:modified|new file|deleted|renamed|both modified):\s+)?(.+)$"
)
_BRANCH_LINE = re.compile(r"^## ([^\s.]+)", re.M)
_ON_BRANCH = re.compile(r"^On branch (\S+)", re.M)
_KILLERS = frozenset({"kill", "pkill", "killall", "taskkill", "stop-process", "fuser"})
_SERVERS = re.compile(
    r"\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|preview)\b|\bvite\b(?!\s+build)|"
    r"\bnext\s+(?:dev|start)\b|\buvicorn\b|\bgunicorn\b|\bflask\s+run\b|\bmanage\.py\s+runserver\b|"
    r"\bhttp\.server\b|\bserve\b|\brails\s+s(?:erver)?\b|\bdocker(?:-|\s+)compose\s+up\b|"
    r"\bcargo\s+(?:run|watch)\b|\bnodemon\b|\bjupyter\b|\bstreamlit\s+run\b",
    re.I,
)
_LOCAL_URL = re.compile(
    r"\bhttps?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\])(?::\d{2,5})?"
    r"(?:/[^\s?#'\"<>()\[\]`]*)?",
    re.I,
)
_SERVING = re.compile(
    r"\b(?:local|listen\w*|running|serving|server|ready|start\w*|available)\b", re.I
)
_PORT_TAKEN = re.compile(r"\bport (\d{2,5}) is (?:already )?in use", re.I)
_OUTPUT_FILE = re.compile(r"tasks[/\\](\w+)\.output\b")
_MISSING = (
    ("command", re.compile(r"(?:^|: )([\w.+-]{1,40}): command not found\s*$", re.M)),
    ("command", re.compile(r"^\S*sh: \d+: ([\w.+-]{1,40}): not found\s*$", re.M)),
    ("command", re.compile(r"command not found: ([\w.+-]{1,40})\s*$", re.M)),
    (
        "command",
        re.compile(
            r"'([\w.+-]{1,40})' is not recognized as (?:an internal or external command|the "
            r"name of a cmdlet)|The term '([\w.+-]{1,40})' is not recognized as"
        ),
    ),
    ("Node module", re.compile(r"Cannot find (?:module|package) '((?:@[\w.-]+/)?[\w.-]+)'")),
    ("Python module", re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")),
)
"""What a failed run says is not there: a command (bash, zsh, cmd, PowerShell), a Node module
or package (bare names only: ``Cannot find module './x'`` is a file), a Python module."""
_INSTALLERS = re.compile(
    r"\b(?:npm|pnpm|yarn|bun|pip3?|uv|poetry|brew|apt(?:-get)?|dnf|winget|choco|scoop|cargo|"
    r"go|gem|volta|corepack|npx)\b[^|;&\n]*\b(?:i|install|add|enable|prepare)\b",
    re.I,
)
LINE = 160


def refusal(output: str) -> str | None:
    """The kind of named refusal ``output`` reports (``push protection``, ``authentication``
    …), or None."""
    return next((name for name, pattern in _REFUSALS if pattern.search(output[-4000:])), None)


def _push_refusal(output: str) -> str | None:
    """The kind of refusal a push's ``output`` shows as the push's own (``push protection``,
    ``non-fast-forward``, ``authentication`` …; ``failed`` for another failure only a push
    prints: ``failed to push some refs``, ``has no upstream branch``), or None."""
    own = next((name for name, pattern in _REFUSALS[:4] if pattern.search(output[-4000:])), None)
    return own or ("failed" if _PUSH_OWN.search(output[-4000:]) else None)


def _pushed_tips(output: str) -> list[tuple[str, str]]:
    """(branch, the commit it now points to) of each ref a push's ``output`` says it updated
    (``f8158f11..2935d342  main -> main``, under its ``To <remote>`` line; a fetch's ``From``
    lines are not a push's)."""
    tips: list[tuple[str, str]] = []
    for block in _PUSH_TO.split(output)[1:]:
        block = re.split(r"^From \S+", block, maxsplit=1, flags=re.M)[0]
        tips += [
            (m.group(4) if m.group(3) == "HEAD" else m.group(3), m.group(2))
            for m in _PUSH_RANGE.finditer(block)
        ]
    return tips


def _reason(output: str) -> str:
    """The output's line that says why (the refusal's, else the last ``error``/``fatal``)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for _name, pattern in _REFUSALS:
        for line in lines:
            if pattern.search(line):
                return clipped_line(line.removeprefix("remote: ").removeprefix("! "), 200)
    for line in reversed(lines):
        if re.match(r"(?i)(?:error|fatal|remote: error)\b", line):
            return clipped_line(line, 200)
    return clipped_line(lines[-1], 200) if lines else ""


def served_at(output: str) -> str | None:
    """Where a process the agent keeps running says it serves (``http://localhost:5174/``,
    from a line that says so: ``Local:``, ``running on``, ``listening``), with the port it found
    taken (``Port 5173 is in use``); None when its output names no local address. A query
    string (a notebook's token) is left out."""
    for line in output.splitlines():
        url = _LOCAL_URL.search(line) if _SERVING.search(line) else None
        if url:
            taken = _PORT_TAKEN.search(output)
            return url.group(0) + (f" (port {taken.group(1)} was in use)" if taken else "")
    return None


def missing_of(output: str) -> list[str]:
    """What a failed run's ``output`` says is not installed, each as ``the command `pnpm```,
    ``Node module `ws```, ``Python module `yaml```, once, in the order said."""
    found: dict[str, None] = {}
    text = output[-4000:]
    for kind, pattern in _MISSING:
        for m in pattern.finditer(text):
            name = next(g for g in m.groups() if g)
            if kind == "command" and name.lower() in ("line", "bash", "sh", "zsh", "sudo"):
                continue
            found[f"the command `{name}`" if kind == "command" else f"{kind} `{name}`"] = None
    return list(found)


def supplies(command: str, missing: str) -> bool:
    """Whether ``command`` (which succeeded) shows ``missing`` is there now: it installs it
    (``npm install ws``, ``pip install pyyaml`` for ``yaml`` aside), or runs the command."""
    name = missing.split("`")[1]
    if name not in command:  # neither run nor installed: the common case, without parsing
        return False
    words = words_of(command)
    if missing.startswith("the command") and words and _program(words[0]) == name.lower():
        return True
    return bool(_INSTALLERS.search(command)) and name in words


def _program(word: str) -> str:
    """The program a command's first word names: no folder, no Windows suffix, lower case."""
    return re.sub(r"\.(?:exe|cmd|bat)$", "", word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower())


def output_file_shell(path_or_command: str) -> str | None:
    """The background shell whose output file (``…/tasks/<id>.output``) a command or a read
    opens, or None."""
    m = _OUTPUT_FILE.search(path_or_command)
    return m.group(1) if m else None


def facts_of(command: str, output: str, status: str, background: bool = False) -> list[str]:
    """The environment facts of one run of ``command`` (its ``output`` and verdict ``status``);
    ``background``: the agent started it to keep running."""
    facts: list[str] = []
    if background:
        facts.append(f"started in the background: `{command_line(command, LINE)}`")
    before = gated = False  # a stage before this one may have stopped the chain (``a && b``)
    operands: list[str] = []  # the paths and patterns earlier stages name
    reason = _reason(output) if status == FAILED else ""
    stages = split_chain(command)
    for op, piece in stages:
        gated = gated or (op == "&&" and before)
        words = words_of(piece)
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]
        if not words:
            continue
        head = _program(words[0])
        before = before or head not in CHANGERS  # (a folder change is no step of the work)
        if head == "git":
            # the failure names what an earlier stage was given (``no matches found:
            # apps/*/package.json`` of ``git add apps/*/package.json``): this one did not run
            blamed = gated and any(w in reason and w not in words for w in operands)
            facts += _git(words[1:], piece, output, status, gated, blamed)
        elif head in _KILLERS and status == FAILED and len(stages) == 1:
            # (pkill's exit 1: nothing matched; kill's: no such process)
            facts.append(f"no process stopped: `{clipped_line(piece, LINE)}` failed")
        elif head in _KILLERS:
            facts.append(f"stopped a process: `{clipped_line(piece, LINE)}`")
        elif not background and piece.rstrip().endswith("&") and _SERVERS.search(piece):
            facts.append(f"started in the background: `{clipped_line(piece, LINE)}`")
        operands += [
            w
            for w in words[2 if head == "git" else 1 :]
            if not w.startswith("-") and len(w) > 2 and any(c in w for c in "/.*")
        ]
    if not background and command.rstrip().endswith("&") and not facts:
        facts.append(f"started in the background: `{command_line(command, LINE)}`")
    switched = _SWITCHED.search(output) if "Switched to" in output else None
    if switched and not any("switched to branch" in f for f in facts):
        # a script that switched the branch (spec-kit's create-new-feature.sh): git said so
        made = "created and switched" if switched.group(1) else "switched"
        facts.append(f"{made} to branch {switched.group(2)}")
    return list(dict.fromkeys(facts))


_SWITCHED = re.compile(r"^Switched to (a new )?branch '([^'\n]+)'", re.M)


def _git(
    args: list[str], piece: str, output: str, status: str, gated: bool, blamed: bool
) -> list[str]:
    """The facts of one git stage; ``gated``: an earlier stage (``a && git …``) may have
    stopped the chain; ``blamed``: the failure the output shows is an earlier stage's."""
    while args and args[0] in ("-C", "-c") and len(args) > 1:
        args = args[2:]
    if not args:
        return []
    sub, rest = args[0], args[1:]
    flags = {a for a in rest if a.startswith("-")}
    plain = [a for a in rest if not a.startswith("-")]
    shown = clipped_line(piece, LINE)
    if sub == "push":
        return _push(shown, flags, output, status, gated)
    made = _COMMIT_LINE.search(output) if sub == "commit" else None
    if made:  # the commit went through, whatever a later stage of the chain did
        amend = " (amend)" if "--amend" in flags else ""
        what = f"{made.group(2)} {clipped_line(made.group(3), 100)}"
        return [f"committed on {made.group(1)}{amend}: {what}"]
    if status == FAILED:
        if blamed:
            return []
        if sub in ("merge", "rebase", "cherry-pick", "pull", "stash") and _CONFLICT.search(output):
            files = ", ".join(m.group(1) for m in _CONFLICT.finditer(output))
            return [f"conflict after `{shown}`: {clipped_line(files, LINE)}"]
        if sub in ("commit", "checkout", "switch", "merge", "rebase", "pull", "remote", "reset"):
            return [f"failed: `{shown}` — {_reason(output)}"]
        return []
    if sub == "commit":
        return [f"committed: `{shown}`"] if status == PASSED else []
    if sub in ("checkout", "switch") and ({"-b", "-B", "-c", "-C"} & flags) and plain:
        return [f"created and switched to branch {plain[0]}"]
    if sub in ("checkout", "switch") and plain and not ({"--", "."} & set(rest)):
        if len(plain) == 1 and "/" not in plain[0] and "." not in plain[0]:
            return [f"switched to branch {plain[0]}"]
        return []
    if sub == "branch" and plain and ({"-d", "-D", "--delete"} & flags):
        return [f"deleted branch {plain[0]}"]
    if sub == "remote" and plain:
        said = {"remove": "removed", "rm": "removed", "add": "added"}.get(plain[0])
        said = "changed the URL of" if plain[0] == "set-url" else said
        return [f"{said} remote {plain[1]}"] if said and len(plain) > 1 else []
    if sub == "stash":
        action = plain[0] if plain else "push"
        if action in ("push", "save"):
            return ["stashed uncommitted changes (git stash)"]
        verb = {"pop": "restored", "apply": "restored", "drop": "dropped", "clear": "dropped"}
        return [f"{verb[action]} stashed changes (git stash {action})"] if action in verb else []
    if sub == "reset" and "--hard" in flags:
        return [f"reset the working tree: `{shown}`"]
    if sub in ("merge", "rebase", "cherry-pick", "revert") and status == PASSED:
        return [f"ran `{shown}`"]
    if sub == "tag" and plain and not flags & {"-l", "--list", "-d"}:
        return [f"tagged {plain[0]}"]
    if sub == "status":
        return _status(output)
    return []


def _push(shown: str, flags: set[str], output: str, status: str, gated: bool) -> list[str]:
    """A push's fact. It is refused only when the output shows the push's own refusal, or it
    failed as the command's first stage (``git push`` alone); a push after ``&&`` whose output
    shows no push of its own did not run (an earlier stage failed): no fact. When the output
    names the commit a branch now points to (``old..new  main -> main``), the line says so."""
    kind = _push_refusal(output)
    tips = _pushed_tips(output)
    done = bool(tips) or bool(_PUSH_DONE.search(output))
    if kind is None and not gated and not done:  # the push alone: its failure is its own
        kind = refusal(output) or ("failed" if status == FAILED else None)
    if kind is not None:
        return [f"push refused ({kind}): `{shown}` — {_reason(output)}"]
    if status == FAILED and not done:
        return []  # an earlier stage of the chain failed: the push did not run
    forced = "force-" if flags & {"-f", "--force", "--force-with-lease"} else ""
    to = ", ".join(f"{branch} up to {tip}" for branch, tip in tips)
    return [f"{forced}pushed: `{shown}`" + (f" ({to})" if to else "")]


def settle(facts: list[str], new: list[str], elsewhere: Callable[[str], bool]) -> list[str]:
    """The environment facts once one run's ``new`` facts (in order) follow ``facts``.

    - A commit (``committed on main: 513c16d …``, its output showed ``[branch hash]``) makes
      each earlier ``git status`` snapshot of the same repository stale: dropped (what it
      listed may be committed now). ``elsewhere(fact)`` tells an earlier snapshot taken in
      another repository (kept).
    - A push whose output names a branch's new tip (``pushed: … (main up to 2935d342)``)
      marks that commit ``(pushed)``, and the commits on that branch before it back to the
      previous push, a reset, a rebase, a branch switch or an amended commit.
    """
    out = list(facts)
    for fact in new:
        if _COMMITTED.match(fact):
            out = [f for f in out if not (_STATUS_FACT in f and not elsewhere(f))]
        pushed = _PUSHED_FACT.match(fact)
        tips = re.findall(r"(\S+) up to ([0-9a-f]+)", pushed.group(1)) if pushed else []
        marked = [_mark_pushed(out, branch, tip) for branch, tip in tips]
        if pushed and all(marked):  # the commit lines say it: the push's line needs no tip
            fact = fact[: pushed.start(1) - 2]
        out.append(fact)
    return out


_STATUS_FACT = "at the last `git status`"
_PUSHED_FACT = re.compile(
    r"^(?:force-)?pushed: .* \((\S+ up to [0-9a-f]{7,40}(?:, \S+ up to [0-9a-f]{7,40})*)\)$"
)
_HISTORY = ("pushed:", "force-pushed:", "reset the working tree", "ran `git rebase", "switched to")


def _mark_pushed(facts: list[str], branch: str, tip: str) -> bool:
    """Mark (in place) the commit ``tip`` of ``branch`` and those before it (:func:`settle`);
    whether ``tip`` is among the commits recorded (or marked already)."""
    found = False
    for i in range(len(facts) - 1, -1, -1):
        fact = facts[i]
        m = _COMMITTED.match(fact)
        if m and m.group(1) == branch:
            if found or tip.startswith(m.group(2)) or m.group(2).startswith(tip):
                if fact.endswith(" (pushed)"):
                    return True
                found = True
                facts[i] = fact + " (pushed)"
                if "(amend)" in fact:
                    return True
        elif found and (fact.startswith(_HISTORY) or "switched to branch" in fact):
            return True
    return found


def _status(output: str) -> list[str]:
    """What ``git status`` (long or short form) showed: the branch and the uncommitted files."""
    branch = _BRANCH_LINE.search(output) or _ON_BRANCH.search(output)
    if "Changes not staged" in output or "Untracked files" in output or "Changes to be" in output:
        lines = map(_LONG_STATUS_LINE.match, output.splitlines())
        files = [m.group(1).strip() for m in lines if m]
    else:
        files = [m.group(1).strip() for m in _STATUS_LINE.finditer(output)]
    out = []
    where = f" on branch {branch.group(1)}" if branch else ""
    if files:
        shown = ", ".join(files[:12]) + (f" and {len(files) - 12} more" if len(files) > 12 else "")
        out.append(f"uncommitted at the last `git status`{where}: {clipped_line(shown, 400)}")
    elif "nothing to commit" in output or (branch and not files):
        out.append(f"working tree clean at the last `git status`{where}")
    return out
