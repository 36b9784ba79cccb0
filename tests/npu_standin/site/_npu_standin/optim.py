"""torch_npu.optim's fused optimizers by torch's own (single-tensor) optimizers with the same update
rule: the wheel's constructors take the same parameters in the same order."""

from __future__ import annotations

from typing import Any

import torch


def fused(optimizer: type[torch.optim.Optimizer]) -> type[torch.optim.Optimizer]:
    class Fused(optimizer):  # type: ignore[valid-type,misc]
        def __init__(self, params: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(params, *args, **kwargs, foreach=False)

        def zero_grad(self, set_to_none: bool = False) -> None:  # the wheel's default
            super().zero_grad(set_to_none)

        def clip_grad_norm_fused_(self, max_norm: float, norm_type: float = 2) -> torch.Tensor:
            params = [p for group in self.param_groups for p in group["params"]]
            return torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)

    return Fused


_FUSED = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD,
          "rmsprop": torch.optim.RMSprop, "adadelta": torch.optim.Adadelta}  # fmt: skip
EMULATED_OPTIMIZERS = {
    f"torch_npu.optim.npu_fused_{name}.NpuFused{cls.__name__}": fused(cls)
    for name, cls in _FUSED.items()
}
