# rules: DST102 DST102
# modes: distributed=main.py
# path: data.py
from torch.utils.data import DataLoader

weighted = DataLoader(train_set, sampler=weights)
built = DataLoader(make_set(), batch_size=4)
