"""One OpenAI-compatible chat-completions endpoint, the one HTTP client of clm-policy.

:class:`ChatEndpoint` sends ``POST {base_url}/chat/completions`` with the key as
``Authorization: Bearer``, under a timeout, standard library only. It is shared by everything
that talks to such an endpoint: the agent of ``run --agent openai``
(:mod:`clm_policy.loop.openai_agent`) and the OpenAI summarizer
(:mod:`clm_policy.lifecycle.summarizers`). :func:`check_base_url` decides which URLs it may be
given: http(s) with a host, no user name, password, query or fragment, plain http only to
this machine.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from clm_policy.base.errors import EndpointError, InputError, quote, shorten

ENV_BASE_URL = "CLM_POLICY_OPENAI_BASE_URL"
"""The agent's endpoint (``run --agent openai``); the summarizer falls back to it."""
DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""A reply is a few kilobytes; more than this is not a chat completion."""
MAX_ERROR_BYTES = 64 * 1024
MAX_TIMEOUT = 3600.0
"""The longest timeout an endpoint's configuration may set, in seconds."""

_LOOPBACK_NAMES = ("localhost", "localhost.")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_.:-]{1,60}")


def check_base_url(url: str, variable: str, key_variable: str) -> str:
    """``url`` without a trailing ``/``, if it can take ``/chat/completions`` safely; the
    messages name ``variable`` (where the URL came from) and ``key_variable``."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError:
        raise InputError(f"{variable}: not a URL") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InputError(f"{variable}: not an http(s) URL with a host")
    if parts.username is not None or parts.query or parts.fragment:
        # not quoted: a user name, password or query is where a key might have been put
        raise InputError(
            f"{variable}: a base URL takes no user name, password, query or fragment "
            f"(the key goes in {key_variable})"
        )
    if parts.scheme == "http" and not is_loopback(host):
        raise InputError(
            f"{variable}: plain http only to this machine (localhost, 127.0.0.1, ::1): the "
            "API key would cross the network readable; use https"
        )
    return urllib.parse.urlunsplit(parts).rstrip("/")


def env_timeout(env: Mapping[str, str], variable: str, default: float) -> float:
    """The seconds ``variable`` of ``env`` sets (``default`` when it is unset or empty)."""
    text = env.get(variable)
    try:
        return float(text) if text else default
    except ValueError:
        raise InputError(f"{variable}: {quote(text)} is no number of seconds") from None


def check_endpoint(
    model: str, api_key: str, key_source: str, timeout: float, names: tuple[str, str, str]
) -> None:
    """Refuse a model name, a key or a timeout an endpoint's configuration cannot use;
    ``names``: the model's and the timeout's variables, and what to say when no key is set."""
    model_variable, timeout_variable, no_key = names
    if not model.strip() or len(model) > 200 or not model.isprintable():
        raise InputError(
            f"{model_variable}: {quote(model)} is no model name (1 to 200 printable characters)"
        )
    if not api_key:
        raise InputError(no_key)
    if not api_key.isascii() or not api_key.isprintable() or " " in api_key:
        # said without the key: it goes into a header, where a line break would split it
        raise InputError(f"{key_source}: the key holds spaces or unprintable characters")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(f"{timeout_variable}: the timeout must be 0 < seconds <= {MAX_TIMEOUT:g}")


def is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as the HTTP error it is: the request (and its key) goes only to
    the URL configured."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class ChatEndpointError(EndpointError):
    """An :class:`EndpointError` that says what kind of failure it was, in a few words safe to
    record anywhere (no URL, no key, no body): ``timeout``, ``http <status>``,
    ``connection``, ``too large`` or ``garbage`` (not JSON, or no reply in it)."""

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind


class ChatEndpoint:
    """One OpenAI-compatible chat-completions endpoint at a ``base_url`` that passed
    :func:`check_base_url`. Every failure is a :class:`ChatEndpointError` whose message names
    the URL and what went wrong, never the key or the response body."""

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        self.url = f"{base_url}/chat/completions"
        self.timeout = timeout
        self._api_key = api_key
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        if is_loopback(urllib.parse.urlsplit(base_url).hostname or ""):
            # a server on this machine is reached directly, never through $HTTP_PROXY: plain
            # http with the key in it must not leave the machine
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self) -> str:
        return f"ChatEndpoint({self.url!r}, timeout={self.timeout:g})"

    def complete(self, payload: dict[str, Any]) -> tuple[str, tuple[int, int] | None]:
        """``choices[0].message.content`` of the answer to ``payload``, and
        ``(prompt_tokens, completion_tokens)`` when the server reports them."""
        data = self.post(payload)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise self._error("the response has no choices[0].message.content", "garbage")
        return content, _usage(data.get("usage"))

    def post(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The JSON object the endpoint answers ``payload`` with."""
        request = urllib.request.Request(
            self.url,
            data=json.dumps(payload).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        request.add_unredirected_header("Authorization", f"Bearer {self._api_key}")
        deadline = time.monotonic() + self.timeout
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = _read(response, deadline, MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:
            with exc:
                detail = _error_detail(exc, deadline)
            raise self._error(f"HTTP {exc.code}{detail}", f"http {exc.code}") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise self._timeout() from None
            raise self._error(f"cannot connect ({_reason(exc.reason)})", "connection") from None
        except TimeoutError:
            raise self._timeout() from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._error(f"the connection failed ({_reason(exc)})", "connection") from None
        if raw is None:
            raise self._error(
                f"the response is larger than {MAX_RESPONSE_BYTES // 2**20} MiB", "too large"
            )
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            raise self._error("the response is not a JSON object", "garbage")
        return data

    def _error(self, what: str, kind: str) -> ChatEndpointError:
        return ChatEndpointError(f"POST {self.url}: {what}", kind)

    def _timeout(self) -> ChatEndpointError:
        return self._error(f"no answer within {self.timeout:g} s", "timeout")


def _usage(value: object) -> tuple[int, int] | None:
    """``(prompt_tokens, completion_tokens)`` when both are counts; else None (estimate)."""
    if not isinstance(value, dict):
        return None
    prompt, completion = value.get("prompt_tokens"), value.get("completion_tokens")
    counts = [x for x in (prompt, completion) if isinstance(x, int) and not isinstance(x, bool)]
    if len(counts) != 2 or not all(0 <= x < 2**63 for x in counts) or not sum(counts):
        return None
    return counts[0], counts[1]


def _read(
    response: http.client.HTTPResponse | urllib.error.HTTPError, deadline: float, limit: int
) -> bytes | None:
    """The body, read by chunks until ``deadline`` (TimeoutError); None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError
        chunk = response.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)


def _error_detail(exc: urllib.error.HTTPError, deadline: float) -> str:
    """`` (reason, code)``: the error's identifiers an OpenAI-style body gives, never its text
    (a message may quote the key); else the HTTP reason phrase."""
    found: list[str] = []
    try:
        body = json.loads(_read(exc, deadline, MAX_ERROR_BYTES) or b"")
    except (OSError, ValueError, RecursionError, http.client.HTTPException):
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        for name in ("type", "code"):
            value = error.get(name)
            if isinstance(value, str) and _IDENTIFIER.fullmatch(value) and value not in found:
                found.append(value)
    if not found and isinstance(exc.reason, str) and exc.reason:
        found.append(shorten(exc.reason, 40))
    return f" ({', '.join(found)})" if found else ""


def _reason(reason: object) -> str:
    if isinstance(reason, OSError) and reason.strerror:
        return shorten(reason.strerror, 60)
    return type(reason).__name__
