"""Everything clm-policy prints passes one printer (clm_policy/base/termsafe.py): no module of
the package writes to standard output or standard error another way. What is printed is held
to it end to end in tests/cli/test_hostile_names.py; this scan holds every place that could
print, including the ones no test reaches.

A way around the printer is any of: ``print``; click's printers (``click.echo``, ``secho``,
``echo_via_pager``, ``prompt``, its text streams) — ``click.confirm`` only with a question
made ``terminal_safe``; ``sys.stdout``/``sys.stderr`` themselves; ``os.write`` to file
descriptor 1 or 2 of anything but a constant; ``traceback.print_*``; an exception's
``show()`` to the terminal (click's: show it into a buffer, then print that); ``warnings``
and ``logging``; ``sys.exit``/``SystemExit`` with a message (Python prints it); a subprocess
whose output is not captured (it would write to ours).
"""

from __future__ import annotations

import ast

from conftest import REPO

PACKAGE = REPO / "clm_policy"
PRINTER = "clm_policy/base/termsafe.py"
ALLOWED = {
    # the progress line: its text passes terminal_safe; the one carriage return it writes on
    # purpose (back to the start of the line) is the point of it
    ("clm_policy/base/progress.py", "sys.stderr"),
    # Mem0's own log lines and its dependencies' warnings are caught here, away from the
    # terminal (the opposite of printing): logging and warnings are configured, not written
    ("clm_policy/memory/mem0store.py", "import logging"),
    ("clm_policy/memory/mem0store.py", "import warnings"),
    # a quick path's end flushes what the printers wrote before the process ends at once
    # (os._exit skips Python's own flush); it writes nothing of its own
    ("clm_policy/cli/entry.py", "sys.stdout"),
    ("clm_policy/cli/entry.py", "sys.stderr"),
    # the MCP server's wire: JSON-RPC messages passed between the client and the SDK as they
    # are (the SDK's JSON, and this module's errors from json.dumps: ASCII), not text for a
    # terminal; it copies bytes between pipes and the process's own descriptors
    ("clm_policy/agents/mcp/wire.py", "os.write() to standard output or error"),
}
CLICK_PRINTERS = {
    "echo",
    "secho",
    "echo_via_pager",
    "prompt",
    "get_text_stream",
    "get_binary_stream",
    "open_file",
    "edit",
    "clear",
}
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_call_to(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == name


def _opened(tree: ast.AST) -> set[str]:
    """The names ``tree`` binds to a file descriptor it opens itself (``fd = os.open(...)``,
    ``fd, tmp = _create(...)``): writing to one of those is writing to a file."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            opener = _dotted(node.value.func).split(".")[-1]
            if opener in ("open", "_create"):
                for target in node.targets:
                    first = target.elts[0] if isinstance(target, ast.Tuple) else target
                    if isinstance(first, ast.Name):
                        names.add(first.id)
    return names


def ways_around(tree: ast.AST) -> list[tuple[int, str]]:
    """Each place in ``tree`` that writes to the terminal without the printer."""
    found: list[tuple[int, str]] = []
    opened = _opened(tree)

    def flag(node: ast.AST, what: str) -> None:
        found.append((getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = {a.name for a in node.names}
            if node.module == "click" and names & (CLICK_PRINTERS | {"confirm"}):
                flag(node, f"from click import {sorted(names & CLICK_PRINTERS)}")
            if node.module == "sys" and names & STREAMS:
                flag(node, "from sys import a standard stream")
            if node.module in ("traceback", "warnings", "logging"):
                flag(node, f"from {node.module} import ...")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("warnings", "logging"):
                    flag(node, f"import {alias.name}")
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            module, _, attr = dotted.rpartition(".")
            if (
                (module == "click" and attr in CLICK_PRINTERS)
                or (module == "sys" and attr in STREAMS)
                or (module == "traceback" and attr.startswith("print"))
            ):
                flag(node, dotted)
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name == "print":
                flag(node, "print()")
            elif name == "click.confirm":
                if not (node.args and _is_call_to(node.args[0], "terminal_safe")):
                    flag(node, "click.confirm() of a question not made terminal_safe")
            elif name == "os.write":
                fd = node.args[0] if node.args else None
                data = node.args[1] if len(node.args) > 1 else None
                a_file = isinstance(fd, ast.Name) and fd.id in opened
                to_terminal = not a_file and not (
                    isinstance(fd, ast.Constant) and fd.value not in (1, 2)
                )
                if to_terminal and not isinstance(data, ast.Constant):
                    flag(node, "os.write() to standard output or error")
            elif name.endswith(".show") and not any(k.arg == "file" for k in node.keywords):
                flag(node, f"{name}() to the terminal")
            elif name in ("sys.exit", "exit", "quit", "SystemExit") and node.args:
                if isinstance(node.args[0], ast.JoinedStr) or (
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                ):
                    flag(node, f"{name}() with a message")
            elif name.startswith("subprocess.") and name.split(".")[-1] in (
                "run",
                "Popen",
                "call",
                "check_call",
                "check_output",
            ):
                given = {k.arg for k in node.keywords}
                captured = {"stdout", "stderr"} <= given or "capture_output" in given
                if not captured:
                    flag(node, f"{name}() with its output not captured")
    return found


def test_nothing_writes_to_the_terminal_around_the_printer() -> None:
    around = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(REPO))
        if where == PRINTER or "_bundled" in path.parts:
            continue
        for line, what in ways_around(ast.parse(path.read_text(encoding="utf-8"))):
            if (where, what) not in ALLOWED:
                around.append(f"{where}:{line}: {what}")
    assert around == []


def test_the_scan_finds_each_way_around() -> None:
    """Each way around the printer, written the way code would, is found (a scan that finds
    nothing proves nothing)."""
    cases = {
        "print(name)": "print()",
        "click.echo(name)": "click.echo",
        "click.secho(name, fg='red')": "click.secho",
        "from click import echo": "from click import ['echo']",
        "sys.stdout.write(name)": "sys.stdout",
        "sys.stderr.buffer.write(b)": "sys.stderr",
        "os.write(1, name.encode())": "os.write() to standard output or error",
        "os.write(2, f'{name}'.encode())": "os.write() to standard output or error",
        "os.write(out, data)": "os.write() to standard output or error",
        "fd = int(x)\nos.write(fd, data)": "os.write() to standard output or error",
        "traceback.print_exc()": "traceback.print_exc",
        "exc.show()": "exc.show() to the terminal",
        "click.confirm(question)": "click.confirm() of a question not made terminal_safe",
        "import warnings": "import warnings",
        "sys.exit(f'bad {name}')": "sys.exit() with a message",
        "raise SystemExit('bad')": "SystemExit() with a message",
        "subprocess.run(['git', 'push'])": "subprocess.run() with its output not captured",
    }
    for source, what in cases.items():
        assert [w for _, w in ways_around(ast.parse(source))] == [what], source
    fine = [
        "echo(name)",
        "write_fd(1, name)",
        "os.write(2, b'clm-policy: interrupted\\n')",
        "fd = os.open(path, flags)\nos.write(fd, data)",  # a file it opened (a log)
        "fd, tmp = _create(folder)\nos.write(fd, data)",
        "exc.show(file=buffer)",
        "click.confirm(terminal_safe(question), default=True)",
        "sys.exit(run())",
        "subprocess.Popen(args, stdout=PIPE, stderr=PIPE)",
        "sys.stdin.isatty()",
    ]
    for source in fine:
        assert ways_around(ast.parse(source)) == [], source
