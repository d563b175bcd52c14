"""The one printer: every character a terminal would obey is shown as an escape, in every
form, and machine formats keep their data (clm_policy/base/termsafe.py)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from ruamel.yaml import YAML

from clm_policy.base.termsafe import echo, one_line, terminal_safe, workflow_command, write_fd

from conftest import runner_commands

# Every character terminal_safe escapes (the module docstring's list), one per class edge.
UNSAFE = [
    *(chr(c) for c in (0x00, 0x07, 0x08, 0x0B, 0x0C, 0x0D, 0x1B, 0x1F)),  # C0 but \t \n
    "\x7f",  # DEL
    *(chr(c) for c in (0x80, 0x85, 0x9B, 0x9D, 0x9F)),  # C1: NEL, CSI, OSC
    "\u2028",
    "\u2029",
    *(chr(c) for c in range(0x202A, 0x202F)),  # LRE RLE PDF LRO RLO
    *(chr(c) for c in range(0x2066, 0x206A)),  # LRI RLI FSI PDI
    "\ud800",
    "\udcc3",  # a file name's undecodable byte (surrogateescape)
]
SAFE = ["a", " ", "\t", "é", "·", "→", "\u00a0", "\u200b", "日本", "\U0001f600", "\\x1b"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]0;pwn\x07", "\\x1b]0;pwn\\x07"),  # OSC 0: the window title
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52: the clipboard
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07", "\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("\x9b31m\x9d0;t\x9c", "\\x9b31m\\x9d0;t\\x9c"),  # the same, as C1 controls
        ("abc\rxyz", "abc\\rxyz"),
        ("evil\u202etxt.yaml", "evil\\u202etxt.yaml"),
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("a\x00b\x7fc", "a\\x00b\\x7fc"),
        ("name\udcff", "name\\udcff"),
        ("line 1\nline 2\tcol", "line 1\nline 2\tcol"),
    ],
)
def test_the_text_form(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_every_unsafe_character_is_escaped_in_every_form() -> None:
    for form in ("text", "json", "yaml", "xml"):
        for c in UNSAFE:
            out = terminal_safe(f"a{c}b", form=form)
            assert out != f"a{c}b", (form, hex(ord(c)))
            assert not any(x in out for x in UNSAFE), (form, hex(ord(c)), out)


def test_safe_text_is_returned_as_it_is() -> None:
    for text in [*SAFE, "".join(SAFE), "a\nb\tc", ""]:
        assert terminal_safe(text) is text
    assert terminal_safe("ctx 41% 82k/200k · compact at 60%", lines=False) == (
        "ctx 41% 82k/200k · compact at 60%"
    )


def test_one_line_shows_a_newline_and_keeps_a_tab() -> None:
    assert terminal_safe("a\nb\tc\r", lines=False) == "a\\nb\tc\\r"


def test_the_result_is_safe_and_a_second_pass_changes_nothing() -> None:
    text = "".join(UNSAFE) + "https://u:t@h/x" + "\n"
    for lines in (True, False):
        once = terminal_safe(text, lines=lines)
        assert not any(c in once for c in UNSAFE)
        assert terminal_safe(once, lines=lines) == once


def test_credentials_in_a_url_are_masked() -> None:
    assert terminal_safe("push https://user:ghp_x@host/r.git failed") == (
        "push https://***@host/r.git failed"
    )


def test_json_form_keeps_the_data() -> None:
    # (a space between: "\\ud800\\udcc3" reads back as one character, in any JSON)
    data = {"name": " ".join(UNSAFE) + "é\n", "list": ["\u202e", "\x85"]}
    for text in (json.dumps(data, ensure_ascii=False), json.dumps(data, indent=2)):
        safe = terminal_safe(text, form="json")
        assert not any(c in safe for c in UNSAFE)
        assert json.loads(safe) == data
        assert terminal_safe(safe) == safe  # the printer finds nothing to change


def test_yaml_form_in_a_double_quoted_scalar_keeps_the_data() -> None:
    value = "r\u202ee\u2066"
    safe = terminal_safe(f'a: "{value}"\n', form="yaml")
    assert safe == 'a: "r\\u202ee\\u2066"\n'
    assert YAML(typ="safe").load(safe) == {"a": value}


def test_xml_form_keeps_what_xml_can_carry() -> None:
    element = ET.Element("t", {"name": "a\u202eb\x85c\x7f"})
    element.text = "x\u2028y\rz"
    safe = terminal_safe(ET.tostring(element, "unicode"), form="xml")
    assert not any(c in safe for c in UNSAFE)
    back = ET.fromstring(safe)
    assert back.get("name") == "a\u202eb\x85c\x7f"
    assert back.text == "x\u2028y\rz"
    # what XML cannot carry at all, not even as a reference, is shown as text
    assert terminal_safe("<t>\x1b\udcc3</t>", form="xml") == "<t>\\x1b\\udcc3</t>"


def test_echo_prints_safe_text(capsys: pytest.CaptureFixture[str]) -> None:
    echo("a\x1b]0;t\x07b")
    echo("one\ntwo", err=True, lines=False)
    echo("x", nl=False)
    out, err = capsys.readouterr()
    assert (out, err) == ("a\\x1b]0;t\\x07b\nx", "one\\ntwo\n")


def test_write_fd_writes_safe_utf8_and_says_when_the_reader_is_gone() -> None:
    read, write = os.pipe()
    assert write_fd(write, "é\x1b\udcc3", lines=False)
    os.close(write)
    assert os.read(read, 100) == "é\\x1b\\udcc3\n".encode()
    os.close(read)
    read, write = os.pipe()
    os.close(read)
    assert write_fd(write, "anything") is False
    os.close(write)


# -- a CI log: workflow commands (GitHub Actions' runner, Azure Pipelines)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("::warning::X", "\\u003a:warning::X"),
        (
            "case\n::warning::X\n::stop-commands::tok",
            "case\n\\u003a:warning::X\n\\u003a:stop-commands::tok",
        ),
        ("a\n   \t::error title=t::m", "a\n   \t\\u003a:error title=t::m"),
        ("\u00a0::add-mask::x", "\u00a0\\u003a:add-mask::x"),  # the runner trims it too
        ("ok ##[warning]All policies OK", "ok \\u0023#[warning]All policies OK"),
        ("x##vso[task.setvariable variable=a]1", "x\\u0023#vso[task.setvariable variable=a]1"),
        ("###[group]", "#\\u0023#[group]"),
        ("std::vector a::b ## heading #[x]", "std::vector a::b ## heading #[x]"),  # mid-line
    ],
)
def test_a_workflow_commands_opening_is_escaped(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown
    assert runner_commands(terminal_safe(text)) == []
    assert terminal_safe(shown) == shown  # a second pass changes nothing


def test_on_one_line_the_newline_is_shown_and_only_the_start_counts() -> None:
    assert terminal_safe("case\n::warning::X", lines=False) == "case\\n::warning::X"
    assert terminal_safe("::warning::X", lines=False) == "\\u003a:warning::X"


def test_a_workflow_commands_opening_keeps_the_data_of_each_form() -> None:
    data = {"name": "##[warning]spoof ##vso[x]", "k": ["::stop-commands::t"]}
    for text in (json.dumps(data), json.dumps(data, indent=2)):
        for form in ("text", "json"):
            safe = terminal_safe(text, form=form)
            assert runner_commands(safe) == []
            assert json.loads(safe) == data
    element = ET.Element("t", {"name": "##[warning]a"})
    element.text = "::error::b\n##[error]c"
    safe = terminal_safe(ET.tostring(element, "unicode"), form="xml")
    assert runner_commands(safe) == []
    back = ET.fromstring(safe)
    assert (back.get("name"), back.text) == ("##[warning]a", "::error::b\n##[error]c")


def test_a_workflow_command_built_here_passes_once() -> None:
    line = workflow_command(
        "error", "FAIL case\n::warning::X 100%", file="a,b:c.yaml", line=3, title="clm t"
    )
    shown = terminal_safe(line)
    assert shown == (
        "::error file=a%2Cb%3Ac.yaml,line=3,title=clm t::FAIL case%0A::warning::X 100%25\n"
    )
    assert runner_commands(shown) == ["error"]
    # in a report, after other lines; a value that copies the line is no command
    report = terminal_safe("FAIL x\n" + line + shown + "  " + shown)
    assert runner_commands(report) == ["error"]
    assert terminal_safe(shown) == "\\u003a" + shown[1:]  # printed again, it is text
    # terminal-safe: the data's controls are shown
    assert terminal_safe(workflow_command("warning", "\x1b]0;t\x07")) == (
        "::warning::\\x1b]0;t\\x07\n"
    )
    assert runner_commands(one_line("::x::\n::y::")) == []
    assert one_line("a\nb") == "a\\nb"
