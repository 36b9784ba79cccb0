"""The job pages: ``ascendify job ui`` serves them (Flask, the ``ui`` extra) on this machine.

:func:`serve` runs the server until interrupted; :func:`bind` makes it (the tests serve it in a
thread); the app and its API are in :mod:`.app`. The pages answer only requests addressed to
the host and port they serve (:func:`served_hosts`), so a page of another site whose name is
made to point here (DNS rebinding) reads nothing; actions also need the token of the URL printed
at start-up.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascendify.errors import AscendifyError
from ascendify.jobs.store import JobStore

if TYPE_CHECKING:
    from werkzeug.serving import BaseWSGIServer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8422
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Pages:
    """A server of the pages, bound and not yet serving."""

    server: BaseWSGIServer
    base: str  # http://HOST:PORT/
    token: str | None  # what actions need; None when they are not allowed

    @property
    def url(self) -> str:
        """The URL to open, as printed: with the token when actions are allowed."""
        return self.base if self.token is None else f"{self.base}?token={self.token}"


def bind(
    store: JobStore, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, allow_actions: bool
) -> Pages:
    """The pages of ``store`` on ``host:port`` (port 0: a free one), listening."""
    try:
        from werkzeug.serving import make_server

        from ascendify.web.app import SERVED_HOSTS, create_app
    except ImportError:
        raise AscendifyError("the job pages need Flask: pip install 'ascendify[ui]'") from None
    if not 0 <= port <= 65535:
        raise AscendifyError(f"--port {port}: a port is 0..65535 (0 picks a free one)")
    token = secrets.token_urlsafe(24) if allow_actions else None
    app = create_app(store, allow_actions=allow_actions, token=token)
    try:
        server = make_server(host, port, app, threaded=True)
    except (OSError, OverflowError) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise AscendifyError(f"cannot serve on {host}:{port}: {why}") from None
    app.config[SERVED_HOSTS] = served_hosts(host, server.port)
    return Pages(server, f"http://{_bracketed(host)}:{server.port}/", token)


def serve(
    store: JobStore,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_actions: bool = False,
    ready: Callable[[str], None] = print,
) -> None:
    """Serve the pages until Ctrl-C; ``ready`` gets the URL once the socket listens."""
    pages = bind(store, host=host, port=port, allow_actions=allow_actions)
    ready(pages.url)
    if not _loopback(host):
        ready(f"warning: {host} is reachable from other machines; the pages have no login")
    try:
        pages.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        pages.server.server_close()


def served_hosts(host: str, port: int) -> frozenset[str]:
    """The ``Host`` values the pages answer: the loopback names and ``host``, with ``port``.

    Bound to every address (0.0.0.0, ::), also this machine's names and addresses."""
    names = {*LOOPBACK_NAMES, host}
    if _wildcard(host):
        import psutil

        names |= {socket.gethostname(), socket.getfqdn()}
        names |= {
            found.address.partition("%")[0]  # fe80::1%eth0: the zone is not in a Host
            for addresses in psutil.net_if_addrs().values()
            for found in addresses
            if found.family in (socket.AF_INET, socket.AF_INET6)
        }
    return frozenset(
        f"{_bracketed(name)}{suffix}".lower()
        for name in names
        for suffix in ((f":{port}", "") if port == 80 else (f":{port}",))
    )


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
