"""clm_policy.lifecycle.prbody: a handoff branch's pull-request title and body
(``handoff --branch --pr-body FILE``) — the exact body (golden), what changed since the
session's previous handoff, the recall, redaction, the review flow with a real bare remote,
and bad input refused before anything is committed.

Set CLM_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change, then review the
diff.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from clm_policy.base.errors import InputError
from clm_policy.lifecycle import prbody
from clm_policy.lifecycle.handoff import build_manifest
from clm_policy.lifecycle.pipelines import Provenance, run_handoff
from clm_policy.lifecycle.prbody import OPTIONAL, TITLES, _empty, diff_manifests
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.models.manifest import HandoffManifest
from clm_policy.models.state import SessionState
from clm_policy.models.state_io import state_from

from conftest import REPO, CliResult, git, golden, invoke, run_process
from forge import MENTION, REFERENCE, notifying, parse, sections, unexpected

EXAMPLE = REPO / "docs" / "examples" / "session-state.json"
FIRST = datetime(2026, 8, 4, 12, 0, tzinfo=UTC)
SECOND = datetime(2026, 8, 4, 13, 30, tzinfo=UTC)
AWS = "AKIAZ7Q3X9P2M4N6R8T0"
GITHUB = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
PASSWORD = "Xk9mP2vL7qR4nW8tZ3"


def example(**changes: Any) -> dict[str, Any]:
    """docs/examples/session-state.json with ``changes``."""
    return {**json.loads(EXAMPLE.read_text()), **changes}


def hand_off(
    memory: Path, data: dict[str, Any], now: datetime, body: Path | None, **why: Any
) -> str:
    """A handoff of ``data`` on its own branch (with its body written to ``body``): its ref."""
    with MemoryRepo(memory) as repo:
        done = run_handoff(
            repo,
            state_from(data),
            why=Provenance(**why),
            branch=True,
            now=now,
            pr_body=None if body is None else str(body),
        )
    return done.ref


def handoff(memory: Path, state: Path, *args: str) -> CliResult:
    """``clm-policy handoff --memory MEMORY --state STATE ARGS``, in-process."""
    return invoke("handoff", "--memory", str(memory), "--state", str(state), *args)


def refs(memory: Path) -> str:
    return git(memory, "for-each-ref", "--format=%(refname) %(objectname)")


# -- the body -------------------------------------------------------------------------------


def test_the_body_of_a_second_handoff(memory: Path, tmp_path: Path) -> None:
    """Golden: the facts, what changed since the first handoff, the recall, the manifest."""
    hard = {"rule": "hard_handoff", "rationale": "context 262144 >= hard limit 250000"}
    first = hand_off(memory, example(), FIRST, None, **hard)
    later = example(
        step_index=60,
        status="blocked",
        tokens={**example()["tokens"], "context_tokens": 301000, "total_tokens": 9000000},
        blockers=["CI is red on main"],
        verified=["login still returns 200", "refresh flow"],
        not_verified=[],
        changed_artifacts=["tests/test_auth.py", "src/auth/middleware.py", "src/auth/refresh.py"],
    )
    body = tmp_path / "pr.md"
    second = hand_off(
        memory,
        later,
        SECOND,
        body,
        rule="hard_handoff",
        rationale="context 301000 >= hard limit 250000",
        extra_trailers={"Clm-Recall-Agent": "0.93 (13/14 facts)"},
    )
    text = body.read_text()
    for ref, name in ((first, "<first>"), (second, "<second>")):
        text = text.replace(git(memory, "rev-parse", ref).strip()[:12], name)
    golden("pr_body.md", text)
    since = text[text.index("## Since the previous handoff") : text.index("\n## Goal")]
    docs = (REPO / "docs" / "memory.md").read_text()
    assert f"```markdown\n{since.replace('<first>', '948cc6513b11')}```\n" in docs
    with MemoryRepo(memory) as repo:
        request = prbody.pull_request(repo, second)
    assert body.read_text() == request.body
    assert request.title == (
        "Handoff auth-refactor-7 step 60 (blocked): Move session tokens from cookies to the "
        "Authorization header"
    )
    assert (request.head, request.base) == ("clm/handoff/auth-refactor-7-2", "main")
    assert [p.name for p in tmp_path.iterdir() if p.name != "mem"] == ["pr.md"]  # no temp file


def test_a_first_handoff_says_so_with_its_recall(memory: Path, tmp_path: Path) -> None:
    body = tmp_path / "pr.md"
    ref = hand_off(memory, example(), FIRST, body, rule="hard_handoff")
    commit = git(memory, "rev-parse", ref).strip()
    lines = body.read_text().splitlines()
    assert lines[:15] == [
        "Handoff of session `auth-refactor-7` at step 42 (rule `hard_handoff`), committed by "
        "clm-policy.",
        "",
        "- Branch: `clm/handoff/auth-refactor-7-1` into `main`",
        f"- Commit: `{commit[:12]}`",
        "- Manifest: `manifests/20260804T120000Z_auth-refactor-7.json`",
        "- For people: `sessions/auth-refactor-7/handoffs/001.md`",
        "- The agent's handoff: none: the agent wrote no handoff, the record below is all there is",
        "- Redactions: 0 secrets replaced before the commit",
        "",
        "## Since the previous handoff",
        "",
        "This is the session's first handoff: there is nothing to compare it with.",
        "",
        "## Goal",
        "",
    ]
    # the rest is the handoff's own rendering for people, without its first heading
    shown = git(memory, "show", f"{ref}:sessions/auth-refactor-7/handoffs/001.md")
    assert "\n".join(lines[13:]) + "\n" == shown.split("\n", 2)[2]


def test_the_previous_handoff_may_be_on_the_base_branch(memory: Path, tmp_path: Path) -> None:
    """A handoff committed on main, then one on a branch: the branch's body compares them."""
    with MemoryRepo(memory) as repo:
        run_handoff(repo, state_from(example()), now=FIRST)
    body = tmp_path / "pr.md"
    hand_off(memory, example(step_index=50, not_verified=[]), SECOND, body)
    since = body.read_text().split("## Since the previous handoff\n\n")[1].split("\n## ")[0]
    first = git(memory, "rev-parse", "main").strip()[:12]
    assert since == (
        "Compared with the previous handoff, `sessions/auth-refactor-7/handoffs/001.md` at "
        f"step 42 (commit `{first}`):\n"
        "\n"
        "- **Next safe action** changed:\n"
        "  - was: Verify: refresh flow\n"
        "  - now: Unknown: the session states no next step. Last being done: ran pytest "
        "tests/test_auth.py: 12 passed, 1 failed\n"
        "- **Not verified** removed: refresh flow\n"
        "\n"
        "Unchanged: Goal, Status, Blockers, Decision rationale, Verified, Constraints, "
        "Decisions, Changed artifacts, Commands and results, Source of truth, Assumptions and "
        "risks, Memory keys, Token snapshot, Last message.\n"
    )


def test_the_same_state_a_step_later_changes_nothing(memory: Path, tmp_path: Path) -> None:
    """(At the same step the second handoff commits nothing: no pull request at all.)"""
    hand_off(memory, example(), FIRST, None)
    body = tmp_path / "pr.md"
    hand_off(memory, example(step_index=43), SECOND, body)
    assert "\n\nNo field changed (the timestamp aside).\n\n## Goal\n" in body.read_text()


def test_only_the_sessions_own_handoffs_count(memory: Path, tmp_path: Path) -> None:
    """Another session's handoff branch (even one whose id starts the same) is no previous."""
    hand_off(memory, example(session_id="auth-refactor-7-b"), FIRST, None)
    body = tmp_path / "pr.md"
    hand_off(memory, example(), SECOND, body)
    assert "This is the session's first handoff" in body.read_text()


def test_a_long_manifest_gives_way_to_a_pointer(memory: Path, tmp_path: Path) -> None:
    hand_off(memory, example(), FIRST, None)
    commands = [f"step {i}: " + "x" * 300 for i in range(250)]
    body = tmp_path / "pr.md"
    hand_off(memory, example(commands_and_results=commands, step_index=43), SECOND, body)
    text = body.read_text()
    assert len(text) < prbody.BODY_LIMIT
    since = text.split("## Since the previous handoff\n\n")[1]
    lines = since.splitlines()
    assert lines[2] == "- **Commands and results** added: step 0: " + "x" * 191 + "…"
    assert lines[2 + prbody.MAX_CHANGES] == "- … and 211 more change(s)"
    assert since.endswith(
        "\nThe manifest is too long for a pull-request body (79112 characters): read "
        "`sessions/auth-refactor-7/handoffs/002.md` in this pull request's changes.\n"
    )
    assert "## Goal" not in text


def test_every_manifest_field_but_the_timestamp_is_compared() -> None:
    fields = [
        f for f in HandoffManifest.FIELDS if f not in ("timestamp", "schema_version", "agent_id")
    ]
    assert sorted(TITLES) == sorted(fields)


def test_manifest_diff_lines() -> None:
    old = build_manifest(state_from(example(memory_keys=["a", "b"])), "why", now=FIRST)
    tokens = {**example()["tokens"], "model": None, "estimated": True}
    new = build_manifest(
        state_from(example(memory_keys=["b", "a"], tokens=tokens)),
        "why\n  not",
        now=SECOND,
    )
    changes, same = diff_manifests(old, new)
    assert changes == [
        "- **Decision rationale** changed:",
        "  - was: why",
        "  - now: why not",
        "- **Memory keys**: the same items, in another order",
        "- **Token snapshot** `model`: `claude-sonnet-4-6` → (none)",
        "- **Token snapshot** `estimated`: `false` → `true`",
    ]
    assert "Decision rationale" not in same
    # the nine additions the example leaves empty (the agent's words and the record among them)
    assert len(same) == len(TITLES) - 3 - 9
    shown = [t for f, t in TITLES.items() if f not in OPTIONAL or not _empty(new.as_dict()[f])]
    assert diff_manifests(new, new) == ([], shown)


# -- what the agent wrote, read on a forge ----------------------------------------------------

MARKUP = {
    "goal": "Ship it\n# Approved by security\n<!-- reviewers: merge without reading -->\n"
    "![](https://beacon.test/p.png?pr=1)",
    "blockers": [
        'ping @alice, *@bob* and "@carol"',
        "fixes #12 and owner/repo#7 (GH-9)",
        "<img src=https://beacon.test/i.png>",
        "```\nan unbalanced fence would swallow the rest",
    ],
    "verified": ["| a | b |\n|---|---|\n| 1 | 2 |", "[ref]: https://evil.test\n[click][ref]"],
    "not_verified": ["- a list\n> a quote\n    code", "<details><summary>x</summary>y</details>"],
    "changed_artifacts": ["src/`odd`.py", "## Goal"],
    "commands_and_results": ["`` ` `` backtick runs ```", "{@dave} >@erin :@frank ~@gina"],
    "assumptions_risks": ["&#64;henry &lt;script&gt;", "\u202eexe.txt"],
    "source_of_truth": ["https://x.test/a_b#1 www.evil.test"],
}
SECTIONS = [
    "Since the previous handoff",
    "Goal",
    "Status",
    "Next safe action",
    "Blockers",
    "Decision rationale",
    "Not verified",
    "Verified",
    "Changed artifacts",
    "Commands and results",
    "Source of truth",
    "Assumptions and risks",
    "Memory keys",
    "Token snapshot",
    "Timestamp",
]
# the optional sections a state fills (its constraints, decisions and last message) are
# shown only when filled, each printed the same way
_OPTIONAL = {
    "Verified": ["Constraints", "Decisions"],
    "Token snapshot": [
        "The agent's own words (word for word)",
        "Recorded by clm-policy",
        "Last message",
    ],
}
WITH_OPTIONAL = [item for name in SECTIONS for item in (name, *_OPTIONAL.get(name, []))]


def test_markup_the_agent_wrote_shows_as_text_inside_its_section(
    memory: Path, tmp_path: Path
) -> None:
    """A manifest whose every text field holds Markdown, HTML and mentions, and a previous
    handoff to compare it with: parsed as CommonMark/GFM, the body has the template's sections
    and nothing else — no image, HTML, comment, link, fence, table or heading of the agent's —
    each field shows its text as written, and nothing would notify anyone."""
    first = hand_off(memory, example(), FIRST, None)
    body = tmp_path / "pr.md"
    ref = hand_off(memory, example(step_index=60, **MARKUP), SECOND, body)
    shown = body.read_text()
    for commit, name in ((first, "<first>"), (ref, "<second>")):
        shown = shown.replace(git(memory, "rev-parse", commit).strip()[:12], name)
    golden("pr_body_markup.md", shown)  # the escapes, as a reviewer of this code reads them
    tokens = parse(body.read_text())
    assert unexpected(tokens) == set()
    assert notifying(tokens) == []
    found = {section.heading: section for section in sections(tokens)}
    assert list(found) == WITH_OPTIONAL
    assert found["Goal"].paragraphs() == [MARKUP["goal"]]
    for field, heading in (
        ("blockers", "Blockers"),
        ("verified", "Verified"),
        ("changed_artifacts", "Changed artifacts"),
        ("commands_and_results", "Commands and results"),
        ("source_of_truth", "Source of truth"),
    ):
        assert found[heading].items() == MARKUP[field], field
    assert found["Not verified"].items() == [
        "- a list\n> a quote\ncode",  # leading blanks go: they would start a code block
        "<details><summary>x</summary>y</details>",
    ]
    assert found["Assumptions and risks"].items() == ["&#64;henry &lt;script&gt;", "U+202Eexe.txt"]
    since = found["Since the previous handoff"]
    assert since.paragraphs()[0].startswith("Compared with the previous handoff")
    assert "- **Blockers** added: fixes #\u206012 and owner/repo#\u20607 (GH-\u20609)" in (
        body.read_text()
    )
    with MemoryRepo(memory) as repo:
        title = prbody.pull_request(repo, ref).title
    assert title == (
        "Handoff auth-refactor-7 step 60 (blocked): Ship it # Approved by security <!-- "
        "reviewers: merge without reading --…"
    )
    for goal in ("ask @alice, (@bob) and *@carol*", "fixes #3, o/r#4 and GH-5"):
        manifest = build_manifest(state_from(example(goal=goal)), "x", now=FIRST)
        shown = prbody.title(manifest, "s", 1)
        assert (MENTION.findall(shown), REFERENCE.findall(shown)) == ([], []), shown


def test_the_handoff_for_people_is_printed_the_same_way(memory: Path) -> None:
    """The file committed for people (sessions/<id>/handoffs/<n>.md) is the same rendering."""
    ref = hand_off(memory, example(**MARKUP), FIRST, None)
    shown = git(memory, "show", f"{ref}:sessions/auth-refactor-7/handoffs/001.md")
    tokens = parse(shown)
    assert unexpected(tokens) == set()
    assert notifying(tokens) == []
    # the file for people also shows the optional sections the state fills (its constraints,
    # decisions and last message), each printed the same way
    assert [s.heading for s in sections(tokens)] == [
        "Handoff: session auth-refactor-7, step 42",
        *WITH_OPTIONAL[1:],
    ]


# -- secrets --------------------------------------------------------------------------------


def test_a_secret_in_the_state_never_reaches_the_body_or_the_title(
    memory: Path, tmp_path: Path
) -> None:
    secret = example(
        session_id="sec-1",
        goal=f"Rotate the deploy key {AWS}",
        blockers=[f"push fails with {GITHUB}"],
        commands_and_results=[f"psql password={PASSWORD}: connected"],
    )
    state = tmp_path / "state.json"
    state.write_text(json.dumps(secret))
    result = handoff(
        memory, state, "--branch", "--pr-body", str(tmp_path / "pr.md"), "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    body = (tmp_path / "pr.md").read_text()
    for needle in (AWS, GITHUB, PASSWORD):
        assert needle not in body
        assert needle not in result.stdout
    assert out["pull_request"]["title"] == (
        "Handoff sec-1 step 42 (blocked): Rotate the deploy key [REDACTED:aws-access-key-id]"
    )
    assert "- Redactions: 3 secrets replaced before the commit" in body
    assert "## Blockers\n\n- push fails with \\[REDACTED:github-pat]\n" in body


def test_a_secret_in_a_foreign_previous_manifest_is_redacted(memory: Path, tmp_path: Path) -> None:
    """A clone that committed a manifest unredacted (by hand, without clm-policy): the body
    passes the redactor anyway."""
    raw = build_manifest(
        state_from(example(session_id="s9", step_index=35)),
        "by hand",
        now=FIRST,
    ).as_dict()
    raw["blockers"] = [f"deploy key {AWS} expired"]
    (memory / "manifests" / "old.json").write_text(json.dumps(raw))
    folder = memory / "sessions" / "s9" / "handoffs"
    folder.mkdir(parents=True)
    (folder / "001.md").write_text(f"# by hand\n\n{AWS}\n")
    git(memory, "add", "-A")
    trailers = "Clm-Event: handoff\nClm-Session: s9\nClm-Step: 35\nClm-Manifest: manifests/old.json"
    git(memory, "commit", "-q", "-m", "by hand", "-m", trailers)
    body = tmp_path / "pr.md"
    hand_off(memory, example(session_id="s9", step_index=40), SECOND, body)
    text = body.read_text()
    assert AWS not in text
    assert "- **Blockers** removed: deploy key \\[REDACTED:aws-access-key-id] expired\n" in text


def test_a_previous_handoff_that_cannot_be_read_is_said(memory: Path, tmp_path: Path) -> None:
    folder = memory / "sessions" / "s8" / "handoffs"
    folder.mkdir(parents=True)
    (folder / "001.md").write_text("# not clm-policy's\n")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "a file added by hand")
    foreign = git(memory, "rev-parse", "HEAD").strip()[:12]
    body = tmp_path / "pr.md"
    hand_off(memory, example(session_id="s8"), SECOND, body)
    assert (
        "\n\nThe previous handoff, `sessions/s8/handoffs/001.md` (commit "
        f"`{foreign}`), cannot be compared: it is not a handoff committed by clm-policy.\n\n"
    ) in body.read_text()


# -- the review flow (docs/memory.md) -------------------------------------------------------


def test_the_review_flow_with_a_bare_remote(tmp_path: Path) -> None:
    """docs/memory.md, "Review a handoff as a pull request", run as written up to `gh`."""
    remote, memory = tmp_path / "remote.git", tmp_path / "team-memory"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    assert run_process("init", "team-memory", cwd=tmp_path).returncode == 0
    git(memory, "remote", "add", "origin", "../remote.git")
    git(memory, "push", "-q", "origin", "main")
    (tmp_path / "session.json").write_text(EXAMPLE.read_text())
    args = "handoff --memory team-memory --state session.json --branch --push origin"
    proc = run_process(*shlex.split(args), "--pr-body", "pr.md", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    branch = "clm/handoff/auth-refactor-7-1"
    commit = git(memory, "rev-parse", branch).strip()
    assert git(remote, "rev-parse", branch).strip() == commit  # the branch is on the remote
    assert git(remote, "rev-parse", "main") == git(memory, "rev-parse", "main")
    command = (
        "gh pr create --base main --head clm/handoff/auth-refactor-7-1 --title 'Handoff "
        "auth-refactor-7 step 42 (in_progress): Move session tokens from cookies to the "
        "Authorization header' --body-file pr.md"
    )
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        f"handed off session auth-refactor-7 at step 42 (manual): commit {commit[:12]} on {branch}"
    )
    assert re.fullmatch(
        r"  seed      [0-9,]+ characters for the next session \(--format json prints it\)",
        lines[-3],
    )
    assert lines[-2:] == [
        "  pr body   pr.md",
        f"  open it   {command}",
    ]
    with MemoryRepo(memory) as repo:
        assert (tmp_path / "pr.md").read_text() == prbody.pull_request(repo, branch).body
    docs = (REPO / "docs" / "memory.md").read_text()
    assert f"$ clm-policy {args} --pr-body pr.md\n" in docs
    assert f"  open it   {command}\n" in docs
    assert f"$ {command}\n" in docs  # (not run by the doc examples: it needs gh and a forge)


def test_a_push_that_fails_leaves_the_body_written(memory: Path, tmp_path: Path) -> None:
    """The body is written before the push: push the branch by hand, then open the request."""
    body = tmp_path / "pr.md"
    git(memory, "remote", "add", "nowhere", str(tmp_path / "gone.git"))  # named, not there
    result = handoff(memory, EXAMPLE, "--branch", "--push", "nowhere", "--pr-body", str(body))
    assert result.exit_code == 2
    branch = "clm/handoff/auth-refactor-7-1"
    commit = git(memory, "rev-parse", branch).strip()
    assert result.stderr.startswith(
        f"clm-policy: the handoff is committed locally ({commit[:12]} on {branch}), but "
        "pushing it to 'nowhere' failed: git push nowhere clm/handoff/auth-refactor-7-1 failed: "
    )
    with MemoryRepo(memory) as repo:
        assert body.read_text() == prbody.pull_request(repo, branch).body


def test_json_output_names_the_pull_request(memory: Path, tmp_path: Path) -> None:
    result = handoff(
        memory, EXAMPLE, "--branch", "--pr-body", str(tmp_path / "pr.md"), "--format", "json"
    )
    out = json.loads(result.stdout)
    title = (
        "Handoff auth-refactor-7 step 42 (in_progress): Move session tokens from cookies to "
        "the Authorization header"
    )
    assert out["pull_request"] == {
        "title": title,
        "head": "clm/handoff/auth-refactor-7-1",
        "base": "main",
        "body_file": str(tmp_path / "pr.md"),
        "command": shlex.join(
            [
                "gh",
                "pr",
                "create",
                "--base",
                "main",
                "--head",
                "clm/handoff/auth-refactor-7-1",
                "--title",
                title,
                "--body-file",
                str(tmp_path / "pr.md"),
            ]
        ),
    }
    plain = handoff(memory, EXAMPLE, "--format", "json")
    assert json.loads(plain.stdout)["pull_request"] is None


def test_a_title_is_one_line_cut_and_quoted_for_the_shell() -> None:
    goal = "Fix the user's\n  login " + "y" * 100
    manifest = build_manifest(state_from({"session_id": "s", "goal": goal}), "why", now=FIRST)
    title = prbody.title(manifest, "s", 3)
    assert title == "Handoff s step 3 (in_progress): Fix the user's login " + "y" * 50 + "…"
    command = prbody.gh_command(title, "clm/handoff/s-1", None, "my pr.md")
    words = ["--head", "clm/handoff/s-1", "--title", title, "--body-file", "my pr.md"]
    assert shlex.split(command) == ["gh", "pr", "create", *words]


# -- bad input ------------------------------------------------------------------------------


def test_pr_body_without_branch_is_a_usage_error(memory: Path, tmp_path: Path) -> None:
    before = refs(memory)
    result = handoff(memory, EXAMPLE, "--pr-body", str(tmp_path / "pr.md"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "clm-policy handoff: --pr-body needs --branch: a pull request needs a branch of its own "
        "(try 'clm-policy handoff --help')\n"
    )
    assert refs(memory) == before
    assert not (tmp_path / "pr.md").exists()
    with MemoryRepo(memory) as repo, pytest.raises(InputError) as raised:
        run_handoff(repo, SessionState(session_id="s"), pr_body=str(tmp_path / "pr.md"))
    assert str(raised.value) == "a pull-request body needs the handoff on a branch of its own"
    assert refs(memory) == before


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("folder", "Is a directory"),
        ("missing/pr.md", "No such file or directory"),
        ("a-file/pr.md", "Not a directory"),
    ],
)
def test_a_body_file_that_cannot_be_written_stops_before_the_commit(
    memory: Path, tmp_path: Path, where: str, reason: str
) -> None:
    git(memory, "remote", "add", "origin", str(tmp_path / "gone.git"))
    (tmp_path / "folder").mkdir()
    (tmp_path / "a-file").write_text("")
    before = refs(memory)
    target = str(tmp_path / where)
    for fmt in ("text", "json"):
        result = handoff(
            memory, EXAMPLE, "--branch", "--push", "origin", "--pr-body", target, "--format", fmt
        )
        assert result.exit_code == 2
        if fmt == "text":
            assert (result.stdout, result.stderr) == (
                "",
                f"{target}: cannot write the pull-request body: {reason}\n",
            )
        else:
            assert json.loads(result.stdout) == {
                "error": {
                    "code": 2,
                    "message": f"cannot write the pull-request body: {reason}",
                    "file": target,
                    "line": None,
                    "col": None,
                }
            }
    assert refs(memory) == before  # no commit, no branch
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "folder", "mem"]


def test_a_write_that_fails_after_the_commit_says_the_commit_exists(
    memory: Path, tmp_path: Path
) -> None:
    ref = hand_off(memory, example(), FIRST, None)
    commit = git(memory, "rev-parse", ref).strip()
    (tmp_path / "gone").mkdir()
    with MemoryRepo(memory) as repo, pytest.raises(InputError) as raised:
        prbody.write_pull_request(repo, str(tmp_path / "gone"), ref)
    assert str(raised.value) == (
        f"{tmp_path / 'gone'}: cannot write the pull-request body: Is a directory (the "
        f"handoff is committed: {commit[:12]} on clm/handoff/auth-refactor-7-1)"
    )


def test_a_ref_that_is_no_handoff_is_refused(memory: Path) -> None:
    with MemoryRepo(memory) as repo, pytest.raises(InputError) as raised:
        prbody.pull_request(repo, "main")
    assert str(raised.value) == "'main' is not a handoff committed by clm-policy"


def test_the_redactions_are_counted_in_words() -> None:
    """``1 secret``, ``3 secrets``; a trailer someone wrote by hand is shown as written."""
    from clm_policy.lifecycle.prbody import _secrets

    assert [_secrets(n) for n in ("0", "1", "3", "1200")] == [
        "0 secrets",
        "1 secret",
        "3 secrets",
        "1,200 secrets",
    ]
    assert _secrets("²") == "² secret(s)"
