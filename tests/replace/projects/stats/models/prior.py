import torch
from torch.distributions import MultivariateNormal


class GaussianPrior:
    def __init__(self, covariance: torch.Tensor) -> None:
        self.distribution = MultivariateNormal(
            torch.zeros(covariance.shape[0], device=covariance.device), covariance_matrix=covariance
        )

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return (
            self.distribution.log_prob(value)
            - 0.5 * torch.det(self.distribution.covariance_matrix).log()
        )
