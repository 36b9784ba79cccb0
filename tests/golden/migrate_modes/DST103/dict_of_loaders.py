# rules: DST002 DST101 DST101 DST101 DST103 DST103 NPU001
# modes: distributed=main.py
# path: loop.py
from torch.utils.data import DataLoader

dataloaders = {x: DataLoader(datasets[x], batch_size=4, shuffle=True) for x in ["train", "val"]}
data = {"train": DataLoader(train_set), "val": DataLoader(val_set)}


def fit(model, epochs):
    for epoch in range(epochs):
        for phase in ["train", "val"]:
            for inputs, labels in dataloaders[phase]:
                model(inputs)
        for batch in data["val"]:
            model(batch)
# output
from torch.utils.data import DataLoader
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch

dataloaders = {x: DataLoader(datasets[x], batch_size=4, sampler=torch.utils.data.distributed.DistributedSampler(datasets[x], shuffle=True)) for x in ["train", "val"]}
data = {"train": DataLoader(train_set, sampler=torch.utils.data.distributed.DistributedSampler(train_set, shuffle=False)), "val": DataLoader(val_set, sampler=torch.utils.data.distributed.DistributedSampler(val_set, shuffle=False))}


def fit(model, epochs):
    for epoch in range(epochs):
        for _loader in data.values():
            if isinstance(getattr(_loader, "sampler", None), torch.utils.data.distributed.DistributedSampler):
                _loader.sampler.set_epoch(epoch)
        for _loader in dataloaders.values():
            if isinstance(getattr(_loader, "sampler", None), torch.utils.data.distributed.DistributedSampler):
                _loader.sampler.set_epoch(epoch)
        for phase in ["train", "val"]:
            for inputs, labels in dataloaders[phase]:
                model(inputs)
        for batch in data["val"]:
            model(batch)
