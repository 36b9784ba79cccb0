# rules: DST001
# modes: distributed=train.py
import torch

print(torch.ones(1))
# output
import torch
import atexit
import datetime
import os
import sys
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch.distributed

# One process per device: rank and device from the launcher (torch's or Ascend's names).
RANK_ID = int(os.environ.get("RANK", os.environ.get("RANK_ID", "0")))
RANK_SIZE = int(os.environ.get("WORLD_SIZE", os.environ.get("RANK_SIZE", "1")))
DEVICE_ID = int(os.environ.get("LOCAL_RANK", os.environ.get("DEVICE_ID", "0")))
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29688")
torch_npu.npu.set_device(DEVICE_ID)
if not torch.distributed.is_initialized():
    torch.distributed.init_process_group("hccl", rank=RANK_ID, world_size=RANK_SIZE)

    def _leave_process_group():
        # Together, at exit: a rank that leaves while others still talk to it may abort.
        # After an uncaught exception it leaves at once (the launcher stops the others).
        if torch.distributed.is_initialized() and not hasattr(sys, "last_value"):
            torch.distributed.barrier(async_op=True).wait(datetime.timedelta(seconds=60))
            torch.distributed.destroy_process_group()

    atexit.register(_leave_process_group)

print(torch.ones(1))
