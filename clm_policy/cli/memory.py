"""``clm-policy init``, ``log`` and ``show``: create the memory repository and read its trail."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clm_policy.base.errors import InputError, plural, quote, short_path, shorten
from clm_policy.base.paths import home_as_tilde, shown_path
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import format_option, memory_option, session_option
from clm_policy.memory.layout import EVENTS

if TYPE_CHECKING:
    from clm_policy.memory.git.write import MemoryRepo


@click.command()
@click.argument("directory", metavar="[DIR]", required=False)
@click.option(
    "--claude-code",
    is_flag=True,
    help="Set this project up for Claude Code: write .clm-policy.yaml (policy claude-code: "
    "thresholds as shares of the model's window) and create the project's memory repository "
    "(DIR, which the file then names and is trusted to, else the project's default outside "
    "its work tree); then say how to install the hooks.",
)
@click.option(
    "--codex",
    is_flag=True,
    help="Set this project up for Codex CLI: the same files as --claude-code (the policy's "
    "shares fit Codex's window too); then say how to write .codex/hooks.json and have Codex "
    "trust it.",
)
@click.option(
    "--project",
    metavar="DIR",
    default=".",
    show_default=True,
    help="With --claude-code or --codex: the project's folder (where .clm-policy.yaml goes).",
)
@click.option(
    "--remote",
    metavar="NAME",
    help="With --claude-code or --codex: push handoffs to this remote (written into "
    ".clm-policy.yaml, which is then trusted: clm-policy trust).",
)
@click.option(
    "--mcp",
    "with_mcp",
    is_flag=True,
    help="With --claude-code: register clm-policy's MCP server in the project's .mcp.json too "
    "(clm-policy mcp --install --project).",
)
def init(
    directory: str | None,
    claude_code: bool,
    codex: bool,
    project: str,
    remote: str | None,
    with_mcp: bool,
) -> int:
    """Create a memory repository, or set a project up for Claude Code or Codex CLI.

    DIR becomes a new git repository from memory_template/. --claude-code and --codex write
    the project's .clm-policy.yaml and create its memory (DIR, which the file then names, or
    the project's default), then print the chosen agent's next steps. DIR must be new or
    empty; running init on an existing memory repository changes nothing.

    \b
    Examples:
      clm-policy init clm-memory
      clm-policy init --claude-code            # in a project: config + memory repository
      clm-policy init --claude-code ../memory  # ... the memory there, named in the config
      clm-policy init --claude-code --mcp      # ... and the MCP server in .mcp.json
      clm-policy init --codex                  # the same for Codex CLI

    Exit codes: 0 done (a memory repository already there is left as it is), 2 bad input
    (nothing written).
    """
    from clm_policy.memory.init import init_memory

    agent = claude_code or codex
    _check_usage(directory, agent, remote, with_mcp and not claude_code)
    if agent:
        directory = _set_project_up(project, remote, with_mcp, directory)
    assert directory is not None
    result = init_memory(directory)
    from clm_policy.agents.hooks.hook import warm_policy

    warm_policy(project if agent else os.getcwd())  # a first hook finds it compiled
    if not result.created:
        echo(f"{home_as_tilde(directory)}: already a clm-policy memory repository; nothing changed")
    else:
        echo(
            f"created memory repository {home_as_tilde(directory)} "
            f"(commit {str(result.commit)[:12]})"
        )
    if remote:
        _say_missing_remote(directory, remote)
    if claude_code and with_mcp:
        from clm_policy.agents.mcp.install import install as install_server

        echo("\n".join(install_server("project", Path(project).absolute())))  # as the others
    if agent:
        steps = _agent_steps(Path(project), claude_code=claude_code, codex=codex, mcp=with_mcp)
        for i, step in enumerate(steps):
            echo(f"{'next: ' if i == 0 else '      '}{step}")
    elif result.created:
        echo(f"next: clm-policy compact --memory {shlex.quote(directory)} --state STATE.json")
    return 0


def _set_project_up(project: str, remote: str | None, with_mcp: bool, directory: str | None) -> str:
    """Write the project's ``.clm-policy.yaml`` (naming ``remote`` and the memory ``directory``
    when given, and then trusted to: clm-policy trust), once nothing stands in the way; the
    memory repository to create (``directory``, else the project's)."""
    from clm_policy.config.project import (
        FILENAME,
        find_config,
        load_config,
        memory_path,
        write_config,
    )
    from clm_policy.formats.textio import path_kind

    root = Path(project)
    kind = path_kind(project)  # (a name too long to look up is not there either)
    if kind != "folder":
        what = "no such project folder" if kind == "missing" else "not a folder"
        raise InputError(f"{shorten(project)}: {what}")
    _check_setup(root, remote, with_mcp, directory)
    memory = _as_written(directory, root) if directory is not None else None
    where = root.absolute() / FILENAME
    if not write_config(root, remote, memory):
        echo(f"{shown_path(str(find_config(root) or where))}: already there; nothing changed")
    else:
        echo(f"wrote {shown_path(str(where))} (policy claude-code, profile coding)")
        chosen = [f"push handoffs to {remote}"] if remote else []
        chosen += [f"use the memory repository {memory}"] if memory else []
        if chosen:  # asked for here: the file is trusted to name them (clm-policy trust)
            from clm_policy.config.trusting import trust_config

            trust_config(str(where))
            echo(f"trusted it to {' and '.join(chosen)} (clm-policy trust --list)")
    return directory or memory_path(None, load_config(root))  # the project's


def _as_written(directory: str, root: Path) -> str:
    """``directory`` as the project's file names it: relative to the project's folder when it
    is in it or beside it (the file is shared), else absolute."""
    absolute = os.path.abspath(os.path.expanduser(directory))
    relative = os.path.relpath(absolute, root.absolute())
    return absolute if relative.startswith(f"..{os.sep}..") else relative


def _check_usage(directory: str | None, agent: bool, remote: str | None, mcp_alone: bool) -> None:
    """A usage error for a command line init cannot act on: nothing to do, or an option of a
    project's set-up without --claude-code or --codex (``mcp_alone``: --mcp without
    --claude-code)."""
    if not agent and directory is None:
        raise click.UsageError("give DIR, or --claude-code or --codex to set a project up")
    if not agent and remote:
        raise click.UsageError("--remote goes with --claude-code or --codex")
    if mcp_alone:
        raise click.UsageError("--mcp goes with --claude-code")
    given = click.get_current_context().get_parameter_source("project")
    if not agent and given is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--project goes with --claude-code or --codex")


def _check_setup(root: Path, remote: str | None, with_mcp: bool, directory: str | None) -> None:
    """Refuse, before anything is written, what would stop the setup halfway: a configuration
    there whose policy or profile cannot be loaded, a ``DIR`` that cannot be the memory
    repository, a ``--remote`` that is an option in disguise (``--upload-pack=...``), a
    ``--remote`` or ``DIR`` that a project's configuration already there does not name (init
    writes no file over it), then a project's ``.mcp.json`` that ``--mcp`` cannot merge
    into."""
    from clm_policy.agents.hooks.claude_settings import check_project
    from clm_policy.memory.git.run import check_name, run_git

    check_project(root)
    if directory is not None:
        from clm_policy.memory.init import check_target

        check_target(directory)
        _check_named(root, "memory", directory)
    if remote:
        check_name("remote", remote)
        is_name = "/" not in remote and ":" not in remote  # (a URL or a path is not checked)
        if is_name and run_git(root, ["check-ref-format", f"refs/remotes/{remote}/x"])[0] != 0:
            raise InputError(f"invalid remote {quote(remote)}: not a name git takes for a remote")
        _check_named(root, "remote", remote)
    if with_mcp:
        from clm_policy.agents.mcp.install import check

        check("project", root)


def _check_named(root: Path, key: str, value: str) -> None:
    """Refuse a ``remote`` or a memory ``DIR`` that the project's configuration, already
    there, does not name: init writes no file over it, and what it set up would go unused."""
    from clm_policy.config.project import find_config, from_file, load_config

    found = find_config(root)
    if found is None:
        return
    named = from_file(key, load_config(root))
    if key == "memory":
        same = named is not None and os.path.realpath(named) == os.path.realpath(value)
        value = _as_written(value, Path(os.path.dirname(found)))
    else:
        same = named == value
    if not same:
        raise InputError(
            f"{found}: already there, and init writes no file over it: add `{key}: {value}` "
            f"to it yourself, then run clm-policy trust {shlex.quote(found)}"
        )


def _say_missing_remote(directory: str, remote: str) -> None:
    """Say how to add ``remote`` to the memory repository when it is a name the repository
    does not know (a URL or a path needs nothing): handoffs are pushed from there."""
    from clm_policy.memory.git.run import run_git

    if "/" in remote or ":" in remote:
        return
    code, names, _ = run_git(directory, ["remote"])
    if code == 0 and remote not in names.split():
        echo(
            f"note: the memory repository has no remote {remote!r} yet; handoffs are pushed "
            f"from it: git -C {shlex.quote(directory)} remote add -- {shlex.quote(remote)} URL"
        )


def _agent_steps(project: Path, *, claude_code: bool, codex: bool, mcp: bool) -> list[str]:
    """What a person does after ``init`` for the agents chosen, in the project's folder (the
    commands that follow act on the current one: a ``cd`` first when it is another)."""

    steps = []
    if project.resolve() != Path.cwd().resolve():
        steps.append(f"cd {shlex.quote(str(project))}")
    if claude_code:
        steps.append("clm-policy hook claude-code --install --project   # Claude Code: the hooks")
        if not mcp:
            steps.append(
                "clm-policy mcp --install --project           # optional: the agent's MCP "
                "tools (handoff, status, memory)"
            )
    if codex:
        steps.append("clm-policy hook codex --install --project   # Codex: the hooks")
        steps.append(
            "codex   # trust this folder when Codex asks, then /hooks to review the hooks "
            "(untrusted ones never run)"
        )
    return steps


@click.command()
@memory_option()
@session_option("Only this session's commits.")
@click.option("--event", type=click.Choice(EVENTS), help="Only commits of this kind.")
@click.option(
    "--agent",
    metavar="ID",
    help="Only commits about this agent of a session (Clm-Agent-Id: a subagent's id, or main).",
)
@click.option(
    "--all", "all_refs", is_flag=True, help="Include every branch (handoffs made with --branch)."
)
@click.option("--limit", "-n", type=click.IntRange(min=1), metavar="N", help="At most N.")
@format_option("text", "json")
def log(
    memory: str,
    session: str | None,
    event: str | None,
    agent: str | None,
    all_refs: bool,
    limit: int | None,
    fmt: str,
) -> int:
    """The audit trail: every compaction and handoff, newest first, with why it happened.

    Reads all commits with one `git log` call and the Clm-* trailers git parses itself.

    \b
    Examples:
      clm-policy log --memory clm-memory
      clm-policy log --memory clm-memory --session demo --event handoff --format json
      clm-policy log --agent a9c9c4801cad78879        # what one subagent did

    Exit codes: 0 (no matching commits too), 2 bad input (not a memory repository, an unknown
    session), 141 output closed.
    """
    from clm_policy.memory.audit import read_log
    from clm_policy.memory.git.write import MemoryRepo

    with MemoryRepo(memory) as repo:
        entries = read_log(
            repo,
            session=session,
            event=event,
            limit=limit,
            rev="--all" if all_refs else "HEAD",
            agent=agent,
        )
        if not entries and session is not None:
            from clm_policy.memory.history import check_session_known

            check_session_known(repo, session, memory)  # a typo is bad input, as in `status`
    from clm_policy.report.auditlog import NOTHING, render

    text = render(entries, fmt)
    if text is None:
        echo(NOTHING, err=True)
    else:
        echo(text)
    return 0


@click.command()
@memory_option()
@click.argument("ref", metavar="[REF]", required=False)
@click.option(
    "--search",
    metavar="TEXT",
    help="Instead of REF: the memory topics whose text holds TEXT (case-insensitive), most "
    "hits first, each with its tags, date and first lines — the agent's memory_search tool.",
)
def show(memory: str, ref: str | None, search: str | None) -> int:
    """Show one commit's record: REF is a commit or branch (from `clm-policy log`) or a path
    in the repository (sessions/ID/handoffs/001.md, manifests/....json); or, with --search,
    find the memory topics that hold a text.

    For a commit, prints what it recorded: the compaction summary, the handoff, the agent's
    own summary, an agent's record, a topic; a session's start or end, a signal (its JSON
    files). A path is read
    from the checked-out branch, else from the newest branch that has it (a handoff made with
    --branch). --search lists the topics (topics/KEY.md) as the MCP tool memory_search
    finds them; `clm-policy show topics/KEY.md` shows one whole.

    \b
    Examples:
      clm-policy show --memory clm-memory 3f2a9c1d
      clm-policy show --memory clm-memory sessions/demo/handoffs/001.md
      clm-policy show --memory clm-memory --search sqlite

    Exit codes: 0 (no topic found too), 2 bad input (no such commit or file, not a memory
    repository, an empty search, REF and --search both or neither), 141 output closed.
    """
    from clm_policy.memory.git.confine import MAX_READ
    from clm_policy.memory.git.run import check_name
    from clm_policy.memory.git.write import MemoryRepo

    if (ref is None) == (search is None):
        raise click.UsageError("give either REF (a commit or a path) or --search TEXT")
    if search is not None:
        return _search(memory, search)
    assert ref is not None
    check_name("commit or path", ref)
    with MemoryRepo(memory) as repo:
        named_path = ref.startswith(("sessions/", "manifests/", "topics/"))
        commit = None if named_path else repo.resolve_commit(ref)
        if commit is None:
            _show_path(repo, memory, ref)
            return 0
        wanted = documents(repo.changed_paths(commit))
        if not wanted:
            raise InputError(f"{memory}: commit {ref} changes no file")
        sizes = {path: size for path, _, size in repo.blobs(*wanted, rev=commit)}
        for path in wanted:
            echo(f"# {path} @ {commit[:12]}\n")
            if sizes.get(path, 0) > MAX_READ:
                echo(_too_large(memory, commit, path))
                continue
            echo(repo.show_file(path, commit) or "")
    return 0


def _search(memory: str, query: str) -> int:
    """``show --search``: the topics that hold ``query``, a paragraph each (the key, its tags
    and date, its first characters on one line); none said on standard error. Exit 0."""
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.store import search_topics

    with MemoryRepo(memory) as repo:
        found = search_topics(repo, query)
    if not found:
        echo(f"no memory topic holds {quote(query)}", err=True)
        return 0
    blocks = []
    for hit in found:
        tags = ", ".join(hit["tags"])
        head = f"topics/{hit['key']}.md" + (f"  [{tags}]" if tags else "")
        head += f"  {hit['updated_at']}" if hit["updated_at"] else ""
        blocks.append(f"{head}\n  {' '.join(str(hit['excerpt']).split())}")
    echo("\n\n".join(blocks))
    return 0


def documents(paths: list[str]) -> list[str]:
    """What a commit of any kind records, for a reader: its Markdown documents (a
    compaction's summary, a handoff, an agent's summary or record, a topic; not the
    regenerated index), else its JSON files (a session's start or end, a signal), else
    whatever else it changed (append-only logs)."""
    markdown = [p for p in paths if p.endswith(".md") and p != "MEMORY.md"]
    data = [p for p in paths if p.endswith(".json")]
    return markdown or data or list(paths)


def _show_path(repo: MemoryRepo, memory: str, ref: str) -> None:
    """The file ``ref`` from the checked-out branch, else from the newest commit on any
    branch: an empty one as it is, a folder or a file past 16 MiB said so, never read whole."""
    from clm_policy.memory.git.confine import MAX_READ
    from clm_policy.memory.git.write import check_path

    path = check_path(ref, "read")
    rev, entries = "HEAD", _entries(repo, path, "HEAD")
    if not entries:
        rev = repo.git("rev-list", "-1", "--all", "--", path, check=False)
        entries = _entries(repo, path, rev) if rev else {}
    if not entries:
        empty = " (it has no commit yet)" if repo.readable_head() is None else ""
        if "/" not in ref and not ref.endswith(".md"):
            raise InputError(f"{memory}: no commit or file named {quote(ref)}{empty}")
        raise InputError(f"{memory}: no file {short_path(path)} on any branch{empty}")
    if path not in entries:  # what is under it: a folder
        inside = sorted({_child(name, path) for name in entries})
        shown = ", ".join(inside[:10]) + (f", ... ({len(inside)} in all)" if inside[10:] else "")
        raise InputError(f"{memory}: {path} is a folder; show one of its files: {shown}")
    if entries[path] > MAX_READ:
        raise InputError(_too_large(memory, rev, path))
    if rev != "HEAD":
        echo(f"# {path} @ {rev[:12]} (not on the checked-out branch)\n")
    text = repo.show_file(path, rev) or ""  # (an empty file is shown empty)
    note = version_note(path, text)
    if note:
        echo(f"clm-policy: {note}", err=True)
    echo(text)


def _entries(repo: MemoryRepo, path: str, rev: str) -> dict[str, int]:
    """The files at ``path`` at ``rev`` (it alone, or what is under a folder) by size."""
    if rev == "HEAD" and repo.readable_head() is None:  # (no commit yet)
        return {}
    return {name: size for name, _, size in repo.blobs(path, rev=rev)}


def _child(name: str, folder: str) -> str:
    """The entry of ``folder`` that ``name`` is, or is under (a folder's ends in ``/``)."""
    first, under, _ = name[len(folder) + 1 :].partition("/")
    return first + under


def _too_large(memory: str, rev: str, path: str) -> str:
    from clm_policy.memory.git.confine import MAX_READ

    return (
        f"{memory}: {path} is larger than {MAX_READ // 1024 // 1024} MiB: not shown (git -C "
        f"{memory} show {rev[:12]}:{path} reads it)"
    )


def version_note(path: str, text: str) -> str | None:
    """The line saying a manifest or a state.json is of an older schema version (or None)."""
    import json

    from clm_policy.memory.migrate import kind_of
    from clm_policy.models.versions import upgrade

    kind = kind_of(path)
    if kind is None:
        return None
    try:
        data = json.loads(text)
        read = upgrade(kind, data, path) if isinstance(data, dict) else None
    except (ValueError, InputError):
        return None  # shown as it is; the readers that use it say what is wrong
    return read.note(path) if read is not None and read.upgraded else None


@click.command()
@memory_option()
@click.option("--dry-run", is_flag=True, help="Say what would be rewritten; write nothing.")
def migrate(memory: str, dry_run: bool) -> int:
    """Rewrite the memory repository's manifests and session states in the current schema
    version, in one commit.

    Every reader upgrades an older document as it reads it (and says so); this makes the
    repository current for good. Runs again harmlessly: a current repository gets no commit.

    \b
    Examples:
      clm-policy migrate --memory clm-memory --dry-run
      clm-policy migrate --memory clm-memory

    Exit codes: 0 migrated (or nothing to migrate), 2 bad input (nothing written).
    """
    from clm_policy.base.termsafe import one_line
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.migrate import migrate as run_migration

    with MemoryRepo(memory) as repo:
        done = run_migration(repo, dry_run=dry_run)
    for d in done.documents:
        echo(f"{one_line(d.path)}: version {d.found} -> {d.now}")
    of_all = f"{len(done.documents):,} of {plural(done.checked, 'document')}"
    if not done.checked:
        echo(f"{memory}: no documents yet; nothing to migrate")
    elif not done.documents:
        current = "1 document is" if done.checked == 1 else f"all {done.checked:,} documents are"
        echo(f"{memory}: {current} current; nothing to migrate")
    elif dry_run:
        echo(f"dry run: {of_all} would be rewritten")
    else:
        echo(f"migrated {of_all}: commit {str(done.commit)[:12]}")
    return 0
