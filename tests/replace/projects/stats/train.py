"""A GPU-style script whose statistics call APIs without NPU kernels; prints its results as JSON."""

import json

import torch
import torch.nn.functional as F
from models.prior import GaussianPrior
from torch import distributions as dist

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)

a = torch.randn(6, 6, device=device)
cov = a @ a.T + 6 * torch.eye(6, device=device)
weights = torch.randn(6, device=device, requires_grad=True)

prior = GaussianPrior(cov)
log_prob = prior.log_prob(weights)
log_prob.backward()

precision = torch.inverse(cov)
sign, logdet = torch.linalg.slogdet(cov)
solution = torch.linalg.solve(cov, weights.detach())
eigenvalues = torch.linalg.eigvalsh(cov)
scores = torch.logcumsumexp(torch.randn(3, 5, device=device), dim=1)
mixing = dist.Beta(torch.tensor([0.4], device=device), torch.tensor([0.4], device=device)).sample()
counts = torch.poisson(torch.full((4,), 3.0, device=device))
nll = torch.lgamma(counts + 1).sum()
votes, _ = torch.mode(torch.tensor([[1, 2, 2, 3], [4, 4, 0, 4]], device=device), dim=1)
pooled = F.fractional_max_pool2d(torch.randn(1, 1, 8, 8, device=device), 2, output_size=4)
chol = torch.linalg.cholesky(cov)

print(
    json.dumps(
        {
            "log_prob": log_prob.item(),
            "grad": weights.grad.tolist(),
            "precision": precision.tolist(),
            "sign": sign.item(),
            "logdet": logdet.item(),
            "solution": solution.tolist(),
            "eigenvalues": eigenvalues.tolist(),
            "scores": scores.tolist(),
            "mixing": mixing.tolist(),
            "counts": counts.tolist(),
            "nll": nll.item(),
            "votes": votes.tolist(),
            "pooled": pooled.tolist(),
            "chol": chol.tolist(),
        }
    )
)
