"""Storage errors with messages that say what is wrong, and the translation from fsspec/botocore.

s3fs turns most server answers into builtin ``OSError`` subclasses but keeps the botocore error as
``__cause__``; the error code there is what tells a missing bucket from a missing key or a refused
signature. Every message passes through :func:`redact` so a credential can never leak into a log.
"""

from __future__ import annotations

from collections.abc import Iterable

from ascendify.errors import AscendifyError
from ascendify.storage._remote import READ_TIMEOUT_VARIABLE, bucket_of


class StorageError(AscendifyError):
    """Object storage cannot be used for a channel; the message names the URL and the cause."""


class ChannelError(StorageError):
    """A channel is specified wrongly (unsupported scheme, malformed MA_INPUTS/MA_OUTPUTS)."""


class BucketNotFoundError(StorageError):
    """The bucket named in a URL does not exist at the endpoint."""


class AccessDeniedError(StorageError):
    """The endpoint refused the credentials or the operation."""


class EndpointUnreachableError(StorageError):
    """No connection to the object-storage endpoint could be made."""


class NoSuchKeyError(StorageError):
    """An input URL names neither an object nor a prefix holding objects."""


class UnsafeKeyError(StorageError):
    """An object key would be written outside the staging directory (``..``, ``//abs``, a link)."""


class NoSpaceError(StorageError):
    """The local disk cannot hold what an input channel still has to download."""


class TransferError(StorageError):
    """A copy failed for another reason; the message carries the server's or the system's words."""


_BUCKET_MISSING_CODES = frozenset({"NoSuchBucket"})
_KEY_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
_DENIED_CODES = frozenset(
    {
        "AccessDenied",
        "403",
        "Forbidden",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "InvalidToken",
        "AllAccessDisabled",
        "AccountProblem",
    }
)
_UNREACHABLE_NAMES = frozenset(
    {
        "EndpointConnectionError",
        "ConnectTimeoutError",
        "ConnectionClosedError",
        "ClientConnectorError",
        "ServerDisconnectedError",
        "ConnectionRefusedError",
        "ClientConnectorDNSError",
    }
)

# A server that accepted the connection and then said nothing for the read timeout.
_SILENT_NAMES = frozenset({"ReadTimeoutError", "ServerTimeoutError", "FSTimeoutError"})


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _client_error(error: BaseException) -> tuple[str, str] | None:
    """(code, server message) of the first botocore ClientError in the chain."""
    for link in _chain(error):
        response = getattr(link, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            details = response["Error"]
            return str(details.get("Code", "")), str(details.get("Message", ""))
    return None


def translate(
    error: BaseException,
    url: str,
    *,
    endpoint: str | None,
    secrets: Iterable[str],
    bucket_probe: bool = False,
) -> StorageError:
    """The :class:`StorageError` that explains ``error``, raised while working on ``url``.

    ``bucket_probe`` says the failing call was a HEAD on the bucket itself, where a bare 404
    means the bucket is missing rather than a key.
    """
    where = endpoint or "the default AWS endpoint"
    client = _client_error(error)
    if client is not None:
        code, message = client
        said = f" ({code}: {message})" if message else f" ({code})"
        if code in _BUCKET_MISSING_CODES or (bucket_probe and code in _KEY_MISSING_CODES):
            result: StorageError = BucketNotFoundError(
                f"bucket {bucket_of(url)!r} of {url} does not exist at {where}{said}"
            )
        elif code in _DENIED_CODES:
            result = AccessDeniedError(
                f"access denied to {url} at {where}{said}; check the credentials "
                "(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and bucket policy"
            )
        elif code in _KEY_MISSING_CODES:
            result = NoSuchKeyError(f"no object or prefix {url} at {where}{said}")
        else:
            result = TransferError(f"object storage refused {url} at {where}{said}")
    elif any(type(link).__name__ in _SILENT_NAMES for link in _chain(error)):
        result = EndpointUnreachableError(
            f"the object-storage endpoint {where} accepted a connection for {url} but did not "
            f"answer in time ({error}); check the endpoint, or raise {READ_TIMEOUT_VARIABLE} "
            "(seconds) for a slow store"
        )
    elif any(type(link).__name__ in _UNREACHABLE_NAMES for link in _chain(error)):
        result = EndpointUnreachableError(
            f"cannot reach the object-storage endpoint {where} for {url} ({error}); "
            "check S3_ENDPOINT / AWS_ENDPOINT_URL and the network"
        )
    else:
        result = TransferError(f"copy of {url} failed: {type(error).__name__}: {error}")
    return type(result)(redact(str(result), secrets))
