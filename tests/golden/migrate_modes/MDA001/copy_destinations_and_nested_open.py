# rules: MDA001 MDA001 MDA001 MDA001 MDA001 MDA001 MDA002 NPU001
# modes: modelarts
import shutil
import torch

torch.save(state, filename)
shutil.copyfile(filename, "model_best.pth.tar")
shutil.copy(src=a, dst=b)
torch.save(state, open(path, "wb"))
# output
import shutil
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from ascend_modelarts_function import ModelArtsPathManager

torch.save(state, ModelArtsPathManager().get_path(filename))
shutil.copyfile(ModelArtsPathManager().get_path(filename), ModelArtsPathManager().get_path("model_best.pth.tar"))
shutil.copy(src=ModelArtsPathManager().get_path(a), dst=ModelArtsPathManager().get_path(b))
torch.save(state, open(ModelArtsPathManager().get_path(path), "wb"))
