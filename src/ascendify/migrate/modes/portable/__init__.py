"""``--target portable``: device-agnostic code for NPU, CUDA and CPU hosts, public torch APIs only.

Where torch cannot say something on every device, the code calls the generated ``portable_device``
module that the run copies into the result (never ascendify). Device and backend literals are found by
the same slot machinery as the NPU rules (:mod:`ascendify.migrate.rules._literals`); only the
replacement differs: an expression asking the host, not another literal.

The modules, imported here in the order their checks run: :mod:`.mode` (the mode, the helper file),
:mod:`.rules` (the rule declarations), :mod:`.guards` (which CUDA checks stay), :mod:`.apis` (the
API rewrites and the helper import), :mod:`.literals` (device and backend literals),
:mod:`.given_device` (devices given at run time) and :mod:`.libraries` (flash-attn, xformers, apex).
"""

from ascendify.migrate.modes.portable import (  # noqa: F401  (each registers its checks)
    apis,
    given_device,
    libraries,
    literals,
)
from ascendify.migrate.modes.portable.mode import PORTABLE, PortableRule

__all__ = ["PORTABLE", "PortableRule"]
