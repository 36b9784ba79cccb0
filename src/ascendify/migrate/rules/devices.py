"""Device names: ``"cuda"``, ``"cuda:0"`` and ``f"cuda:{rank}"`` where they name a device."""

from __future__ import annotations

import re

from ascendify.migrate._rule import Rule
from ascendify.migrate.rules._literals import Parameter, SlotKind, slot_kind
from ascendify.targets import Safety
from ascendify.targets.devices import CUDA_DEVICE_TYPE, DEVICE_PARAMETERS, NPU_DEVICE_TYPE


class DeviceArgument(Rule):
    """What it does: rewrites a CUDA device literal passed where a device is expected: device
    keywords of any call (``device=``, ``device_type=``, ``output_device=``, ...), the device
    positions of torch factories and constructors (``torch.device("cuda", 0)``,
    ``torch.autocast("cuda")``, ``torch.amp.GradScaler("cuda")``, ``x.to("cuda:0")``,
    ``init_device_mesh("cuda", ...)``), including conditional values, f-strings and
    ``"cuda:{}".format(i)``.

    Why: on an Ascend host the device type is ``npu``; a ``cuda`` device cannot be created.

    Example: ``torch.zeros(3, device=f"cuda:{rank}")`` becomes
    ``torch.zeros(3, device=f"npu:{rank}")``.

    Fix safety: safe. Strings elsewhere (paths such as ``"cuda_ckpt.pt"``, log messages, comments)
    are never touched.
    """

    code = "NPU301"
    name = "device-argument"
    summary = "CUDA device literal passed as a device -> npu"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class DeviceValue(Rule):
    """What it does: rewrites a CUDA device literal that is assigned to a device variable
    (``device = "cuda"``, ``self.device = ...``, ``cfg["device"] = ...``), used as a parameter
    default (``def f(device="cuda")``), as a ``"device"`` entry of a dict, as an argparse
    ``--device`` default or choice, or compared with a device (``x.device.type == "cuda"``,
    ``args.device.startswith("cuda")``).

    Why: the value flows into device arguments later; comparisons must test for the device the
    code now runs on.

    Example: ``if batch.device.type == "cuda":`` becomes ``if batch.device.type == "npu":``.

    Fix safety: safe.
    """

    code = "NPU302"
    name = "device-value"
    summary = "CUDA device literal held or compared as a device -> npu"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class MapLocation(Rule):
    """What it does: rewrites the target device of ``torch.load(map_location=...)`` in all its
    forms: a string, ``torch.device(...)`` (by NPU301), a conditional, and the *values* of a dict
    (``{"cuda:1": "cuda:0"}`` becomes ``{"cuda:1": "npu:0"}``); a lambda that moves storages with
    ``storage.cuda()`` is rewritten by NPU201.

    Why: checkpoints saved on a GPU record CUDA locations; loading them on an NPU host must map
    them to the NPU. Dict keys are the locations recorded in the file and stay CUDA names.

    Example: ``torch.load(path, map_location="cuda:0")`` becomes
    ``torch.load(path, map_location="npu:0")``.

    Fix safety: safe.
    """

    code = "NPU303"
    name = "map-location"
    summary = "torch.load map_location CUDA target -> npu"
    safety = Safety.SAFE
    triggers = (b"map_location",)


def to_npu_device(value: str) -> str | None:
    """``"cuda"`` -> ``"npu"``, ``"cuda:1"`` -> ``"npu:1"``; None for anything else."""
    if value == CUDA_DEVICE_TYPE:
        return NPU_DEVICE_TYPE
    if value.startswith(CUDA_DEVICE_TYPE + ":"):
        return NPU_DEVICE_TYPE + value[len(CUDA_DEVICE_TYPE) :]
    return None


_DEVICE_KEYWORDS = frozenset(
    {"device", "device_type", "map_location", "output_device", "pin_memory_device",
     "device_ids", "device_id"}
)  # fmt: skip

slot_kind(
    SlotKind(
        label="device",
        holder=re.compile(
            r"(?:^|_)(?:dev|device)(?:s|_type|_name|_str)?$|(?:^|_)map_location$", re.I
        ),
        keywords=_DEVICE_KEYWORDS,
        convert=to_npu_device,
        argument_rule=DeviceArgument,
        value_rule=DeviceValue,
        keyword_rules={"map_location": MapLocation},
        holder_attributes=frozenset({"type"}),
    ),
    {
        parameter.callable: Parameter(
            parameter.positions,
            parameter.keywords,
            MapLocation if "map_location" in parameter.keywords else None,
        )
        for parameter in DEVICE_PARAMETERS
    },
)
