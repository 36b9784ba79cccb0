"""Importing this module enables the runtime redirect: ``import ascendify.transfer_to_npu``.

The one-line counterpart of ``from torch_npu.contrib import transfer_to_npu``; see :mod:`ascendify.auto`.
"""

from __future__ import annotations

from ascendify.auto import enable

CHOICE = enable()
