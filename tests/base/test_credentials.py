"""URLs are shown without their credentials (clm_policy/base/credentials.py)."""

from __future__ import annotations

import pytest

from clm_policy.base.credentials import mask_credentials


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:ghp_abc@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("https://ghp_abc@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("http://u:p@127.0.0.1:1/x.git", "http://***@127.0.0.1:1/x.git"),
        ("ssh://git@host:22/r.git", "ssh://***@host:22/r.git"),
        ("file://user:tok@localhost/srv/r.git", "file://***@localhost/srv/r.git"),
        ("HTTPS://U:P@H/x", "HTTPS://***@H/x"),
        # a password with an unescaped "@": everything up to the host's "@"
        ("https://u:p@ss@host/x", "https://***@host/x"),
        ("https://u:p@host", "https://***@host"),
        ("https://u:p@host?x=1", "https://***@host?x=1"),
        # in a message, quoted, twice
        (
            "pushing to 'https://a:b@h/x' failed: git push -- https://a:b@h/x main",
            "pushing to 'https://***@h/x' failed: git push -- https://***@h/x main",
        ),
    ],
)
def test_credentials_are_masked(text: str, shown: str) -> None:
    assert mask_credentials(text) == shown
    assert mask_credentials(shown) == shown


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com/o/r.git",
        "git@github.com:o/r.git",  # scp-like: a user name, no secret
        "mail me at a@b.c, or see https://host/a@b",  # an "@" after the path is no user info
        "https://host/path x@y",
        "origin",
        "",
    ],
)
def test_what_holds_no_credentials_is_left_alone(text: str) -> None:
    assert mask_credentials(text) == text
