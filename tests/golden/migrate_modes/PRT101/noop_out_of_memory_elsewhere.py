# rules:
# modes: portable
import torch
from mylib.cuda import OutOfMemoryError as LibraryOom


class OutOfMemoryError(RuntimeError):
    """The project's own error, named like torch's."""


try:
    torch.ones(1)
except (torch.OutOfMemoryError, LibraryOom, OutOfMemoryError):
    pass
message = "torch.cuda.OutOfMemoryError"  # text, not code
