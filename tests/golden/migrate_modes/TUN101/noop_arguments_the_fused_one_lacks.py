# rules:
# modes: tune=all
import torch

params = [torch.nn.Parameter(torch.ones(2))]
adamw = torch.optim.AdamW(params, lr=1e-3, foreach=True)
sgd = torch.optim.SGD(params)
options = {"lr": 0.1}
rmsprop = torch.optim.RMSprop(params, **options)
lamb = torch.optim.Adagrad(params)
