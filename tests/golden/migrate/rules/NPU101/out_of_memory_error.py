# rules: NPU001 NPU101 NPU101 NPU101 NPU201
import torch
import torch.cuda as tc
from torch.cuda import OutOfMemoryError


def step(batch):
    try:
        return batch.cuda()
    except torch.cuda.OutOfMemoryError:
        return None
    except tc.OutOfMemoryError as error:
        raise SystemExit(str(error))
    except OutOfMemoryError:
        raise
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch.cuda as tc
from torch import OutOfMemoryError


def step(batch):
    try:
        return batch.npu()
    except torch.OutOfMemoryError:
        return None
    except torch.OutOfMemoryError as error:
        raise SystemExit(str(error))
    except OutOfMemoryError:
        raise
