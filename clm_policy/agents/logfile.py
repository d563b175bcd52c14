"""The log of what an agent's hook or status line could not say, in
``$XDG_STATE_HOME/clm-policy/<name>``.

Best effort and cheap to import: a log past its limit is moved to ``<name>.1``; the file is
the user's own (0600) and never followed through a link. Each line passes
:func:`~clm_policy.base.termsafe.terminal_safe`: what it says came from the hook's input, a
transcript or git, and ``tail hook.log`` must be as safe as the hook's own output.
"""

from __future__ import annotations

import os

from clm_policy.base.paths import xdg_home
from clm_policy.base.termsafe import terminal_safe


def log_path(name: str) -> str:
    return os.path.join(xdg_home("XDG_STATE_HOME"), "clm-policy", name)


def append(name: str, text: str, limit: int, detail: str = "") -> None:
    """Append ``text`` to the log ``name`` as one stamped line, whatever it holds, and
    ``detail`` (a traceback) after it. Never fails."""

    import time

    try:
        path = log_path(name)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            if os.lstat(path).st_size > limit:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        # made safe before it is cut: a cut must not leave half a URL's credentials unmasked
        first = terminal_safe(text, lines=False)[:1000]
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {first}\n"
        rest = terminal_safe(detail)[-4000:]
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.write(fd, (line + rest).encode())
        finally:
            os.close(fd)
    except Exception:
        pass
