"""Where the ``mem0`` backend's model runs: the user's own OpenAI-compatible endpoint, or the
offline stand-in (clm_policy.memory.mem0_offline). Read from the environment only — never from
a repository or a project file, which may be a stranger's (docs/security.md).

=================================== =========================================================
``CLM_POLICY_MEM0_BASE_URL``        the endpoint for Mem0's LLM and embeddings (no default:
                                    nothing is sent anywhere unasked), or ``offline``
``CLM_POLICY_MEM0_API_KEY``         its key (else ``CLM_POLICY_OPENAI_API_KEY``, else
                                    ``OPENAI_API_KEY``; not needed on this machine)
``CLM_POLICY_MEM0_LLM_MODEL``       the chat model that extracts facts (required)
``CLM_POLICY_MEM0_EMBED_MODEL``     the embedding model (required)
``CLM_POLICY_MEM0_EMBED_DIMS``      its vector size (required: Mem0 assumes 1536 otherwise)
``CLM_POLICY_MEM0_TIMEOUT``         seconds one Mem0 call may take (default 30, at most 600)
=================================== =========================================================

Cheap to import (no Mem0, no pydantic): ``run`` checks the settings before anything starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clm_policy.base.errors import InputError, quote

ENV_BASE_URL = "CLM_POLICY_MEM0_BASE_URL"
ENV_KEYS = ("CLM_POLICY_MEM0_API_KEY", "CLM_POLICY_OPENAI_API_KEY", "OPENAI_API_KEY")
ENV_LLM_MODEL = "CLM_POLICY_MEM0_LLM_MODEL"
ENV_EMBED_MODEL = "CLM_POLICY_MEM0_EMBED_MODEL"
ENV_EMBED_DIMS = "CLM_POLICY_MEM0_EMBED_DIMS"
ENV_TIMEOUT = "CLM_POLICY_MEM0_TIMEOUT"
OFFLINE = "offline"
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
OFFLINE_DIMS = 256
NO_KEY = "not-needed"
"""The key sent to an endpoint on this machine when none is set (Mem0's client wants one)."""


@dataclass(frozen=True)
class Mem0Settings:
    """Mem0's model: ``base_url`` None means the offline stand-in."""

    base_url: str | None
    llm_model: str
    embed_model: str
    dims: int
    api_key: str = field(default=NO_KEY, repr=False)
    timeout: float = DEFAULT_TIMEOUT

    @property
    def shown(self) -> str:
        """Where the model runs, in words (no key)."""
        if self.base_url is None:
            return "the offline stand-in (no model)"
        return f"{self.llm_model} and {self.embed_model} at {self.base_url}"

    @classmethod
    def offline_model(cls, timeout: float = DEFAULT_TIMEOUT) -> Mem0Settings:
        return cls(None, "offline", "offline", OFFLINE_DIMS, timeout=timeout)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Mem0Settings:
        """The settings ``env`` gives; an :class:`InputError` naming the variable otherwise."""
        from clm_policy.base.chat import check_base_url, env_timeout, is_loopback

        timeout = env_timeout(env, ENV_TIMEOUT, DEFAULT_TIMEOUT)
        if not 0 < timeout <= MAX_TIMEOUT:
            raise InputError(f"{ENV_TIMEOUT}: the timeout must be 0 < seconds <= {MAX_TIMEOUT:g}")
        url = (env.get(ENV_BASE_URL) or "").strip()
        if not url:
            raise InputError(
                f"the mem0 memory backend needs a model: set {ENV_BASE_URL} to your "
                f"OpenAI-compatible endpoint (and {ENV_LLM_MODEL}, {ENV_EMBED_MODEL}, "
                f"{ENV_EMBED_DIMS}), or to {OFFLINE!r} for the offline stand-in"
            )
        if url == OFFLINE:
            return cls.offline_model(timeout)
        base = check_base_url(url, ENV_BASE_URL, ENV_KEYS[0])
        missing = [n for n in (ENV_LLM_MODEL, ENV_EMBED_MODEL, ENV_EMBED_DIMS) if not env.get(n)]
        if missing:
            raise InputError(f"the mem0 memory backend at {base}: set {', '.join(missing)}")
        llm, embed = env[ENV_LLM_MODEL].strip(), env[ENV_EMBED_MODEL].strip()
        for name, value in ((ENV_LLM_MODEL, llm), (ENV_EMBED_MODEL, embed)):
            if not value or len(value) > 200 or not value.isprintable():
                raise InputError(f"{name}: {quote(value)} is no model name")
        dims_text = env[ENV_EMBED_DIMS].strip()
        if not dims_text.isdigit() or not 1 <= int(dims_text) <= 65_536:
            raise InputError(f"{ENV_EMBED_DIMS}: {quote(dims_text)} is no vector size (1-65536)")
        source, key = next(((k, env[k]) for k in ENV_KEYS if env.get(k)), (ENV_KEYS[0], ""))
        if not key:
            import urllib.parse

            if not is_loopback(urllib.parse.urlsplit(base).hostname or ""):
                raise InputError(f"no API key for the mem0 backend's endpoint: set {ENV_KEYS[0]}")
            key = NO_KEY
        if not key.isascii() or not key.isprintable() or " " in key:
            raise InputError(f"{source}: the key holds spaces or unprintable characters")
        return cls(base, llm, embed, int(dims_text), key, timeout)
