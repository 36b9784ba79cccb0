"""Where remote channels live: URL forms, endpoint and credentials from the environment.

``obs://`` is Huawei OBS, which speaks the S3 protocol, so both ``s3://`` and ``obs://`` map to one
s3fs filesystem. ModelArts names its endpoint ``S3_ENDPOINT`` (often without a scheme) and writes
OBS locations as ``s3://`` in MA_INPUTS, so the endpoint variables apply to both schemes alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ascendify.errors import AscendifyError

REMOTE_SCHEMES = ("s3", "obs")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_FALSE = ("0", "false", "no", "off")
_CONNECTIONS = 64  # enough connections for the copy workers
_PROBE_CONNECTIONS = 2
TRANSFER_RETRIES = 5  # s3fs's default: each try is botocore's attempts, a broken body resumes
# Seconds: a wrong endpoint fails fast, and a server that accepts connections but never answers
# fails the first contact within read timeout x attempts (15 x 3, plus botocore's back-off).
CONNECT_TIMEOUT_VARIABLE = "ASCENDIFY_S3_CONNECT_TIMEOUT"
READ_TIMEOUT_VARIABLE = "ASCENDIFY_S3_READ_TIMEOUT"
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 15.0
# botocore's own variables and its retry modes: a setting users of AWS tools already know.
_RETRY_MODES = ("legacy", "standard", "adaptive")


def scheme_of(url: str) -> str:
    """The lower-case scheme of ``url``, or ``""`` for a plain path."""
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else ""


def is_remote(url: str) -> bool:
    return scheme_of(url) in REMOTE_SCHEMES


def local_path(url: str) -> str:
    """A local URL as a plain path (``file:///a/b`` -> ``/a/b``); plain paths stay as given."""
    return url[len("file://") :] if scheme_of(url) == "file" else url


def remote_path(url: str) -> str:
    """``s3://bucket/key/`` or ``obs://bucket/key/`` as s3fs's ``bucket/key``."""
    return _SCHEME.sub("", url, count=1).strip("/")


def bucket_of(url: str) -> str:
    return remote_path(url).split("/", 1)[0]


class Secret:
    """A credential that prints as ``***``; only :meth:`reveal` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def _secret(env: Mapping[str, str], name: str) -> Secret | None:
    value = env.get(name)
    return Secret(value) if value else None


def _max_attempts(raw: str) -> int:
    if not raw.strip().isdigit() or int(raw) < 1:
        raise AscendifyError(f"AWS_MAX_ATTEMPTS must be a whole number of at least 1, not {raw!r}")
    return int(raw)


def _timeout(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name) or ""
    if not raw:
        return default
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise AscendifyError(f"{name} must be a number of seconds above 0, not {raw!r}")
    return seconds


def _retry_mode(raw: str) -> str:
    if raw not in _RETRY_MODES:
        raise AscendifyError(
            f"AWS_RETRY_MODE must be one of {', '.join(_RETRY_MODES)}, not {raw!r}"
        )
    return raw


def endpoint_from_env(env: Mapping[str, str]) -> str | None:
    """The endpoint: ``S3_ENDPOINT`` (ModelArts), ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``.

    ModelArts may give ``S3_ENDPOINT`` without a scheme; it then means https unless
    ``S3_USE_HTTPS`` is false.
    """
    raw = env.get("S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if not raw:
        return None
    if scheme_of(raw):
        return raw
    scheme = "http" if env.get("S3_USE_HTTPS", "").lower() in _FALSE else "https"
    return f"{scheme}://{raw}"


@dataclass(frozen=True)
class S3Settings:
    """How to reach the object store. Credentials are :class:`Secret`; None defers to botocore."""

    endpoint_url: str | None = None
    verify_ssl: bool = True
    region: str | None = None
    key: Secret | None = None
    secret: Secret | None = None
    token: Secret | None = None
    max_attempts: int = 3  # per request, the first one included
    retry_mode: str = "standard"
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT  # seconds, per connection attempt
    read_timeout: float = DEFAULT_READ_TIMEOUT  # seconds without a byte from the server

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> S3Settings:
        """Raises :class:`~ascendify.errors.AscendifyError` for a retry or timeout setting that
        cannot be used."""
        return cls(
            endpoint_url=endpoint_from_env(env),
            verify_ssl=env.get("S3_VERIFY_SSL", "1").lower() not in _FALSE,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            key=_secret(env, "AWS_ACCESS_KEY_ID"),
            secret=_secret(env, "AWS_SECRET_ACCESS_KEY"),
            token=_secret(env, "AWS_SESSION_TOKEN"),
            max_attempts=_max_attempts(env.get("AWS_MAX_ATTEMPTS") or "3"),
            retry_mode=_retry_mode(env.get("AWS_RETRY_MODE") or "standard"),
            connect_timeout=_timeout(env, CONNECT_TIMEOUT_VARIABLE, DEFAULT_CONNECT_TIMEOUT),
            read_timeout=_timeout(env, READ_TIMEOUT_VARIABLE, DEFAULT_READ_TIMEOUT),
        )

    def secrets(self) -> tuple[str, ...]:
        """The credential values, for :func:`ascendify.storage._errors.redact`."""
        return tuple(s.reveal() for s in (self.key, self.secret, self.token) if s is not None)

    def filesystem(self, probe: bool = False) -> Any:
        """An s3fs filesystem for these settings; no listing cache, the remote trees change.

        ``probe``: the one for the first contact with the store (is the bucket there?), whose
        requests s3fs does not retry on top of botocore's attempts, so that a store that accepts
        connections and never answers is found within attempts x read timeout. The transfers'
        filesystem keeps s3fs's retries: they resume a download whose body broke off.
        """
        import s3fs

        client_kwargs: dict[str, Any] = {"verify": self.verify_ssl}
        if self.region:
            client_kwargs["region_name"] = self.region
        fs = s3fs.S3FileSystem(
            endpoint_url=self.endpoint_url,
            key=self.key.reveal() if self.key else None,
            secret=self.secret.reveal() if self.secret else None,
            token=self.token.reveal() if self.token else None,
            client_kwargs=client_kwargs,
            config_kwargs={
                "connect_timeout": self.connect_timeout,
                "read_timeout": self.read_timeout,
                # Also tells the two filesystems apart in fsspec's cache of instances.
                "max_pool_connections": _PROBE_CONNECTIONS if probe else _CONNECTIONS,
                # total_max_attempts counts the first request too, as AWS_MAX_ATTEMPTS does;
                # botocore's max_attempts would count only the retries (one attempt more).
                "retries": {"total_max_attempts": self.max_attempts, "mode": self.retry_mode},
            },
            use_listings_cache=False,
            max_concurrency=8,
        )
        fs.retries = 1 if probe else TRANSFER_RETRIES
        return fs
