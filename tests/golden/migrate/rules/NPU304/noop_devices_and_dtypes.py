# rules:
import torch

x = x.to(device)
y = y.to(torch.float16)
z = z.to(cfg["gpu"])
w = w.to(other_tensor)
v = v.to(1.5)
flag = x.to(True)
u = u.to(device_from_device_id)
t = t.to(self.rank_device)
