# rules: DST002 DST103
# modes: distributed=main.py
# path: loop.py
def fit(model, train_loader, epochs):
    for epoch in range(epochs):
        for batch in train_loader:
            model(batch)
# output
import torch
def fit(model, train_loader, epochs):
    for epoch in range(epochs):
        if isinstance(getattr(train_loader, "sampler", None), torch.utils.data.distributed.DistributedSampler):
            train_loader.sampler.set_epoch(epoch)
        for batch in train_loader:
            model(batch)
