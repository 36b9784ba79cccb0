# rules: NPU909 NPU909 NPU909 NPU909 NPU909 NPU909 NPU909
from typing import Literal

import lightning as L


def main(accelerator="gpu", devices=1, *, fallback: Literal["cpu", "cuda"] = "cpu", spare_accelerator: Literal["cpu", "cuda"] = "cpu"):
    trainer = L.Trainer(accelerator="gpu", devices=devices)
    fabric = L.Fabric(accelerator="cuda" if devices else "cpu")
    self_accelerator = "cuda"
    allowed_accelerators = {"cpu", "gpu", "cuda", "auto"}
    if accelerator == "cuda":
        return trainer, fabric, self_accelerator, allowed_accelerators
# output
from typing import Literal

import lightning as L


def main(accelerator="gpu", devices=1, *, fallback: Literal["cpu", "cuda"] = "cpu", spare_accelerator: Literal["cpu", "cuda"] = "cpu"):
    trainer = L.Trainer(accelerator="gpu", devices=devices)
    fabric = L.Fabric(accelerator="cuda" if devices else "cpu")
    self_accelerator = "cuda"
    allowed_accelerators = {"cpu", "gpu", "cuda", "auto"}
    if accelerator == "cuda":
        return trainer, fabric, self_accelerator, allowed_accelerators
