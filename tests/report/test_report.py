"""``clm-policy report``: one self-contained HTML page of a memory repository's history, with
everything from the (untrusted) repository escaped; bad input; progress on a terminal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

from clm_policy.policy.compile import load_policy

from conftest import git, invoke, run_on_terminal


class Page(HTMLParser):
    """The tags, attributes and text of a page, as a browser's parser sees them."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def count(self, tag: str, **attrs: str) -> int:
        return sum(
            1
            for t, a in self.tags
            if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())
        )


def run(memory: Path, *args: str) -> None:
    # the demo's first session alone (it hands off; --continue-after-handoff goes on)
    result = invoke("run", "--memory", str(memory), "--format", "json", "--stop-at-handoff", *args)
    assert result.exit_code == 0, result.stderr


def report(memory: Path, tmp_path: Path, *args: str) -> tuple[str, str]:
    """The page ``report`` writes, and what it said on stdout."""
    out = tmp_path / "report.html"
    result = invoke("report", "--memory", str(memory), "-o", str(out), *args)
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    return out.read_text("utf-8"), result.stdout


def commit_file(repo: Path, path: str, text: str, message: str = "hand-made") -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, "utf-8")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message)


def test_the_demo_page(memory: Path, tmp_path: Path) -> None:
    run(memory)
    page, said = report(memory, tmp_path)
    assert said == f"wrote {tmp_path / 'report.html'}: 1 session, 9 KiB (open it in a browser)\n"
    p = Page(page)
    assert p.count("section", id="s-demo") == 1
    # the context chart: the thresholds of the default policy's coding profile, each event
    assert p.count("line", class_="soft") == 1
    assert p.count("line", class_="hard") == 1
    assert "soft 250k" in p.text
    assert "hard 350k" in p.text
    assert p.count("circle", class_="compact") == 2
    assert p.count("rect", class_="handoff") == 1
    assert p.count("polyline", class_="series") == 1
    # the decision timeline folds runs of identical decisions
    rows = re.findall(r'<tr><td class="n">([^<]*)</td><td><span class="badge a-(\w+)', page)
    assert rows == [
        ("1\u201322 (22\u00d7)", "continue"),
        ("23", "compact"),
        ("24\u201341 (18\u00d7)", "continue"),
        ("42", "compact"),
        ("43", "handoff"),
    ]
    assert "context 257352 &gt;= soft limit 250000" in page
    # the demo's summaries are deterministic (nothing measured); its handoff has the agent's
    # words, measured against the record: the one recall in the table
    recalls = re.findall(
        r'<tr><td class="n">(\d+)</td><td>([^<]+)</td><td class="n">([^<]+)<', page
    )
    assert recalls == [("43", "the agent&#x27;s handoff", "7/7 (100%)")]
    assert "Decision timeline (43 decisions)" in p.text


def test_the_page_loads_nothing(memory: Path, tmp_path: Path) -> None:
    run(memory)
    page, _ = report(memory, tmp_path)
    p = Page(page)
    tags = {t for t, _ in p.tags}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "image", "use"}
    assert p.count("meta", **{"http-equiv": "Content-Security-Policy"}) == 1
    assert "default-src 'none'; style-src 'unsafe-inline'" in page
    # the one URL is the SVG namespace, which is a name, never fetched
    assert set(re.findall(r"\w+://[^\s\"'<>)]*", page)) == {"http://www.w3.org/2000/svg"}
    assert "url(" not in page
    assert "@import" not in page


EVIL = '<script>alert("x")</script>'


def test_everything_from_the_repository_is_escaped(memory: Path, tmp_path: Path) -> None:
    run(memory, "--scenario", "compaction")  # session scenario-b
    decisions = git(memory, "show", "HEAD:sessions/scenario-b/decisions.jsonl")
    evil = {
        "session": "scenario-b",
        "step": 99,
        "action": "handoff",
        "trigger": '<img src=x onerror="alert(1)">',
        "rationale": EVIL,
        "blocked_by": [{"guard": "<b>guard</b>"}],
        "context_tokens": 5,
        "profile": "coding",
    }
    commit_file(memory, "sessions/scenario-b/decisions.jsonl", decisions + json.dumps(evil) + "\n")
    git(
        memory,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "clm(compact): scenario-b step 98\n\nClm-Event: compact\nClm-Session: scenario-b\n"
        f"Clm-Step: 98\nClm-Rule: {EVIL}\nClm-Policy: <i>policy</i>@1\nClm-Recall: 1/2 {EVIL}",
    )
    page, _ = report(memory, tmp_path)
    p = Page(page)
    assert p.count("script") == 0
    assert p.count("img") == 0
    assert p.count("b") == 0
    assert p.count("i") == 0
    text = "".join(p.text)
    assert EVIL in text  # shown as text, where a person reads it
    assert '<img src=x onerror="alert(1)">' in text
    assert "blocked by: <b>guard</b>" in text
    assert "the session ran under <i>policy</i>@1" in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_a_session_known_only_from_commits(memory: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(
        json.dumps({"session_id": "hooked", "step_index": 7, "tokens": {"context_tokens": 90_000}})
    )
    result = invoke("compact", "--memory", str(memory), "--state", str(state))
    assert result.exit_code == 0, result.stderr
    git(
        memory,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "clm(session): hooked step 7, done\n\nClm-Event: session\nClm-Session: hooked\n"
        "Clm-Step: 7\nClm-Context-Tokens: 20000",
    )
    page, _ = report(memory, tmp_path)
    p = Page(page)
    # no metrics or decisions: the chart comes from the commits' trailers, the compaction's
    # (the context it acted on, 90,000 of an axis to 400,000) before the session end's
    assert p.count("polyline", class_="series") == 1
    assert p.count("circle", class_="compact", cy="208.2") == 1
    assert "no decisions recorded (decisions.jsonl)" in p.text


def test_commits_without_recall_say_so(memory: Path, tmp_path: Path) -> None:
    """A repository written before compactions were verified has no recall to show."""
    git(
        memory,
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "clm(compact): old step 7, soft_compact\n\nClm-Event: compact\nClm-Session: old\n"
        "Clm-Step: 7\nClm-Context-Tokens: 260000",
    )
    page, _ = report(memory, tmp_path)
    assert "no recall recorded" in Page(page).text


def test_thresholds_that_need_a_window_say_so(memory: Path, tmp_path: Path) -> None:
    run(memory)
    shares = tmp_path / "shares.yaml"
    shares.write_text(
        "version: 1\nextends: default\nprofiles:\n  coding: {soft_compact: 70%, hard_handoff: 85%}\n"
    )
    page, _ = report(memory, tmp_path, "--policy", str(shares))
    p = Page(page)
    notes = [t for t in p.text if "not drawn" in t or t.startswith("thresholds of")]
    assert notes == [
        "soft_compact 70% of an unknown context window: not drawn",
        "hard_handoff 85% of an unknown context window: not drawn",
        "thresholds of policy shares@"
        + load_policy(shares).digest
        + "; the session ran under <bundled>/default.yaml@"
        + load_policy("default").digest,
    ]
    assert p.count("line", class_="soft") == 0


def test_recall_per_compaction(memory: Path, tmp_path: Path) -> None:
    run(memory)
    for step, recall in ((30, "11/12"), (35, "0.5")):
        git(
            memory,
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            f"clm(compact): demo step {step}\n\nClm-Event: compact\nClm-Session: demo\n"
            f"Clm-Step: {step}\nClm-Recall: {recall}",
        )
    page, _ = report(memory, tmp_path)
    cells = re.findall(r'<tr><td class="n">(\d+)</td><td>compact</td><td class="n">([^<]+)<', page)
    # the forms a trailer may take (the run's own summaries are deterministic: no recall)
    assert cells == [
        ("30", "11/12 (92%)"),
        ("35", "50%"),
    ]
    assert "recall 11/12 (92%)" in page  # the marker's tooltip


def test_a_long_recall_list_becomes_a_chart_and_the_lowest(memory: Path, tmp_path: Path) -> None:
    run(memory)
    for step in range(1, 41):
        git(
            memory,
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            f"clm(summary): demo step {step}\n\nClm-Event: summary\nClm-Session: demo\n"
            f"Clm-Step: {step}\nClm-Recall: {step}/40",
        )
    page, _ = report(memory, tmp_path)
    p = Page(page)
    # and the demo agent's handoff (its words, 7/7); the run's summaries measure nothing
    assert p.count("circle", class_="recall") == 41
    assert "41 recalls recorded, mean 52.4%; the 10 lowest:" in p.text
    lowest = re.findall(r'<tr><td class="n">(\d+)</td><td>summary</td>', page)
    assert lowest == [str(n) for n in range(1, 11)]


def test_only_one_session(memory: Path, tmp_path: Path) -> None:
    run(memory)
    run(memory, "--scenario", "compaction")
    page, said = report(memory, tmp_path, "--session", "scenario-b")
    p = Page(page)
    assert (p.count("section", id="s-scenario-b"), p.count("section", id="s-demo")) == (1, 0)
    assert "1 session" in said


def test_standard_output(memory: Path) -> None:
    run(memory)
    result = invoke("report", "--memory", str(memory), "-o", "-")
    assert result.exit_code == 0
    assert result.stdout.startswith("<!doctype html>\n")
    assert result.stdout.endswith("</html>\n")


# -- bad input ----------------------------------------------------------------------------------


def test_no_history_is_nothing_to_report(memory: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = invoke("report", "--memory", str(memory), "-o", str(out))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == (
        f"{memory}: no sessions recorded yet; nothing to report "
        f"(clm-policy run --memory {memory} records one)\n"
    )
    assert not out.exists()


def test_an_unknown_session_is_bad_input(memory: Path, tmp_path: Path) -> None:
    run(memory)
    out = tmp_path / "report.html"
    result = invoke("report", "--memory", str(memory), "--session", "nope", "-o", str(out))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"clm-policy: {memory}: no session 'nope' recorded (sessions: demo)\n"
    result = invoke("report", "--memory", str(memory), "--session", "../x", "-o", str(out))
    assert result.stderr == (
        f"clm-policy: {memory}: no session '../x' recorded (not a valid session id)\n"
    )
    assert not out.exists()
    # a long value is quoted short, and a long list of sessions is cut (both were whole)
    for n in range(25):
        (memory / "sessions" / f"s{n:02}").mkdir()
        (memory / "sessions" / f"s{n:02}" / "notes.md").write_text("by hand\n")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "by hand")
    for args in (["report", "-o", str(out)], ["export"], ["log"]):
        result = invoke(*args, "--memory", str(memory), "--session", "x" * 128)
        listed = ", ".join(["demo", *(f"s{n:02}" for n in range(19))])
        assert (args, result.exit_code, result.stdout, result.stderr) == (
            args,
            2,
            "",
            f"clm-policy: {memory}: no session '{'x' * 60}…' recorded (sessions: {listed}, ... "
            "(26 in all))\n",
        )
    rev = invoke("replay", "--memory", str(memory), "--rev", "r" * 5000)
    assert rev.stderr == f"clm-policy: {memory}: no commit named '{'r' * 60}…'\n"


def test_not_a_memory_repository(tmp_path: Path) -> None:
    result = invoke("report", "--memory", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"clm-policy: {tmp_path}: not a clm-policy memory repository (no .clm-memory; "
        "create one with: clm-policy init DIR)\n"
    )


def test_an_output_folder_that_does_not_exist(memory: Path, tmp_path: Path) -> None:
    run(memory)
    out = tmp_path / "no" / "report.html"
    result = invoke("report", "--memory", str(memory), "-o", str(out))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"{out}: cannot write the output: No such file or directory\n"
    for command in ("report", "export"):  # a folder where the file goes: said before any work
        folder = invoke(command, "--memory", str(memory), "-o", str(tmp_path))
        assert (folder.exit_code, folder.stdout) == (2, "")
        assert folder.stderr == f"{tmp_path}: is a folder: --output takes a file's path\n"
    # a file where the memory repository goes: what it is, not "create one" with init
    afile = tmp_path / "afile"
    afile.write_text("x")
    log = invoke("log", "--memory", str(afile))
    assert log.stderr == f"clm-policy: {afile}: is a file, not a memory repository (a folder)\n"


def test_an_output_path_ending_in_a_slash_names_a_folder(memory: Path, tmp_path: Path) -> None:
    """``-o out/`` where no ``out`` is: a folder meant, refused before any work, as an
    existing folder is (a file ``out`` was written, and ``wrote out/`` said)."""
    from conftest import REPO

    run(memory)
    policy = str(REPO / "policies" / "default.yaml")
    tests = str(REPO / "policies" / "tests" / "default.test.yaml")
    for args in (
        ["report", "--memory", str(memory), "-o"],
        ["export", "--memory", str(memory), "-o"],
        ["lint", policy, "--output"],
        ["test", tests, "--format", "junit", "--output"],
    ):
        out = f"{tmp_path / args[0]}/"
        result = invoke(*args, out)
        option = "--output"  # (-o is its short form)
        assert (args, result.exit_code, result.stdout, result.stderr) == (
            args,
            2,
            "",
            f"{out}: names a folder (it ends in '/'): {option} takes a file's path\n",
        )
        assert not (tmp_path / args[0]).exists()


def test_output_to_what_is_not_a_file_is_written_never_replaced(
    memory: Path, tmp_path: Path
) -> None:
    """`-o /dev/null` and `-o /dev/stdout` are written to: renaming a new file over them (the
    atomic write of a file) put a regular file in place of /dev/null. Shown with a FIFO."""
    import os
    import stat

    run(memory)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (the writer's open does not wait)
    try:
        result = invoke("export", "--memory", str(memory), "--table", "sessions", "-o", str(fifo))
        assert (result.exit_code, result.stderr) == (0, ""), result.stderr
        written = os.read(reader, 1 << 16).decode()
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert written.startswith("session,task,parent,status,")
    # a symbolic link: the file it points to gets the output, and the link stays
    target = tmp_path / "real.csv"
    target.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    result = invoke("export", "--memory", str(memory), "--table", "sessions", "-o", str(link))
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    assert link.is_symlink()
    assert target.read_text() == written


def test_broken_lines_are_skipped_where_they_are(memory: Path, tmp_path: Path) -> None:
    run(memory, "--scenario", "compaction")
    metrics = git(memory, "show", "HEAD:sessions/scenario-b/metrics.jsonl").splitlines()
    metrics[2] = '{"step": 3, "context_tokens": '  # cut short
    metrics[4] = '{"step": -1, "context_tokens": 5}'
    metrics[5] = "[1, 2]"
    commit_file(memory, "sessions/scenario-b/metrics.jsonl", "\n".join(metrics) + "\n")
    commit_file(memory, "sessions/scenario-b/run.json", "{oops")
    out = tmp_path / "report.html"
    result = invoke("report", "--memory", str(memory), "-o", str(out))
    assert result.exit_code == 0
    where = f"{memory}/sessions/scenario-b"
    assert result.stderr == (
        f"clm-policy: skipped {where}/run.json:1:2: not read: not valid JSON\n"
        f"clm-policy: skipped {where}/metrics.jsonl:3:31: not valid JSON\n"
        f"clm-policy: skipped {where}/metrics.jsonl:5:1: 'step' is not a count (a whole number >= 0)\n"
        f"clm-policy: skipped {where}/metrics.jsonl:6:1: not a JSON object\n"
    )
    assert Page(out.read_text()).count("polyline", class_="series") == 1


# -- progress -----------------------------------------------------------------------------------


def test_progress_on_a_terminal_only(memory: Path, tmp_path: Path) -> None:
    run(memory)
    out = tmp_path / "report.html"
    args = [sys.executable, "-m", "clm_policy", "report", "--memory", str(memory), "-o", str(out)]
    done, seen = run_on_terminal(args)
    assert done.returncode == 0
    line = "reading sessions: 1/1 (100%)"
    assert seen.decode() == f"\r{line}\r{' ' * len(line)}\r"
    # not at a terminal: nothing but the outcome
    quiet = subprocess.run(args, capture_output=True, text=True, check=False, timeout=60)
    assert (quiet.returncode, quiet.stderr) == (0, "")
