"""Input and output channels of training jobs over object storage (fsspec/s3fs).

``plan_channels`` (pure) finds the channels of a command and rewrites its remote ``--<name>_url``
arguments to local staging dirs; ``JobChannels`` stages inputs before the job and uploads outputs
during and after it; ``copy_tree`` is the copy both directions use. ``check_url``, ``is_remote``
and ``local_path`` tell other parts of the package what a channel URL names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ascendify.storage._errors import (
    AccessDeniedError,
    BucketNotFoundError,
    ChannelError,
    EndpointUnreachableError,
    NoSpaceError,
    NoSuchKeyError,
    StorageError,
    TransferError,
    UnsafeKeyError,
)
from ascendify.storage._plan import Channel, ChannelPlan, check_url, for_node, plan_channels
from ascendify.storage._remote import S3Settings, Secret, is_remote, local_path

if TYPE_CHECKING:
    from ascendify.storage._channels import JobChannels, UploadHistory
    from ascendify.storage._copy import ContentHashes, CopyResult, copy_tree

# The transfer side pulls in fsspec and s3fs; a launcher whose job has no remote channel should not
# pay for that at start-up, so these names are imported on first use.
_LAZY = {
    "JobChannels": "ascendify.storage._channels",
    "UploadHistory": "ascendify.storage._channels",
    "ContentHashes": "ascendify.storage._copy",
    "CopyResult": "ascendify.storage._copy",
    "copy_tree": "ascendify.storage._copy",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AccessDeniedError",
    "BucketNotFoundError",
    "Channel",
    "ChannelError",
    "ChannelPlan",
    "ContentHashes",
    "CopyResult",
    "EndpointUnreachableError",
    "JobChannels",
    "NoSpaceError",
    "NoSuchKeyError",
    "S3Settings",
    "Secret",
    "StorageError",
    "TransferError",
    "UnsafeKeyError",
    "UploadHistory",
    "check_url",
    "copy_tree",
    "for_node",
    "is_remote",
    "local_path",
    "plan_channels",
]
