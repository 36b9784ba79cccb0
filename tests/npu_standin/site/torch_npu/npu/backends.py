"""torch_npu.npu.backends as the npu stand-in for tests; generated from torch_npu 2.13.0 by
scripts/generate_npu_standin.py: do not edit."""

from _npu_standin.module import install as _install

_install(__name__)
