"""URLs shown without their credentials: ``https://user:token@host/x.git`` is shown as
``https://***@host/x.git``.

A remote given to ``handoff --push`` or named in ``.clm-policy.yaml`` may carry a token in its
user information, and git, clm-policy's messages and a hook's log would repeat it wherever the
remote is named — on a terminal, in a CI log, in ``hook.log``. :func:`mask_credentials` is
the one function that hides it: every message that names a remote (clm_policy.memory.git),
git's own error output passed on, and every line the printer
(:func:`clm_policy.base.termsafe.terminal_safe`) or a log writes passes it. A URL without user
information is left as it is; so is the ``user@host:path`` form, which carries no secret.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MASK = "***"
_URL: list[re.Pattern[str]] = []


def mask_credentials(text: str) -> str:
    """``text`` with the user information of every ``scheme://user[:password]@host`` replaced
    by :data:`MASK` (all of it up to the last ``@`` before the host: a password may hold an
    unescaped ``@``)."""
    if "@" not in text or "://" not in text:
        return text
    if not _URL:
        import re

        # the scheme (RFC 3986), then the authority up to its last "@": no "/", "?", "#" or
        # white space before it
        _URL.append(re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]+@"))
    return _URL[0].sub(rf"\1{MASK}@", text)
