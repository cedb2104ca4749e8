"""Which server an `OpenAIModel` talks to, and what that means for its requests.

- **Local or hosted.** A local server (Ollama, llama.cpp's server, vLLM on your machine)
  may not enforce a forced tool choice, and a request then generates until the context is
  full; such requests get a default output limit (`LOCAL_MAX_TOKENS`). Hosted services
  (OpenAI, Azure, Groq, OpenRouter, Gemini's OpenAI-compatible endpoint, ...) get none:
  their own limits apply. Local means `ollama:`, or a `base_url` whose host is
  `localhost` (or `*.localhost`), a loopback or private address (127.0.0.0/8, ::1, 10/8,
  172.16/12, 192.168/16, fc00::/7, link-local), or `host.docker.internal`; an explicit
  `OpenAIModel(local=True | False)` overrides the guess.
- **Reasoning models** (OpenAI's o1, o3, o4 and gpt-5 families) refuse `max_tokens`:
  their limit is `max_completion_tokens` (it counts the hidden reasoning too), so a
  `max_tokens` from the settings is sent under that name. A deployment name that does not
  say so (Azure) takes `OpenAIModel(reasoning_model=True)`.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

LOCAL_MAX_TOKENS = 1024
"""The default output limit of requests to a local server (see `OpenAIModel`)."""

_LOCAL_NAMES = ("localhost", "host.docker.internal")
_REASONING = re.compile(r"^(?:[\w.-]+/)?(?:o[1-9]|gpt-5)(?:\b|[-.])", re.I)


def is_local(base_url: str | None) -> bool:
    """Whether `base_url` is a server on this machine or network (see the module text)."""
    if not base_url:
        return False
    host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "")
    host = host.lower().rstrip(".")
    if host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def is_reasoning_model(name: str) -> bool:
    """Whether a model name is of a family that takes `max_completion_tokens` only
    (o1, o3, o4, gpt-5 and their variants, with or without an `org/` prefix)."""
    return bool(_REASONING.match(name))
