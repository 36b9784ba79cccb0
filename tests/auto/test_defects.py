"""The known defects of torch_npu's shim, each shown absent here."""

from __future__ import annotations

import sys
import textwrap
import types
import warnings
from pathlib import Path

import pytest
import torch

from ascendify import auto
from ascendify.auto._callsite import warn_once_at_call_site
from ascendify.auto._npu import WarnedAttribute, claimed_availability
from ascendify.auto._patcher import Patcher, Replacement

pytestmark = pytest.mark.cuda_build


@pytest.mark.usefixtures("cpu_redirect")
def test_file_paths_that_contain_cuda_are_never_rewritten(tmp_path: Path) -> None:
    directory = tmp_path / "cuda"
    directory.mkdir()
    path = directory / "cuda:0"
    torch.save(torch.ones(2), str(path))
    assert path.exists()
    assert not (tmp_path / "cpu").exists()
    assert torch.load(str(path), map_location="cuda").tolist() == [1.0, 1.0]
    assert torch.load(path, "cuda:0").tolist() == [1.0, 1.0]


@pytest.mark.usefixtures("cpu_redirect")
def test_torch_jit_script_keeps_working() -> None:
    @torch.jit.script
    def shifted(x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(3) + torch.ones_like(x).to(torch.float32) + torch.arange(3)

    assert isinstance(shifted, torch.jit.ScriptFunction)
    assert shifted(torch.ones(3)).tolist() == [1.0, 2.0, 3.0]
    scripted = torch.jit.script(torch.nn.Linear(2, 2))
    assert scripted(torch.ones(1, 2)).shape == (1, 2)


def test_scripting_still_works_after_disable() -> None:
    auto.enable("cpu", environ={"RANK": "1"})
    auto.disable()

    @torch.jit.script
    def filled(x: torch.Tensor) -> torch.Tensor:
        return torch.full((2,), 3.0) + x

    assert filled(torch.zeros(2)).tolist() == [3.0, 3.0]


@pytest.mark.usefixtures("cpu_redirect")
def test_a_bare_cuda_device_object_keeps_its_meaning() -> None:
    device = torch.device("cuda", 1)
    assert device.type == "cuda"
    assert device.index == 1
    assert str(torch.device("cuda")) == "cuda"
    assert torch.ones(1).to(device).device.type == "cpu"  # redirected only where it is used


@pytest.mark.usefixtures("cpu_redirect")
def test_float64_is_kept_on_the_cpu_and_never_narrowed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = torch.cuda.DoubleTensor([0.1])
        assert values.dtype == torch.float64
        assert torch.ones(1, dtype=torch.float64).cuda().dtype == torch.float64
        assert torch.ones(1).double().to("cuda").dtype == torch.float64


def test_a_narrowed_double_type_warns_once_per_line_that_reads_it() -> None:
    """How the NPU serves torch.cuda.DoubleTensor (as float32), shown on a scratch module."""
    module = types.ModuleType("scratch_cuda")
    module.DoubleTensor = torch.DoubleTensor  # type: ignore[attr-defined]
    patcher = Patcher()
    warned = WarnedAttribute(torch.FloatTensor, "DoubleTensor is float32 here")
    patcher.apply([Replacement("scratch_cuda.DoubleTensor", module, "DoubleTensor", warned)])
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                assert module.DoubleTensor is torch.FloatTensor  # one line, read three times
            assert module.DoubleTensor([1.0]).dtype == torch.float32  # another line
        messages = [str(warning.message) for warning in caught]
        assert len(messages) == 2
        assert all("float32" in message and __file__ in message for message in messages)
        assert {warning.lineno for warning in caught} != {caught[0].lineno}
    finally:
        patcher.revert()
    assert module.DoubleTensor is torch.DoubleTensor
    assert "__getattr__" not in vars(module)


def test_call_site_warnings_name_the_users_line() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = warn_once_at_call_site("narrowed")
        again = [warn_once_at_call_site("elsewhere") for _ in range(2)]
    assert first
    assert again == [True, False]
    assert caught[0].filename == __file__


def test_third_party_libraries_see_the_truth_about_cuda(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an NPU host user code is told CUDA is available; libraries with an NPU branch are not."""
    package = tmp_path / "npu_aware_lib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "device.py").write_text(
        textwrap.dedent(
            """
            def pick(is_available):
                return "cuda" if is_available() else "its own NPU branch"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from npu_aware_lib.device import pick  # type: ignore[import-not-found]

    is_available = claimed_availability(lambda: False, frozenset({"npu_aware_lib"}))
    assert is_available() is True
    assert pick(is_available) == "its own NPU branch"
    sys.modules.pop("npu_aware_lib.device")
    sys.modules.pop("npu_aware_lib")


def test_patching_is_idempotent_and_reversible_for_a_whole_table() -> None:
    originals = (torch.zeros, torch.Tensor.to, torch.cuda.Event, torch.nn.Linear.__init__)
    for _ in range(2):
        auto.enable("cpu", environ={"RANK": "1"})
        auto.enable("cpu", environ={"RANK": "1"})
        assert torch.zeros is not originals[0]
        auto.disable()
        assert (
            torch.zeros,
            torch.Tensor.to,
            torch.cuda.Event,
            torch.nn.Linear.__init__,
        ) == originals


@pytest.mark.usefixtures("cpu_redirect")
def test_torch_compile_traces_through_the_redirect_without_graph_breaks() -> None:
    def step(x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(3, device="cuda") + x.to("cuda") + x.cuda()

    compiled = torch.compile(step, backend="eager", fullgraph=True)
    assert compiled(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
