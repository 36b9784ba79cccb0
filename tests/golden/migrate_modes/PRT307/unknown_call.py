# rules: PRT307 PRT307
# modes: portable
import pytest
from library import prepare


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_step(device):
    return prepare(device, "cuda:0")
