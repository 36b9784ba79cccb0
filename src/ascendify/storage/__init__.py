"""Input and output channels of training jobs over object storage (fsspec/s3fs).

``plan_channels`` (pure) finds the channels of a command and rewrites its remote ``--<name>_url``
arguments to local staging dirs; ``JobChannels`` stages inputs before the job and uploads outputs
during and after it; ``copy_tree`` is the copy both directions use.
"""

from __future__ import annotations

from ascendify.storage._channels import JobChannels, UploadHistory
from ascendify.storage._copy import ContentHashes, CopyResult, copy_tree
from ascendify.storage._errors import (
    AccessDeniedError,
    BucketNotFoundError,
    ChannelError,
    EndpointUnreachableError,
    NoSpaceError,
    NoSuchKeyError,
    StorageError,
    TransferError,
)
from ascendify.storage._plan import Channel, ChannelPlan, plan_channels
from ascendify.storage._remote import S3Settings, Secret

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
    "UploadHistory",
    "copy_tree",
    "plan_channels",
]
