# rules:
# modes: tune=all
from torch.utils.data import DataLoader

evaluation = DataLoader(range(10), batch_size=4)
kept = DataLoader(range(10), batch_size=4, shuffle=True, drop_last=False)
unshuffled = DataLoader(range(10), shuffle=False)
