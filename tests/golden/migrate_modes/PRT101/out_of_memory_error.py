# rules: PRT101 PRT101 PRT101
# modes: portable
import torch
import torch.cuda as tc
from torch.cuda import OutOfMemoryError


def step(batch):
    try:
        return batch * 2
    except torch.cuda.OutOfMemoryError:
        return None
    except tc.OutOfMemoryError as error:
        raise SystemExit(str(error))
    except OutOfMemoryError:
        raise
# output
import torch
import torch.cuda as tc
from torch import OutOfMemoryError


def step(batch):
    try:
        return batch * 2
    except torch.OutOfMemoryError:
        return None
    except torch.OutOfMemoryError as error:
        raise SystemExit(str(error))
    except OutOfMemoryError:
        raise
