"""A command shown on one line: here-document bodies left out, lines joined as they run."""

from __future__ import annotations

import pytest

from clm_policy.base.commands import command_line

EDIT_THEN_TEST = (
    "python - <<'PY'\nfrom pathlib import Path\ntext = Path('a.rs').read_text()\n"
    "Path('a.rs').write_text(text.replace('x', 'y'))\nPY\n"
    "nix develop -c cargo test --manifest-path kernel/Cargo.toml\nnpm run build --workspace ui"
)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("pytest -q tests", "pytest -q tests"),
        (
            EDIT_THEN_TEST,
            "python - <<'PY' …; nix develop -c cargo test --manifest-path kernel/Cargo.toml; "
            "npm run build --workspace ui",
        ),
        # unquoted and double-quoted words, <<- with tabs, two documents on one line
        ("cat > a <<EOF\nbody\nEOF\ngit add a", "cat > a <<EOF …; git add a"),
        ('cat <<"END" > b\n$x\nEND', 'cat <<"END" > b …'),
        ("cat <<-EOF\n\tbody\n\tEOF\nls", "cat <<-EOF …; ls"),
        ("paste <<A <<B\n1\nA\n2\nB\necho done", "paste <<A <<B …; echo done"),
        # a line that continues joins with a space; comments and blank lines go
        ("git add a && \\\n  git commit -m x\n\n# then\nls", "git add a && git commit -m x; ls"),
        ("for f in *; do\n  echo $f\ndone", "for f in *; do echo $f; done"),
        # a here-string is no document; a document never closed hides the rest
        ('grep x <<< "a\nb"', 'grep x <<< "a; b"'),
        ("cat <<EOF\nnever closed\nstill body", "cat <<EOF …"),
    ],
)
def test_command_line(command: str, shown: str) -> None:
    assert command_line(command, 500) == shown


def test_a_long_command_is_cut_as_every_line_is() -> None:
    assert command_line("echo " + "a" * 300, 20) == "echo " + "a" * 14 + "…"
    assert command_line(EDIT_THEN_TEST, 30) == "python - <<'PY' …; nix develo…"
