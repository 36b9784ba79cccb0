"""The job pages: ``ascendify job ui`` serves them (Flask, the ``ui`` extra) on this machine.

:func:`serve` runs the server until interrupted; the app and its API are in :mod:`.app`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from ascendify.errors import AscendifyError
from ascendify.jobs.store import JobStore

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8422


def serve(
    store: JobStore,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_actions: bool = False,
    ready: Callable[[str], None] = print,
) -> None:
    """Serve the pages until Ctrl-C; ``ready`` gets the URL once the socket listens."""
    try:
        from werkzeug.serving import make_server

        from ascendify.web.app import create_app
    except ImportError:
        raise AscendifyError("the job pages need Flask: pip install 'ascendify[ui]'") from None
    try:
        server = make_server(
            host, port, create_app(store, allow_actions=allow_actions), threaded=True
        )
    except OSError as error:
        raise AscendifyError(f"cannot serve on {host}:{port}: {error.strerror or error}") from None
    shown = f"[{host}]" if ":" in host else host
    ready(f"http://{shown}:{server.port}/")
    if not _loopback(host):
        ready(f"warning: {host} is reachable from other machines; the pages have no login")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"
