from __future__ import annotations

import io

import pytest

from ascendify.auto._choice import ANNOUNCED_VARIABLE, DeviceChoice, announce, choose_device
from ascendify.errors import AscendifyError


def _choose(environ: dict[str, str], npus: int = 0, cudas: int = 0) -> DeviceChoice:
    return choose_device(environ, lambda: npus, lambda: cudas)


def test_fallback_order_is_npu_then_cuda_then_cpu() -> None:
    assert _choose({}, npus=8, cudas=2).device == "npu"
    assert _choose({}, npus=0, cudas=2).device == "cuda"
    cpu = _choose({})
    assert cpu.device == "cpu"
    assert "no NPU" in cpu.reason
    assert "no CUDA" in cpu.reason


def test_the_environment_overrides_the_choice() -> None:
    assert _choose({"ASCENDIFY_DEVICE": "cpu"}, npus=8, cudas=2).device == "cpu"
    assert _choose({"ASCENDIFY_DEVICE": "CUDA"}, npus=8, cudas=2).device == "cuda"
    assert _choose({"ASCENDIFY_DEVICE": "npu"}, npus=1).device == "npu"


@pytest.mark.parametrize(
    ("value", "message"),
    [("gpu", "is not a device"), ("npu", "no NPU is usable"), ("cuda", "no CUDA device")],
)
def test_an_impossible_override_is_a_clear_error(value: str, message: str) -> None:
    with pytest.raises(AscendifyError, match=message):
        _choose({"ASCENDIFY_DEVICE": value})


def test_the_choice_is_announced_once_per_job_on_rank_zero() -> None:
    choice = _choose({})
    stream = io.StringIO()
    environ: dict[str, str] = {"RANK": "0", "LOCAL_RANK": "0"}
    assert announce(choice, environ, stream)
    assert not announce(choice, environ, stream)
    assert stream.getvalue().count("running on CPU") == 1
    assert "ASCENDIFY_DEVICE" in stream.getvalue()
    assert environ[ANNOUNCED_VARIABLE] == "1"  # inherited by the processes this one starts

    quiet = io.StringIO()
    assert not announce(choice, {"RANK": "1", "LOCAL_RANK": "0"}, quiet)
    assert not announce(choice, {"LOCAL_RANK": "1"}, quiet)
    assert quiet.getvalue() == ""


def test_each_device_says_what_is_redirected() -> None:
    assert "nccl -> hccl" in DeviceChoice("npu", "8 NPU(s) visible").announcement()
    assert "nothing redirected" in DeviceChoice("cuda", "1 CUDA device(s)").announcement()
    assert "nccl -> gloo" in DeviceChoice("cpu", "forced").announcement()
