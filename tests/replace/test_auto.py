"""``ASCENDIFY_REPLACE_UNSUPPORTED=1``: the runtime redirect patches the catalogue's APIs, and only then."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from ascendify import auto
from ascendify.errors import AscendifyError
from ascendify.replace import library

ORIGINAL_LGAMMA = torch.lgamma
ORIGINAL_MODE = torch.mode
ORIGINAL_GAMMA = torch.distributions.Gamma


@pytest.fixture
def replaced() -> Iterator[None]:
    auto.enable("cpu", environ={"RANK": "1", "ASCENDIFY_REPLACE_UNSUPPORTED": "1"})
    try:
        yield
    finally:
        auto.disable()


@pytest.mark.usefixtures("replaced")
def test_opt_in_patches_the_unsupported_apis_and_results_stay_the_same() -> None:
    assert torch.lgamma is library.lgamma
    assert torch.special.gammaln is library.lgamma
    assert torch.distributions.Gamma is library.Gamma
    assert torch.distributions.gamma.Gamma is library.Gamma
    assert torch.linalg.inv is library.linalg_inv
    assert torch.linalg.cholesky is not library.linalg_cholesky  # 2.13 has an NPU kernel
    assert torch.mode is library.mode
    x = torch.linspace(0.5, 4.0, 8)
    votes = torch.tensor([[1, 2, 2], [3, 3, 0]])
    assert torch.equal(torch.mode(votes, 1).values, ORIGINAL_MODE(votes, 1).values)  # no recursion
    torch.manual_seed(3)
    ours = torch.distributions.Gamma(x, x).sample()
    torch.manual_seed(3)
    assert torch.equal(ours, ORIGINAL_GAMMA(x, x).sample())


def test_disable_restores_and_nothing_is_patched_without_the_flag() -> None:
    auto.enable("cpu", environ={"RANK": "1", "ASCENDIFY_REPLACE_UNSUPPORTED": "1"})
    auto.disable()
    assert torch.lgamma is ORIGINAL_LGAMMA
    assert torch.distributions.Gamma is ORIGINAL_GAMMA
    auto.enable("cpu", environ={"RANK": "1"})
    try:
        assert torch.lgamma is ORIGINAL_LGAMMA
    finally:
        auto.disable()


def test_a_bad_flag_value_is_one_clear_error() -> None:
    with pytest.raises(AscendifyError, match="ASCENDIFY_REPLACE_UNSUPPORTED='yes'"):
        auto.enable("cpu", environ={"RANK": "1", "ASCENDIFY_REPLACE_UNSUPPORTED": "yes"})
    assert not auto.is_enabled()
    assert torch.lgamma is ORIGINAL_LGAMMA
