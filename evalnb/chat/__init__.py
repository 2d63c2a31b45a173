"""The chat-completions client that judges and the ``OpenAIChat`` agent share, in its parts:

* :mod:`evalnb.chat._client`: :class:`ChatClient` (OpenAI, Azure OpenAI and compatible servers), retries with
  backoff, ``Retry-After``, secrets kept out of messages;
* :mod:`evalnb.chat._limiter`: the adaptive (AIMD) concurrency limit per endpoint;
* :mod:`evalnb.chat._wire`: evalnb's own HTTP/1.1 client (keep-alive connections pooled per origin, TLS);
* :mod:`evalnb.chat._session`: the transports, one of each per event loop (that pool for direct calls, an
  ``aiohttp`` session for calls through a proxy);
* :mod:`evalnb.chat._net`: what every HTTP caller shares: ``Retry-After`` parsing, the start-up probe, safe URLs,
  redirects.

Importing it stays light: aiohttp is imported only by the first call through a proxy.

Example::

    from evalnb.chat import ChatClient
    reply = await ChatClient("llama3.1", base_url="http://127.0.0.1:11434/v1").complete("Say hi")
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.chat._client import ChatClient, ChatReply
from evalnb.errors import ChatError

__all__ = ["ChatClient", "ChatError", "ChatReply"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
