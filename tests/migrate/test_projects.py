"""Realistic GPU scripts migrated file by file: the NPU code we expect, and nothing broken."""

from __future__ import annotations

import ast

import pytest

from ascendify.migrate import Changed, Failed, Settings, Skipped, migrate_source
from ascendify.migrate._imports import IMPORT_TORCH_NPU
from ascendify.targets import load_facts
from tests.migrate._cases import PROJECT
from tests.migrate.test_rules import _EMITTED_NPU_NAME

FACTS = load_facts()


def migrate_project_file(name: str) -> Changed:
    result = migrate_source((PROJECT / name).read_bytes(), Settings())
    assert isinstance(result, Changed), result
    ast.parse(result.data)
    again = migrate_source(result.data, Settings())
    assert not isinstance(again, Changed)
    for npu_name in _EMITTED_NPU_NAME.findall(result.data.decode(result.encoding)):
        assert FACTS.has(npu_name), npu_name
    return result


def test_classifier_with_ddp_and_amp() -> None:
    text = migrate_project_file("train_classifier.py").data.decode()
    for expected in (
        f"import torch\n{IMPORT_TORCH_NPU}\n",
        "from torch_npu.npu.amp import GradScaler, autocast",
        'parser.add_argument("--device", default="npu", choices=["npu", "cpu"])',
        'parser.add_argument("--dist-backend", default="hccl", help="use nccl for GPUs")',
        'def setup_distributed(backend: str = "hccl")',
        'os.environ.setdefault("TORCH_HCCL_ASYNC_ERROR_HANDLING", "1")',
        "torch_npu.npu.set_device(local_rank)",
        'device = torch.device(f"npu:{local_rank}")',
        "images = images.npu(non_blocking=True)",
        'map_location=f"npu:{local_rank}"',
        "torch_npu.npu.max_memory_allocated()",
        # Never touched: paths, messages, docstrings, comments.
        '"checkpoints/cuda_run/last.pt"',
        'on cuda")',
        "Checkpoints are written to ./checkpoints/cuda_run/",
        'description="ResNet training on cuda devices"',
    ):
        assert expected in text, expected
    assert "torch.cuda" not in text.replace("torch.cuda.amp", "")


def test_language_model_with_profiler_and_autocast() -> None:
    text = migrate_project_file("train_lm.py").data.decode()
    for expected in (
        "from torch_npu.profiler import ProfilerActivity, profile, schedule, "
        "tensorboard_trace_handler",
        "activities=[ProfilerActivity.CPU, ProfilerActivity.NPU]",
        'DEVICE = "npu" if torch_npu.npu.is_available() else "cpu"',
        'os.environ["PYTORCH_NPU_ALLOC_CONF"]',
        'torch.autocast(device_type="npu"',
        'if DEVICE == "npu":',
        "torch_npu.npu.is_bf16_supported()",
        '"lm_cuda.pt"',
    ):
        assert expected in text, expected


def test_legacy_idioms() -> None:
    result = migrate_project_file("scripts/legacy_idioms.py")
    text = result.data.decode()
    for expected in (
        "dtype = torch_npu.npu.FloatTensor if USE_CUDA else torch.FloatTensor",
        't.type("torch.npu.HalfTensor") if t.is_npu',
        "map_location=lambda storage, loc: storage.npu()",
        "start = torch_npu.npu.Event(enable_timing=True)",
        "g = torch_npu.npu.NPUGraph()",
        "with torch_npu.npu.graph(g):",
        'profile(use_device="npu")',
        'torch_npu.npu.mstx.range_push("timed")',  # NVTX marks -> msprof marks
    ):
        assert expected in text, expected
    codes = {change.code for change in result.changes}
    assert {"NPU103", "NPU105", "NPU403", "NPU701", "NPU901", "NPU902"} <= codes
    unsafe = {c.code for c in result.changes if c.safety.value == "unsafe"}
    assert unsafe == {"NPU102", "NPU105", "NPU701"}
    # Reads of values torch_npu gives otherwise keep running (None capability, no .major).
    assert 'if getattr(torch_npu.npu.get_device_properties(0), "major", 0) >= 8:' in text


def test_latin1_file_with_a_coding_cookie() -> None:
    original = (PROJECT / "scripts/latin1_cookie.py").read_bytes()
    result = migrate_project_file("scripts/latin1_cookie.py")
    assert result.encoding == "iso-8859-1"
    assert result.data.startswith(original.split(b"import torch\n")[0])
    assert b'label = "r\xe9seau"  # \xe9tiquette\n' in result.data
    assert b'x = torch.ones(2, device="npu:0")  # \xe0 la carte\n' in result.data


@pytest.mark.parametrize("name", ["scripts/python2_eval.py", "scripts/broken_syntax.py"])
def test_unparseable_files_fail_with_a_reason(name: str) -> None:
    result = migrate_source((PROJECT / name).read_bytes(), Settings())
    assert isinstance(result, Failed)
    assert "does not parse" in result.error


def test_a_file_without_device_code_is_not_parsed() -> None:
    result = migrate_source((PROJECT / "models/resnet.py").read_bytes(), Settings())
    assert isinstance(result, Skipped)
