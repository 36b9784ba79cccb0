"""The rules of ``--target portable``: what each rewrites or reports (their checks live in
:mod:`.apis`, :mod:`.literals` and :mod:`.given_device`)."""

from __future__ import annotations

from ascendify.migrate._rule import Operation
from ascendify.migrate.modes.portable.mode import PortableRule
from ascendify.migrate.rules.devices import DeviceIndex
from ascendify.targets import Safety

_CUDA_TRIGGERS = (b"cuda", b"CUDA")


class ImportPortableDevice(PortableRule):
    """What it does: inserts ``import portable_device`` (and ``import torch`` if the file lacks it)
    after the file's imports when a rewrite calls the generated helper module.

    Why: the helper answers what public torch APIs cannot on every device; it is copied beside
    every file that imports it and into each folder above, up to the result root, so every script
    finds it however it is started.

    Example: a file whose ``torch.cuda.synchronize()`` became ``portable_device.synchronize()``
    gains ``import portable_device``.

    Fix safety: safe.
    """

    code = "PRT001"
    name = "import-portable-device"
    summary = "insert import portable_device"
    safety = Safety.SAFE
    operation = Operation.INSERT


class PortableApi(PortableRule):
    """What it does: rewrites ``torch.cuda`` APIs to device-agnostic spellings:
    ``torch.cuda.is_available`` -> ``torch.accelerator.is_available``, ``torch.cuda.amp`` ->
    ``torch.amp``, and ``synchronize``, ``set_device``, ``device_count``, ``manual_seed``,
    ``Event``, memory statistics, legacy ``FloatTensor`` constructors, the RNG state functions
    and what model-parallel RNG trackers use (``_lazy_call``, ``default_generators``,
    ``torch.cuda.device``, ``torch._C._cuda_setRNGState``) ... -> ``portable_device.*``; a
    ``torch.cuda.manual_seed`` in a function that reads the CUDA RNG state (a tracker seeding the
    state it forks) -> ``portable_device.seed_rng_state``, which seeds the CPU's generator on a host
    without an accelerator.

    Why: ``torch.accelerator`` raises on a CPU-only host and CPU events cannot time; the helper
    does the right thing on NPU, CUDA and CPU.

    Example: ``torch.cuda.synchronize()`` becomes ``portable_device.synchronize()``.

    Fix safety: safe.
    """

    code = "PRT101"
    name = "portable-api"
    summary = "torch.cuda API -> torch.accelerator / torch.amp / portable_device"
    safety = Safety.SAFE
    triggers = _CUDA_TRIGGERS


class PortableApiUnsupported(PortableRule):
    """What it does: reports ``torch.cuda`` APIs without a device-agnostic counterpart
    (device properties, NVTX, CUDA graphs, ``torch.cuda.comm``, ...).

    Why: they mean something only on CUDA; the user keeps them behind a device check.

    Example: ``torch.cuda.get_device_properties(0)`` is left in place and reported.

    Fix safety: report only.
    """

    code = "PRT102"
    name = "portable-api-unsupported"
    summary = "torch.cuda API without a device-agnostic counterpart (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = _CUDA_TRIGGERS


class PortableGuardKept(PortableRule):
    """What it does: keeps a ``torch.cuda.is_available()`` check as written when what it protects
    includes a ``torch.cuda`` API that works on CUDA only (``get_device_capability``, NVTX, CUDA
    graphs, ...), and reports it; inside a check that is widened, device-module functions torch_npu
    has too (``mem_get_info``, ``memory_summary``, ...) become ``portable_device.module().X`` (PRT101).
    The same holds for a check held by a name (``use_cuda = torch.cuda.is_available()``, then ``if
    use_cuda:``) and for the ``torch.cuda.device_count()`` that bounds a loop
    (``for i in range(torch.cuda.device_count())``, directly or through a name), whose body a
    CPU host would run once when widened. What the block calls of the file's own functions counts
    as part of it, and so do the functions and methods of the project's other modules it calls
    (``TRACKER.save()`` with ``TRACKER`` imported from a module whose method ``save`` reaches NVTX).
    A name held for such a block and also read where no CUDA-only call follows
    (``self.cuda = torch.cuda.is_available()``, then ``"cuda" if self.cuda else "cpu"``) is
    split: those other reads become ``torch.accelerator.is_available()`` (PRT101), so the device
    chosen is the host's accelerator; where the name holds more than the check (``not
    args.no_cuda and ...``), the row says that what it chooses stays on the CPU of an NPU host.

    Why: widened to ``torch.accelerator.is_available()``, the check would let an NPU host run a
    CUDA call, which raises there; kept, such a host skips the block as a CPU host does (a loop
    over the devices that read their properties returns ``[]`` there, as it did).

    Example: in ``if torch.cuda.is_available(): cap = torch.cuda.get_device_capability()`` the
    check is kept; in ``if torch.cuda.is_available(): free, total = torch.cuda.mem_get_info()`` it
    becomes ``torch.accelerator.is_available()`` and the call
    ``portable_device.module().mem_get_info()``.

    Fix safety: report only.
    """

    code = "PRT105"
    name = "portable-guard-kept"
    summary = "CUDA availability check or device-count loop bound kept: it protects CUDA-only calls"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = _CUDA_TRIGGERS


class PortableAmpDevice(PortableRule):
    """What it does: passes the host's device type to amp APIs that took CUDA for granted:
    ``torch.cuda.amp.autocast(...)`` (now ``torch.amp.autocast``), ``GradScaler(...)`` and
    ``torch.amp.GradScaler()`` without a device; ``torch.random.fork_rng(...)`` becomes
    ``portable_device.fork_rng(...)``, which forks the CPU's state alone on a host without an
    accelerator (``torch.cpu`` has no RNG state: ``fork_rng(device_type="cpu")`` raises).

    Why: ``torch.amp`` takes the device type first; without it the scaler is bound to CUDA.

    Example: ``scaler = GradScaler()`` (imported from ``torch.cuda.amp``, now ``torch.amp``) becomes
    ``scaler = GradScaler(portable_device.device_type())``.

    Fix safety: safe. Positional arguments of ``autocast`` get their names
    (``autocast(True)`` becomes ``autocast(portable_device.device_type(), enabled=True)``).
    """

    code = "PRT103"
    name = "portable-amp-device"
    summary = "amp call -> explicit device type of the host"
    safety = Safety.SAFE
    triggers = (b"autocast", b"GradScaler", b"fork_rng")


class PortableAmpPositional(PortableRule):
    """What it does: reports ``torch.cuda.amp.autocast`` called with ``*args``.

    Why: ``torch.amp.autocast`` takes ``device_type`` first and ``dtype`` second, so unpacked
    positional arguments cannot be given their names (plain positional ones are, by PRT103).

    Example: ``with autocast(*options):`` is reported; pass the options by keyword.

    Fix safety: report only.
    """

    code = "PRT104"
    name = "portable-amp-positional"
    summary = "torch.cuda.amp.autocast with *args (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"autocast",)


class PortableCudaMethod(PortableRule):
    """What it does: rewrites ``x.cuda(...)`` to ``x.to(portable_device.device(...))``, keeping
    ``non_blocking=`` and the other keywords.

    Why: the device is the host's accelerator, or the CPU where there is none.

    Example: ``images = images.cuda(non_blocking=True)`` becomes
    ``images = images.to(portable_device.device(), non_blocking=True)``.

    A method picked by a conditional (``(x.cuda if gpu else x.cpu)()``) becomes a callable that
    does the same move.

    Fix safety: safe. The project's own ``cuda`` methods are left (NPU203).
    """

    code = "PRT201"
    name = "portable-cuda-method"
    summary = ".cuda() -> .to(portable_device.device())"
    safety = Safety.SAFE
    triggers = (b".cuda",)


class PortableIsCuda(PortableRule):
    """What it does: rewrites ``x.is_cuda`` to ``(x.device.type != "cpu")``.

    Why: code that asks whether data is on the accelerator must say yes on NPU too.

    Example: ``if x.is_cuda:`` becomes ``if (x.device.type != "cpu"):``.

    Fix safety: safe.
    """

    code = "PRT202"
    name = "portable-is-cuda"
    summary = ".is_cuda -> on-accelerator test"
    safety = Safety.SAFE
    triggers = (b"is_cuda",)


class PortableDevice(PortableRule):
    """What it does: replaces CUDA device literals where a device is expected (the places NPU301,
    NPU302 and NPU303 edit) by the host's device type: ``"cuda"`` becomes
    ``portable_device.device_type()``, ``"cuda:0"`` becomes
    ``f"{portable_device.device_type()}:0"``, ``f"cuda:{rank}"`` becomes
    ``f"{portable_device.device_type()}:{rank}"``.

    Why: the same code then runs on ``npu``, ``cuda`` or ``cpu``.

    Example: ``torch.autocast("cuda")`` becomes ``torch.autocast(portable_device.device_type())``.

    Fix safety: safe.
    """

    code = "PRT301"
    name = "portable-device"
    summary = "CUDA device literal -> the host's device type"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class PortableDeviceToHelper(PortableRule):
    """What it does: replaces a CUDA device literal passed by position to a function of another
    module whose name says it takes a device (the places NPU307 edits) by the host's device type:
    ``state_dict_to_device(sd, "cuda")`` becomes
    ``state_dict_to_device(sd, portable_device.device_type())``.

    Why: the helper passes the value on to ``.to()`` or ``torch.device``; a ``cuda`` device does
    not exist on an NPU or CPU host.

    Example: ``batch = move_to_device(batch, "cuda:0")`` becomes
    ``batch = move_to_device(batch, f"{portable_device.device_type()}:0")``.

    Fix safety: unsafe: the helper is read by its name; check that it takes a device there.
    """

    code = "PRT306"
    name = "portable-device-to-helper"
    summary = "CUDA device literal passed to a helper named for devices -> the host's device type"
    safety = Safety.UNSAFE
    triggers = (b"cuda",)


class PortableDeviceToUnknownCall(PortableRule):
    """What it does: reports a CUDA device literal passed by position to a function of another
    module that the migration cannot read (the places NPU308 reports), such as
    ``configure(model, "cuda")`` or a test's ``@pytest.mark.parametrize("device", ["cpu", "cuda"])``.

    Why: the value may be a device the function passes on (then it must name the host's device)
    or a label; the migration cannot tell, and says so rather than leave it silently.

    Example: ``prepare(model, "cuda:0")`` with ``prepare`` imported from a library is reported.

    Fix safety: report only.
    """

    code = "PRT307"
    name = "portable-device-to-unknown-call"
    summary = "CUDA device literal passed to a function the migration cannot read (reported)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"cuda",)


class PortableDeviceIndex(PortableRule):
    """What it does: turns a bare device index passed to ``.to(...)`` (the places NPU304 edits)
    into the host's device: ``model.to(local_rank)`` becomes
    ``model.to(portable_device.device(local_rank))``.

    Why: an integer means a CUDA device to torch, which a CPU-only or NPU host does not have.

    Example: ``source = source.to(self.gpu_id)`` becomes
    ``source = source.to(portable_device.device(self.gpu_id))``.

    Fix safety: unsafe: a variable is taken to be an index by its name (as for NPU304).
    """

    code = "PRT303"
    name = "portable-device-index"
    summary = "integer device index in .to() -> the host's device"
    safety = Safety.UNSAFE
    # ``.to(device=0)`` too, which the NPU target's files reach through NPU306's ``.to(``.
    triggers = (
        *DeviceIndex.triggers,
        *(f"device{equals}{digit}".encode() for equals in ("=", " = ") for digit in range(10)),
    )
    trigger_words = DeviceIndex.trigger_words


class PortableMapLocation(PortableRule):
    """What it does: replaces the CUDA target of ``torch.load(map_location=...)`` by the host's
    device: ``"cuda"`` becomes ``portable_device.device_type()``, ``"cuda:0"`` becomes
    ``portable_device.device(0)`` (dict values too; dict keys name where tensors were saved).

    Why: ``torch.load`` cannot restore to ``"cpu:0"``, so an indexed target must be a device
    object, which is ``cpu`` on a CPU-only host.

    Example: ``torch.load(path, map_location="cuda:0")`` becomes
    ``torch.load(path, map_location=portable_device.device(0))``.

    Fix safety: safe.
    """

    code = "PRT302"
    name = "portable-map-location"
    summary = "torch.load map_location CUDA target -> the host's device"
    safety = Safety.SAFE
    triggers = (b"map_location",)


class PortableBackend(PortableRule):
    """What it does: replaces the ``"nccl"`` backend (where NPU401 would edit) by
    ``portable_device.backend()``, which is ``torch.distributed.get_default_backend_for_device``
    of the host's device (hccl on NPU, nccl on CUDA, gloo on CPU).

    Why: NCCL exists only on NVIDIA GPUs.

    Example: ``dist.init_process_group("nccl")`` becomes
    ``dist.init_process_group(portable_device.backend())``.

    Fix safety: safe.
    """

    code = "PRT401"
    name = "portable-backend"
    summary = "NCCL backend -> backend of the host's device"
    safety = Safety.SAFE
    triggers = (b"nccl", b"NCCL")


class PortableDeviceIds(PortableRule):
    """What it does: wraps ``device_ids``/``output_device`` of ``DistributedDataParallel`` in
    ``portable_device.device_ids(...)``, which is None on a CPU-only host.

    Why: DDP refuses device ids for a module on the CPU.

    Example: ``DDP(model, device_ids=[rank])`` becomes
    ``DDP(model, device_ids=portable_device.device_ids([rank]))``.

    Fix safety: safe.
    """

    code = "PRT402"
    name = "portable-device-ids"
    summary = "DDP device_ids -> None on CPU hosts"
    safety = Safety.SAFE
    triggers = (b"DistributedDataParallel", b"DDP")
