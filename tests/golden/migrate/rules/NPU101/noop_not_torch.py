# rules:
import mylib.cuda as cuda
from numba import jit

cuda.synchronize()
torch = object()
torch.cuda.synchronize()  # "torch" is not imported here
