# rules: PRT102
# modes: portable
import torch

free, total = torch.cuda.mem_get_info()
