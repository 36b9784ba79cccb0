from __future__ import annotations

import pytest

from ascendify.errors import AscendifyError
from ascendify.targets import (
    ApiTarget,
    Safety,
    available_versions,
    explicit_targets,
    load_facts,
    npu_target,
    resolve_version,
)
from ascendify.targets.apis import TORCH_NAMES_SINCE
from ascendify.targets.devices import DEVICE_PARAMETERS, ENV_VARS

FACTS = load_facts("2.13.0")


@pytest.mark.parametrize("target", explicit_targets(), ids=lambda t: t.cuda)
def test_every_emitted_npu_name_exists_in_the_real_wheel(target: ApiTarget) -> None:
    npu = target.npu
    if npu is not None and npu not in TORCH_NAMES_SINCE:  # torch's own: the next test
        assert FACTS.has(npu), f"{npu} is not exported by torch_npu {FACTS.version}"


@pytest.mark.parametrize("version", available_versions())
def test_a_torch_name_is_emitted_only_for_a_release_whose_torch_has_it(version: str) -> None:
    import torch  # here, not at the top: collecting the fast tests should not load torch

    from ascendify.targets import match_api

    facts = load_facts(version)
    match = match_api("torch.cuda.OutOfMemoryError", facts)
    assert match is not None
    if version.startswith("2.1."):  # torch 2.1 has no torch.OutOfMemoryError
        assert match.npu_name is None
        assert match.target.note == (
            "torch.OutOfMemoryError needs torch 2.5 or later; "
            "torch_npu 2.1.0.post17 is built for torch 2.1"
        )
    else:
        assert match.npu_name == "torch.OutOfMemoryError"
    assert torch.OutOfMemoryError is torch.cuda.OutOfMemoryError  # one class: a rename


def test_every_name_of_torch_cuda_is_classified() -> None:
    import torch  # here, not at the top: collecting the fast tests should not load torch

    unclassified = [
        name for name in torch.cuda.__all__ if npu_target(f"torch.cuda.{name}", FACTS) is None
    ]
    assert unclassified == []
    for name in torch.cuda.__all__:
        target = npu_target(f"torch.cuda.{name}", FACTS)
        assert target is not None
        if target.npu is not None:
            assert FACTS.has(target.npu), target


@pytest.mark.parametrize(
    ("cuda", "npu", "safety"),
    [
        ("torch.cuda.set_device", "torch_npu.npu.set_device", Safety.SAFE),
        ("torch.cuda.amp.GradScaler", "torch_npu.npu.amp.GradScaler", Safety.SAFE),
        ("torch.cuda.amp", "torch_npu.npu.amp", Safety.SAFE),
        ("torch.cuda.CUDAGraph", "torch_npu.npu.NPUGraph", Safety.UNSAFE),
        ("torch.cuda.nvtx.range_push", "torch_npu.npu.mstx.range_push", Safety.SAFE),
        ("torch.cuda.nvtx.range", None, Safety.REPORT_ONLY),
        ("torch.cuda.comm.scatter", None, Safety.REPORT_ONLY),
        ("torch.cuda.no_such_api", None, Safety.REPORT_ONLY),
        ("torch.backends.cuda.sdp_kernel", None, Safety.REPORT_ONLY),
        (
            "torch.profiler.ProfilerActivity.CUDA",
            "torch_npu.profiler.ProfilerActivity.NPU",
            Safety.SAFE,
        ),
    ],
)
def test_npu_target_lookup(cuda: str, npu: str | None, safety: Safety) -> None:
    target = npu_target(cuda, FACTS)
    assert target is not None
    assert (target.npu, target.safety) == (npu, safety)


def test_a_rename_does_not_leak_to_members_of_the_renamed_object() -> None:
    # torch.profiler.profile is renamed; torch.profiler.profile.step is a method, not a table entry.
    assert npu_target("torch.profiler.profile.step", FACTS) is None


def test_names_outside_cuda_are_not_ours() -> None:
    assert npu_target("torch.zeros", FACTS) is None
    assert npu_target("os.path.join", FACTS) is None


def test_version_resolution() -> None:
    assert "2.13.0" in available_versions()
    assert resolve_version(None) == "2.13.0"
    assert resolve_version("2.1.0").startswith("2.1.0.post")
    with pytest.raises(AscendifyError, match="known versions"):
        resolve_version("9.9.9")


def test_msfmktransplt_pytorch_versions_pick_the_newest_release_not_after_them() -> None:
    # msFmkTransplt's -v choices: 2.1.0, 2.6.0, 2.7.1, 2.8.0 (no torch_npu data for 2.7.x here)
    assert resolve_version("2.7.1") == "2.6.0"
    assert resolve_version("2.8.0") == "2.8.0"
    assert resolve_version("2.3.1").startswith("2.1.0.post")
    with pytest.raises(AscendifyError, match="known versions"):
        resolve_version("2.7.2")  # not one of its versions: a typo is not guessed at


def test_facts_know_real_kernels_and_gaps() -> None:
    assert FACTS.has_npu_kernel("addmm")
    assert FACTS.has_npu_kernel("convolution") or FACTS.has_npu_kernel("_convolution")
    assert not FACTS.has_npu_kernel("_linalg_eigh")
    assert FACTS.has("torch_npu.npu.set_device")
    assert not FACTS.has("torch_npu.npu.CUDAGraph")


def test_tables_have_no_duplicate_keys() -> None:
    callables = [p.callable for p in DEVICE_PARAMETERS]
    assert len(callables) == len(set(callables))
    names = [e.cuda for e in ENV_VARS]
    assert len(names) == len(set(names))
    cuda_names = [t.cuda for t in explicit_targets()]
    assert len(cuda_names) == len(set(cuda_names))


def _cuda_names() -> list[str]:
    """Every name torch.cuda's namespaces bind, private ones too (what CUDA code may reach)."""
    import importlib

    from ascendify.targets.apis import SAME_NAME_NAMESPACES

    names = []
    for namespace in SAME_NAME_NAMESPACES:
        module = importlib.import_module(namespace)
        names += [f"{namespace}.{name}" for name in vars(module) if not name.startswith("__")]
    return names


def _claims_missing(note: str) -> bool:
    return "no counterpart" in note or "does not exist" in note


@pytest.mark.parametrize("version", available_versions())
def test_no_message_claims_missing_a_name_the_wheel_has(version: str) -> None:
    """A "no counterpart"/"does not exist" row is written only where the release lacks the name
    (private and non-__all__ names included: torch_npu.npu._lazy_call, default_generators)."""
    from ascendify.targets import match_api
    from ascendify.targets.apis import SAME_NAME_NAMESPACES

    facts = load_facts(version)
    false_claims = []
    for qualified in [*_cuda_names(), *(target.cuda for target in explicit_targets())]:
        match = match_api(qualified, facts)
        if match is None or match.npu_name is not None or not _claims_missing(match.target.note):
            continue
        namespace, _, name = qualified.rpartition(".")
        twin = SAME_NAME_NAMESPACES.get(qualified) or (
            f"{SAME_NAME_NAMESPACES[namespace]}.{name}"
            if namespace in SAME_NAME_NAMESPACES
            else None
        )
        if twin is not None and facts.has(twin):
            false_claims.append(f"{qualified}: {match.target.note}")
    assert false_claims == []


def test_names_the_wheel_binds_privately_are_migrated() -> None:
    from ascendify.targets import match_api

    for cuda, npu in (
        ("torch.cuda._lazy_call", "torch_npu.npu._lazy_call"),
        ("torch.cuda.default_generators", "torch_npu.npu.default_generators"),
        ("torch.cuda.amp.common.amp_definitely_not_available",
         "torch_npu.npu.amp.common.amp_definitely_not_available"),
        ("torch.cuda.amp.grad_scaler.GradScaler", "torch_npu.npu.amp.grad_scaler.GradScaler"),
    ):  # fmt: skip
        match = match_api(cuda, FACTS)
        assert match is not None, cuda
        assert match.npu_name == npu, cuda
    assert not FACTS.has("torch_npu.npu._no_such_name")
    assert not FACTS.has("torch_npu.npu.amp.common.no_such_name")
