# rules:
from torch.profiler import record_function

with record_function("cuda step"):
    pass
