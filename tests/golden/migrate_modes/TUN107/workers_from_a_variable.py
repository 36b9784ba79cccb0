# rules: TUN107 TUN107
# modes: tune=persistent-workers
import torch

loader = torch.utils.data.DataLoader(range(10), batch_size=4, num_workers=args.workers)
probe = torch.utils.data.DataLoader(range(10), num_workers=max(0, n - 1))
kept = torch.utils.data.DataLoader(range(10), num_workers=n, persistent_workers=n > 0)
