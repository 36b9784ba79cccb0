# rules: MDA001 MDA001 MDA001 MDA001 MDA001 MDA002 NPU001
# modes: modelarts
import os
import numpy as np
import torch
from PIL import Image

os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.data, "labels.txt")) as f:
    labels = f.read()
arr = np.load(file="x.npy")
img = Image.open(path)
torch.save(model.state_dict(), f"{args.out}/model.pt")
# output
import os
import numpy as np
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from PIL import Image
from ascend_modelarts_function import ModelArtsPathManager

os.makedirs(ModelArtsPathManager().get_path(args.out), exist_ok=True)
with open(ModelArtsPathManager().get_path(os.path.join(args.data, "labels.txt"))) as f:
    labels = f.read()
arr = np.load(file=ModelArtsPathManager().get_path("x.npy"))
img = Image.open(ModelArtsPathManager().get_path(path))
torch.save(model.state_dict(), ModelArtsPathManager().get_path(f"{args.out}/model.pt"))
