def broken(:
    return torch.cuda.device_count()
