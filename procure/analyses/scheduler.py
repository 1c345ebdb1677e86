"""A Dask scheduler's address checked, and the scheduler asked what it is, before any work.

An address has one of the forms :data:`SCHEDULER_FORMS`; the peer must accept the connection
and answer Dask's handshake within :data:`SCHEDULER_TIMEOUT` (Dask's own handshake read has no
timeout, so the question runs in a thread with a bound). A mute peer, a server of another
protocol or a Dask worker are each told apart in one line, before any solve starts.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from typing import Any

from ..errors import InputError
from ..install import install_command

#: The extra that installs Dask.
SCALE_EXTRA = "scale"
#: Seconds a scheduler has to accept the connection and answer Dask's handshake [s].
SCHEDULER_TIMEOUT = 5.0
#: Seconds past the handshake's bound that the thread asking the scheduler is waited for [s].
HANDSHAKE_GRACE_SECONDS = 2.0
#: Seconds a plain TCP connection has, to tell a silent peer from no peer when the handshake
#: failed [s].
CONNECT_CHECK_SECONDS = 1.0
#: Schemes a scheduler's address may have (no scheme: ``tcp``).
SCHEDULER_SCHEMES = ("tcp", "tls")
#: The forms of a scheduler's address, as messages name them.
SCHEDULER_FORMS = "tcp://host:port, tls://host:port or host:port"

_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9._-]+)):(?P<port>[0-9]{1,5})$")


def dask_missing() -> str | None:
    """None when ``dask.distributed`` can be imported, else the one line saying how to get it."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return f"Dask is not installed, so the work runs in this process: {install_command(SCALE_EXTRA)}"
    return None


def scheduler_address(address: str, name: str = "scheduler") -> str:
    """A scheduler's address in full (``host:port`` gets ``tcp://``).

    Parameters
    ----------
    address : str
        ``tcp://host:port``, ``tls://host:port`` or ``host:port``; an IPv6 host in brackets
        (``tcp://[::1]:8786``); the port 1 to 65535.
    name : str, default "scheduler"
        How messages name the argument.

    Raises
    ------
    InputError
        Any other form, naming the forms allowed.
    """
    bad = InputError(f"{name} = {address!r} is invalid: must be {SCHEDULER_FORMS}")
    if not isinstance(address, str):
        raise bad
    scheme, sep, rest = address.strip().partition("://")
    if not sep:
        scheme, rest = "tcp", address.strip()
    match = _HOST_PORT.match(rest)
    if scheme not in SCHEDULER_SCHEMES or match is None or not 1 <= int(match["port"]) <= 65535:
        raise bad
    host = f"[{match['v6']}]" if match["v6"] else match["host"]
    return f"{scheme}://{host}:{int(match['port'])}"


def check_scheduler(address: str, name: str = "scheduler", timeout: float = SCHEDULER_TIMEOUT) -> str:
    """Check that a Dask scheduler answers at ``address``; its address in full.

    Connects and asks the peer who it is, all within ``timeout``: a listener that accepts the
    connection and says nothing, or a server of another protocol, fails in that time.

    Parameters
    ----------
    address : str
        See :func:`scheduler_address`.
    name : str, default "scheduler"
        How messages name the argument.
    timeout : float, default :data:`SCHEDULER_TIMEOUT`
        Seconds for the connection and the handshake [s], > 0.

    Raises
    ------
    InputError
        A malformed address, Dask missing, or no Dask scheduler answering there (one line naming
        the address and what was expected).
    """
    full = scheduler_address(address, name)
    if dask_missing():
        raise InputError(f"{name} = {address!r} needs Dask: {install_command(SCALE_EXTRA)}")
    box: dict[str, Any] = {}

    def ask() -> None:
        try:
            box["reply"] = asyncio.run(asyncio.wait_for(_identity(full, timeout), timeout))
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=ask, name="procure-scheduler-check", daemon=True)
    thread.start()
    thread.join(timeout + HANDSHAKE_GRACE_SECONDS)
    error = box.get("error")
    reply = box.get("reply")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if not thread.is_alive() and error is None and isinstance(kind, str) and kind.endswith("Scheduler"):
        return full
    if isinstance(kind, str):
        why = f"a Dask {kind.lower()} answered there, not a scheduler"
    elif reply is not None:
        why = "it answered, but not as a Dask scheduler"
    elif not _accepts(full):
        why = "nothing accepts connections there"
    elif thread.is_alive() or error is None or isinstance(error, TimeoutError):
        why = f"it accepted the connection but did not answer Dask's handshake within {timeout:g} s"
    else:
        first = str(error).splitlines()[0] if str(error) else ""
        said = f"{type(error).__name__}: {first}" if first else type(error).__name__
        why = f"it accepted the connection but does not speak Dask ({said})"
    raise InputError(f"{name} = {address!r}: {why}; expected a Dask scheduler (the address `dask scheduler` prints)")


def _accepts(address: str) -> bool:
    """Whether anything accepts a TCP connection at a full address (``scheme://host:port``)."""
    match = _HOST_PORT.match(address.partition("://")[2])
    if match is None:
        return False
    try:
        with socket.create_connection((match["v6"] or match["host"], int(match["port"])), CONNECT_CHECK_SECONDS):
            return True
    except OSError:
        return False


async def _identity(address: str, timeout: float) -> Any:
    """What the peer at ``address`` says it is, through Dask's comm layer."""
    from distributed.comm import connect
    from distributed.security import Security

    comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()
