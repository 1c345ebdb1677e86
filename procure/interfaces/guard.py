"""The app answers its own pages only: every request's ``Host`` and, where a browser sends one,
its ``Origin`` are checked against the address the app serves.

Listening on 127.0.0.1 does not keep other web pages out: a page of any site open in the
user's browser can open a websocket to ``ws://127.0.0.1:PORT`` (a websocket is not bound by
the same-origin policy; the browser sends the page's ``Origin``), and a site whose name is
made to resolve to 127.0.0.1 (DNS rebinding) reaches the app with its own name in ``Host``.
Either could drive a session and save a ledger. So, as an ASGI layer around the app:

* ``Host`` must name the served port on a name the app is served at: the ``--host`` given, a
  loopback name (``localhost``, ``127.0.0.1``, ``[::1]``) where the app listens on loopback,
  or, where it listens on every interface (``0.0.0.0``, ``::``), an IP address or this
  machine's own name (a rebound name is neither). A ``Host`` without a port means port 80, as
  it does to a browser;
* ``Origin``, where present, must be ``http://`` (or ``https://``) of such a name and the
  served port, and the name ``Host`` names (any loopback name where ``Host`` names one): the
  page was served by this app at that address, not by another machine's app on the same port.
  A browser sends it on every websocket and on requests other than a plain page load.

Anything else is refused with 403 (a websocket before its handshake completes) and a one-line
body naming what was refused.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Names of this machine's loopback interface.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: Addresses that mean every interface.
EVERY_INTERFACE = frozenset({"0.0.0.0", "::", ""})
#: HTTP status of a refused request.
FORBIDDEN = 403
#: Port a ``Host`` or ``Origin`` without one means, by scheme.
DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _loopback(name: str) -> bool:
    return name in LOOPBACK_NAMES or (_is_ip(name) and ipaddress.ip_address(name).is_loopback)


def served_names(host: str) -> frozenset[str]:
    """The names the app is served at, for an app listening on ``host`` (see the module)."""
    host = host.strip("[]").lower()
    if host in EVERY_INTERFACE:
        return frozenset({*LOOPBACK_NAMES, socket.gethostname().lower(), socket.getfqdn().lower()})
    if _loopback(host):
        return frozenset({*LOOPBACK_NAMES, host})
    return frozenset({host})


def _split_host(value: str) -> tuple[str, int | None]:
    """``name`` and port of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``)."""
    parts = urlsplit(f"//{value}")
    try:
        port = parts.port
    except ValueError:
        return "", -1
    return (parts.hostname or "").lower(), port


class SameOrigin:
    """An ASGI application that passes on only the requests of the app's own pages.

    Parameters
    ----------
    app : ASGI application
        The app.
    host : str
        The address the app listens on (``--host``).
    port : int
        The port it listens on.
    """

    def __init__(self, app: ASGIApp, host: str, port: int) -> None:
        self.app, self.port = app, int(port)
        self.names = served_names(host)
        self.any_ip = host.strip("[]").lower() in EVERY_INTERFACE

    def name_allowed(self, name: str) -> bool:
        """Whether ``name`` is one the app is served at."""
        return name in self.names or (self.any_ip and _is_ip(name))

    def refusal(self, scope: Scope) -> str:
        """Why the request of ``scope`` is refused; "" where it is not."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        name, port = _split_host(headers.get("host", ""))
        if not name or not self.name_allowed(name) or (port or DEFAULT_PORTS["http"]) != self.port:
            return f"Host {headers.get('host', '')!r} is not this app's address"
        origin = headers.get("origin")
        if origin is None:
            return ""
        parts = urlsplit(origin)
        try:
            origin_port = parts.port or DEFAULT_PORTS.get(parts.scheme, -1)
        except ValueError:
            origin_port = -1
        origin_name = (parts.hostname or "").lower()
        same_name = origin_name == name or (_loopback(origin_name) and _loopback(name))
        if parts.scheme not in DEFAULT_PORTS or not self.name_allowed(origin_name) or not same_name:
            return f"Origin {origin!r} is another site"
        if origin_port != self.port:
            return f"Origin {origin!r} is another site"
        return ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why = self.refusal(scope)
        if not why:
            await self.app(scope, receive, send)
            return
        body = f"procure app: refused: {why}\n".encode()
        if scope["type"] == "websocket":
            await receive()  # the connect message
            await send({"type": "websocket.close", "code": 1008})  # before the handshake: HTTP 403
            return
        await send({"type": "http.response.start", "status": FORBIDDEN,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})  # fmt: skip
        await send({"type": "http.response.body", "body": body})
