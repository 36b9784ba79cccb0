# rules: NPU001 NPU201 NPU201 TUN001
# modes: tune=compile-mode
import torch

model = torch.nn.Linear(2, 2).cuda()

if __name__ == "__main__":
    print(model(torch.ones(2).cuda()))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
torch_npu.npu.set_compile_mode(jit_compile=False)

model = torch.nn.Linear(2, 2).npu()

if __name__ == "__main__":
    print(model(torch.ones(2).npu()))
