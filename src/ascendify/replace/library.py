"""Replacements for PyTorch APIs that have no NPU kernel in some torch_npu releases.

``ascendify migrate -sim`` copies the functions a project calls (with the private helpers they use) into
the result as ``ascend_function/__init__.py``; ``ascendify.auto`` patches them into torch when
``ASCENDIFY_REPLACE_UNSUPPORTED=1``. This module imports nothing but torch, so a migrated project runs on
NPU, CUDA and CPU hosts alike.

Two kinds (the catalogue in ``ascendify.replace.catalogue`` says which each function is):

- exact: a composite of operators that have NPU kernels; same dtype, shape and gradient as the original,
  values within the catalogue's stated tolerance;
- fallback: the original operator runs on the CPU and the result moves back to the input's device.
  Slow (two copies and a host sync per call), but it computes exactly what the original computes on the
  CPU, random draws included (they come from the CPU generator).

Each function's docstring says what it does, why, an example, and how safe it is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

# The originals, captured at import so that the runtime redirect, which patches torch with the functions
# below, does not make them call themselves.
_CPU = torch.device("cpu")
_STIRLING_FROM = 10.0  # the asymptotic series of lgamma and digamma is exact to float64 from here
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
_NO_SHAPE = torch.Size()
_polygamma = torch.polygamma
_mode = torch.mode
_histogram = torch.histogram
_poisson = torch.poisson
_eigh = torch.linalg.eigh
_eigvalsh = torch.linalg.eigvalsh
_fractional_max_pool2d = torch.nn.functional.fractional_max_pool2d
_Gamma = torch.distributions.Gamma
_Dirichlet = torch.distributions.Dirichlet
_Beta = torch.distributions.Beta
_Poisson = torch.distributions.Poisson
_Binomial = torch.distributions.Binomial
_MultivariateNormal = torch.distributions.MultivariateNormal


def _device_of(values: Any) -> torch.device:
    """The device of the first tensor among ``values`` (nested in tuples, lists and dicts)."""
    stack = [values]
    while stack:
        value = stack.pop(0)
        if isinstance(value, torch.Tensor):
            return value.device
        if isinstance(value, tuple | list):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return _CPU


def _moved(value: Any, device: torch.device) -> Any:
    """``value`` with every tensor in it moved to ``device`` (differentiably); result types are kept."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {key: _moved(item, device) for key, item in value.items()}
    if isinstance(value, list):
        return [_moved(item, device) for item in value]
    if isinstance(value, tuple):
        items = [_moved(item, device) for item in value]
        if hasattr(value, "_fields"):  # a NamedTuple takes its fields as arguments
            return type(value)(*items)
        return type(value)(items)  # tuple and torch.return_types take one sequence
    return value


def _on_cpu(original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``original`` on CPU copies of the arguments; move the results to the arguments' device."""
    device = _device_of((args, kwargs))
    result = original(*_moved(args, _CPU), **_moved(kwargs, _CPU))
    return _moved(result, device)


def polygamma(n: int, input: torch.Tensor) -> torch.Tensor:
    """What it does: ``torch.polygamma(n, x)`` (``torch.special.polygamma``), computed on the CPU.

    Why: torch_npu has no ``polygamma`` kernel (it is also digamma's derivative).

    Example: ``torch.polygamma(1, x)`` becomes ``ascend_function.polygamma(1, x)``.

    Fix safety: fallback: the same values and gradient as on the CPU; slow (copies and a sync).
    """
    result: torch.Tensor = _on_cpu(_polygamma, n, input)
    return result


def mode(input: torch.Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """What it does: ``torch.mode(x, dim, keepdim)`` (values and indices), computed on the CPU.

    Why: torch_npu has no ``mode`` kernel; majority votes over predictions use it.

    Example: ``torch.mode(votes, dim=0)`` becomes ``ascend_function.mode(votes, dim=0)``.

    Fix safety: fallback: the same values and indices as on the CPU; slow (copies and a sync).
    """
    return _on_cpu(_mode, input, dim, keepdim)


def histogram(input: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    """What it does: ``torch.histogram(x, bins, ...)`` (hist and bin_edges), computed on the CPU.

    Why: torch_npu has no ``histogram`` kernel (``torch.histc`` has one, with other semantics).

    Example: ``torch.histogram(x, bins=10)`` becomes ``ascend_function.histogram(x, bins=10)``.

    Fix safety: fallback: the same counts and edges as on the CPU; slow (copies and a sync).
    """
    return _on_cpu(_histogram, input, *args, **kwargs)


def linalg_eigh(A: torch.Tensor, UPLO: str = "L") -> Any:
    """What it does: ``torch.linalg.eigh(A, UPLO)`` (eigenvalues and eigenvectors), on the CPU.

    Why: torch_npu has no ``_linalg_eigh`` kernel; spectral methods, PCA and whitening call it.

    Example: ``torch.linalg.eigh(cov)`` becomes ``ascend_function.linalg_eigh(cov)``.

    Fix safety: fallback: the same decomposition and gradient as on the CPU; slow (copies, a sync).
    """
    return _on_cpu(_eigh, A, UPLO)


def linalg_eigvalsh(A: torch.Tensor, UPLO: str = "L") -> torch.Tensor:
    """What it does: ``torch.linalg.eigvalsh(A, UPLO)``, computed on the CPU.

    Why: torch_npu has no ``_linalg_eigh`` kernel, which eigvalsh uses too.

    Example: ``torch.linalg.eigvalsh(hessian)`` becomes ``ascend_function.linalg_eigvalsh(hessian)``.

    Fix safety: fallback: the same eigenvalues and gradient as on the CPU; slow (copies, a sync).
    """
    result: torch.Tensor = _on_cpu(_eigvalsh, A, UPLO)
    return result


def poisson(input: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """What it does: ``torch.poisson(rates)``, drawn on the CPU.

    Why: torch_npu has no ``poisson`` kernel; data augmentation with shot noise calls it.

    Example: ``torch.poisson(rates)`` becomes ``ascend_function.poisson(rates)``.

    Fix safety: fallback: draws from the CPU generator (seeded by ``torch.manual_seed``), so a run
    gives the same numbers as the original on the CPU; slow (copies and a sync).
    """
    result: torch.Tensor = _on_cpu(_poisson, input, generator=generator)
    return result


def fractional_max_pool2d(input: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    """What it does: ``torch.nn.functional.fractional_max_pool2d(...)``, computed on the CPU.

    Why: torch_npu has no ``fractional_max_pool2d`` kernel.

    Example: ``F.fractional_max_pool2d(x, 3, output_ratio=0.5)`` becomes
    ``ascend_function.fractional_max_pool2d(x, 3, output_ratio=0.5)``.

    Fix safety: fallback: the pooling regions are drawn from the CPU generator, so a run gives the same
    values, indices and gradient as the original on the CPU; slow (copies and a sync).
    """
    return _on_cpu(_fractional_max_pool2d, input, *args, **kwargs)


class Gamma(_Gamma):
    """What it does: ``torch.distributions.Gamma`` whose samples are drawn on the CPU.

    Why: torch_npu has no ``_standard_gamma`` kernel, so sampling a Gamma (and reparameterized
    sampling for variational inference) has nothing to run on the NPU.

    Example: ``Gamma(alpha, beta).rsample()`` becomes ``ascend_function.Gamma(alpha, beta).rsample()``.

    Fix safety: fallback: samples come from the CPU generator and move back to the parameters'
    device, with the same reparameterized gradient; everything else is torch's Gamma.
    """

    def rsample(
        self, sample_shape: torch.Size | list[int] | tuple[int, ...] = _NO_SHAPE
    ) -> torch.Tensor:
        twin = _Gamma(self.concentration.to(_CPU), self.rate.to(_CPU), validate_args=False)
        return twin.rsample(sample_shape).to(self.concentration.device)


class Dirichlet(_Dirichlet):
    """What it does: ``torch.distributions.Dirichlet`` whose samples are drawn on the CPU.

    Why: torch_npu has no ``_sample_dirichlet`` kernel.

    Example: ``Dirichlet(alpha).sample()`` becomes ``ascend_function.Dirichlet(alpha).sample()``.

    Fix safety: fallback: samples come from the CPU generator and move back to the parameters'
    device, with the same reparameterized gradient; everything else is torch's Dirichlet.
    """

    def rsample(
        self, sample_shape: torch.Size | list[int] | tuple[int, ...] = _NO_SHAPE
    ) -> torch.Tensor:
        twin = _Dirichlet(self.concentration.to(_CPU), validate_args=False)
        return twin.rsample(sample_shape).to(self.concentration.device)


class Beta(_Beta):
    """What it does: ``torch.distributions.Beta`` whose samples are drawn on the CPU.

    Why: Beta samples through a Dirichlet, and torch_npu has no ``_sample_dirichlet`` kernel (mixup
    draws its mixing weights from a Beta).

    Example: ``Beta(a, a).sample()`` becomes ``ascend_function.Beta(a, a).sample()``.

    Fix safety: fallback: samples come from the CPU generator and move back to the parameters'
    device, with the same reparameterized gradient; everything else is torch's Beta.
    """

    def rsample(
        self, sample_shape: torch.Size | list[int] | tuple[int, ...] = _NO_SHAPE
    ) -> torch.Tensor:
        one = self.concentration1
        twin = _Beta(one.to(_CPU), self.concentration0.to(_CPU), validate_args=False)
        return twin.rsample(sample_shape).to(one.device)


class Poisson(_Poisson):
    """What it does: ``torch.distributions.Poisson`` whose samples are drawn on the CPU.

    Why: torch_npu has no ``poisson`` kernel.

    Example: ``Poisson(rate).sample()`` becomes ``ascend_function.Poisson(rate).sample()``.

    Fix safety: fallback: samples come from the CPU generator and move back to the rate's device;
    everything else is torch's Poisson.
    """

    def sample(
        self, sample_shape: torch.Size | list[int] | tuple[int, ...] = _NO_SHAPE
    ) -> torch.Tensor:
        twin = _Poisson(self.rate.to(_CPU), validate_args=False)
        drawn: torch.Tensor = twin.sample(sample_shape)  # type: ignore[no-untyped-call]
        return drawn.to(self.rate.device)


class Binomial(_Binomial):
    """What it does: ``torch.distributions.Binomial`` whose samples are drawn on the CPU.

    Why: torch_npu has no ``binomial`` kernel.

    Example: ``Binomial(10, probs=p).sample()`` becomes ``ascend_function.Binomial(10, probs=p).sample()``.

    Fix safety: fallback: samples come from the CPU generator and move back to the parameters'
    device; everything else is torch's Binomial.
    """

    def sample(
        self, sample_shape: torch.Size | list[int] | tuple[int, ...] = _NO_SHAPE
    ) -> torch.Tensor:
        probs = self.probs
        twin = _Binomial(self.total_count.to(_CPU), probs=probs.to(_CPU), validate_args=False)
        drawn: torch.Tensor = twin.sample(sample_shape)  # type: ignore[no-untyped-call]
        return drawn.to(probs.device)


def logcumsumexp(input: torch.Tensor, dim: int) -> torch.Tensor:
    """What it does: ``torch.logcumsumexp(x, dim)`` as a scan of ``torch.logaddexp`` steps.

    Why: torch_npu has no ``_logcumsumexp`` kernel; CTC-style and sequence losses use it. A
    Hillis-Steele scan needs only log2(n) ``logaddexp`` and ``cat`` calls, which have NPU kernels,
    and keeps logaddexp's stability for large and ``-inf`` inputs.

    Example: ``torch.logcumsumexp(scores, dim=1)`` becomes
    ``ascend_function.logcumsumexp(scores, dim=1)``.

    Fix safety: exact: the sums are added in another order than the CPU kernel's, so values differ
    in the last bits (see the catalogue's tolerance); same dtype, shape and gradient.
    """
    length = input.size(dim) if input.dim() else 1
    result = input.clone()
    shift = 1
    while shift < length:
        head = result.narrow(dim, 0, shift)
        earlier = result.narrow(dim, 0, length - shift)
        later = result.narrow(dim, shift, length - shift)
        result = torch.cat([head, torch.logaddexp(later, earlier)], dim)
        shift *= 2
    return result


def _lower_symmetric(A: torch.Tensor) -> torch.Tensor:
    """The symmetric matrix that A's lower triangle describes, with a symmetric gradient.

    LAPACK reads only the lower triangle, and torch's Cholesky gradient is symmetric: the value comes
    from the triangle, the gradient flows through ``(A + A^T) / 2`` (equal to it for symmetric A).
    """
    from_triangle = torch.tril(A) + torch.tril(A, -1).mT
    averaged = (A + A.mT) / 2
    return from_triangle.detach() + (averaged - averaged.detach())


def _cholesky_factor(S: torch.Tensor) -> torch.Tensor:
    """Lower Cholesky factor of symmetric S, column by column (NaN pivots where S is not PD)."""
    size = S.size(-1)
    columns: list[torch.Tensor] = []
    for j in range(size):
        remainder = S[..., :, j]
        if columns:
            done = torch.stack(columns, -1)  # (..., n, j)
            remainder = remainder - (done @ done[..., j, :].unsqueeze(-1)).squeeze(-1)
        pivot = torch.sqrt(remainder[..., j : j + 1])
        columns.append(remainder / pivot)
    if not columns:
        return S.clone()
    return torch.tril(torch.stack(columns, -1))  # the rows above each pivot are scratch


def _raise_unless_positive(pivots: torch.Tensor) -> None:
    """torch's error for a failed factorization (a host sync, as torch's own check is)."""
    if pivots.numel() and bool((~(pivots > 0)).any()):
        raise torch.linalg.LinAlgError(  # type: ignore[attr-defined]
            "linalg.cholesky: The factorization could not be completed because the input is not "
            "positive-definite."
        )


def linalg_cholesky(A: torch.Tensor, *, upper: bool = False) -> torch.Tensor:
    """What it does: ``torch.linalg.cholesky(A, upper=upper)`` as a column-by-column composite.

    Why: torch_npu releases before 2.13 have no ``linalg_cholesky`` kernel (and none has
    ``linalg_cholesky_ex``). Each column needs one matrix-vector product, a square root and a division,
    which have NPU kernels; fine for the small matrices of covariances and Gaussian processes.

    Example: ``torch.linalg.cholesky(cov)`` becomes ``ascend_function.linalg_cholesky(cov)``.

    Fix safety: exact: reads the same triangle, raises ``torch.linalg.LinAlgError`` for matrices that
    are not positive-definite, returns the same symmetric gradient; values within the catalogue's
    tolerance (another summation order).
    """
    source = A.mT if upper else A  # the upper triangle of A is the lower one of A^T
    factor = _cholesky_factor(_lower_symmetric(source))
    _raise_unless_positive(torch.diagonal(factor, dim1=-2, dim2=-1))
    return factor.transpose(-2, -1) if upper else factor


def _qr_solve(A: torch.Tensor, B: torch.Tensor, api: str) -> torch.Tensor:
    """X with A X = B through a QR factorization (``linalg_qr`` and a triangular solve).

    Singular means what it means to torch's LU-based solvers: a zero pivot in an LU factorization
    with partial pivoting. Such a matrix leaves a tiny pivot in R, and only then is the LU, one step
    per column, run to decide: well-conditioned matrices cost a QR and one check.
    """
    Q, R = torch.linalg.qr(A)
    pivots = torch.diagonal(R, dim1=-2, dim2=-1).abs()
    if pivots.numel():
        floor = pivots.amax(-1, keepdim=True) * (1000 * A.size(-1) * torch.finfo(A.dtype).eps)
        if bool((pivots <= floor).any()) and bool((_lu_pivots(A)[0] == 0).any()):
            raise torch.linalg.LinAlgError(  # type: ignore[attr-defined]
                f"{api}: The solver failed because the input matrix is singular."
            )
    solution: torch.Tensor = torch.linalg.solve_triangular(R, Q.mT @ B, upper=True)
    return solution


def linalg_inv(A: torch.Tensor) -> torch.Tensor:
    """What it does: ``torch.linalg.inv(A)`` (and ``torch.inverse``) as ``R^-1 Q^T`` from a QR.

    Why: torch_npu has no ``linalg_inv_ex`` kernel, but has ``linalg_qr`` and
    ``linalg_solve_triangular``; QR is also the numerically stable way to invert.

    Example: ``torch.inverse(K)`` becomes ``ascend_function.linalg_inv(K)``.

    Fix safety: exact: same dtype, shape and gradient; raises ``torch.linalg.LinAlgError`` for an
    exactly singular matrix; values within the catalogue's tolerance for well-conditioned matrices
    (both results lose accuracy with the condition number).
    """
    eye = torch.eye(A.size(-1), dtype=A.dtype, device=A.device)
    return _qr_solve(A, eye.expand_as(A), "linalg.inv")


def linalg_solve(A: torch.Tensor, B: torch.Tensor, *, left: bool = True) -> torch.Tensor:
    """What it does: ``torch.linalg.solve(A, B, left=left)`` through a QR factorization.

    Why: torch_npu has no ``_linalg_solve_ex`` kernel, but has ``linalg_qr`` and
    ``linalg_solve_triangular``.

    Example: ``torch.linalg.solve(K, y)`` becomes ``ascend_function.linalg_solve(K, y)``.

    Fix safety: exact: B may be a batch of vectors as torch allows; same dtype, shape and gradient;
    raises ``torch.linalg.LinAlgError`` for an exactly singular A; values within the catalogue's
    tolerance for well-conditioned A.
    """
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return linalg_solve(A.mT, B.mT).mT
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])
    if vector:
        return _qr_solve(A, B.unsqueeze(-1), "linalg.solve").squeeze(-1)
    return _qr_solve(A, B, "linalg.solve")


def _lu_pivots(A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The pivots of an LU factorization with partial pivoting, and the sign of its permutation.

    One elimination step per column on the shrinking trailing block, as LAPACK's getrf does.
    """
    sign = torch.ones(A.shape[:-2], dtype=A.dtype, device=A.device)
    pivots: list[torch.Tensor] = []
    block = A
    while block.size(-1):
        rows = torch.arange(block.size(-1), device=A.device)
        best = block[..., :, 0].abs().max(-1).indices.unsqueeze(-1)  # the first largest entry
        order = torch.where(rows == 0, best, torch.where(rows == best, 0, rows))
        block = block.gather(-2, order.unsqueeze(-1).expand_as(block))
        sign = torch.where(best.squeeze(-1) != 0, -sign, sign)
        pivot = block[..., 0, 0]
        pivots.append(pivot)
        # A zero pivot means a zero column below it: nothing to eliminate (and no 0/0).
        divisor = torch.where(pivot == 0, torch.ones_like(pivot), pivot)
        factors = block[..., 1:, 0] / divisor.unsqueeze(-1)
        block = block[..., 1:, 1:] - factors.unsqueeze(-1) * block[..., :1, 1:]
    if not pivots:
        return A.new_ones(A.shape[:-1]), sign
    return torch.stack(pivots, -1), sign


def linalg_det(A: torch.Tensor) -> torch.Tensor:
    """What it does: ``torch.linalg.det(A)`` (and ``torch.det``) as the product of LU pivots.

    Why: torch_npu has no ``_linalg_det`` kernel. LU with partial pivoting (what the CPU kernel does)
    needs one ``max``, ``gather`` and rank-1 update per column, which have NPU kernels.

    Example: ``torch.det(J)`` becomes ``ascend_function.linalg_det(J)``.

    Fix safety: exact: same dtype, shape, and gradient for invertible matrices; values within the
    catalogue's tolerance. For exactly singular matrices the value is 0 but the gradient may differ.
    """
    pivots, sign = _lu_pivots(A)
    return sign * torch.prod(pivots, -1)


def linalg_slogdet(A: torch.Tensor) -> Any:
    """What it does: ``torch.linalg.slogdet(A)`` (and ``torch.slogdet``) from the LU pivots.

    Why: torch_npu has no ``_linalg_slogdet`` kernel; Gaussian log-likelihoods and normalizing flows
    call it.

    Example: ``sign, logabsdet = torch.linalg.slogdet(W)`` becomes
    ``sign, logabsdet = ascend_function.linalg_slogdet(W)``.

    Fix safety: exact: same (sign, logabsdet) pair, dtypes, shapes and gradient for invertible
    matrices; values within the catalogue's tolerance; singular matrices give sign 0 and -inf.
    """
    pivots, sign = _lu_pivots(A)
    sign = sign * torch.prod(torch.sign(pivots), -1)
    logabsdet = torch.sum(torch.log(torch.abs(pivots)), -1)
    return torch.return_types.linalg_slogdet((sign, logabsdet))  # type: ignore[attr-defined]


class MultivariateNormal(_MultivariateNormal):
    """What it does: ``torch.distributions.MultivariateNormal`` whose Cholesky factor comes from
    ``linalg_cholesky`` above.

    Why: the distribution factors its covariance (or precision) matrix and checks it with
    ``torch.linalg.cholesky_ex``, which has no NPU kernel: human migrators move the whole distribution
    to the CPU and back.

    Example: ``MultivariateNormal(mu, covariance_matrix=cov)`` becomes
    ``ascend_function.MultivariateNormal(mu, covariance_matrix=cov)``.

    Fix safety: exact: sampling, ``log_prob`` and entropy run torch's own code on the factor, within the
    catalogue's tolerance. A matrix that is not positive-definite raises
    ``torch.linalg.LinAlgError`` instead of torch's ``ValueError``.
    """

    def __init__(
        self,
        loc: torch.Tensor,
        covariance_matrix: torch.Tensor | None = None,
        precision_matrix: torch.Tensor | None = None,
        scale_tril: torch.Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1 or scale_tril is not None:  # torch's own path, or its error message
            super().__init__(
                loc, covariance_matrix, precision_matrix, scale_tril, validate_args=validate_args
            )
            return
        matrix = given[0]
        if covariance_matrix is not None:
            factor = linalg_cholesky(covariance_matrix)
        else:
            factor = _precision_to_scale_tril(matrix)
        super().__init__(loc, scale_tril=factor, validate_args=validate_args)
        # Keep the given matrix, as torch does: its gradient then flows the way torch's does.
        expanded = matrix.expand((*self.batch_shape, -1, -1))
        if covariance_matrix is not None:
            self.covariance_matrix = expanded
        else:
            self.precision_matrix = expanded


def _precision_to_scale_tril(P: torch.Tensor) -> torch.Tensor:
    """L with L L^T = P^-1: the Cholesky factor of the flipped P gives L^-1 (no inverse needed)."""
    flipped = linalg_cholesky(torch.flip(P, (-2, -1)))
    inverse_factor = torch.flip(flipped, (-2, -1)).transpose(-2, -1)
    eye = torch.eye(P.size(-1), dtype=P.dtype, device=P.device)
    factor: torch.Tensor = torch.linalg.solve_triangular(inverse_factor, eye, upper=False)
    return factor


def _shifted_up(y: torch.Tensor) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """``y + n`` with the least n that reaches _STIRLING_FROM, and the steps taken: for k < 10, the
    mask of the elements that took step k and their value ``y + k`` then."""
    steps = []
    for _ in range(int(_STIRLING_FROM)):
        below = y < _STIRLING_FROM
        steps.append((below, y))
        y = torch.where(below, y + 1, y)
    return y, steps


def _reflection_setup(
    input: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x as a float tensor, where x < 1/2, y = max(x, 1 - x) >= 1/2, x - round(x) in [-1/2, 1/2]).

    Below 1/2 the functions are reflected; trigonometry of the reduced argument keeps its accuracy
    for large arguments.
    """
    x = input if input.is_floating_point() else input.to(torch.get_default_dtype())
    reflect = x < 0.5
    return x, reflect, torch.where(reflect, 1 - x, x), x - torch.floor(x + 0.5)


def lgamma(input: torch.Tensor) -> torch.Tensor:
    """What it does: ``torch.lgamma(x)`` (``torch.special.gammaln``) from Stirling's series.

    Why: torch_npu has no ``lgamma`` kernel; log-likelihoods of Poisson, Gamma, Beta and Student-t
    models and count losses call it. Shifting the argument up to 10 (``lgamma(y) = lgamma(y + n) -
    log(y (y + 1) ... (y + n - 1))``) and the reflection formula below 1/2 need only ``log``, ``sin``,
    ``where`` and arithmetic, which have NPU kernels.

    Example: ``torch.lgamma(counts + 1)`` becomes ``ascend_function.lgamma(counts + 1)``.

    Fix safety: exact: ``inf`` at 0, the negative integers and both infinities, as torch; values and
    gradient (``digamma``) within the catalogue's tolerance.
    """
    x, reflect, y, reduced = _reflection_setup(input)
    z, steps = _shifted_up(y)
    r = 1 / z
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 / 1680)))
    positive = (z - 0.5) * torch.log(z) - z + _HALF_LOG_TWO_PI + series
    factors = [torch.where(below, value, torch.ones_like(value)) for below, value in steps]
    positive = positive - torch.log(torch.prod(torch.stack(factors), 0))
    # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); 1 where not reflected keeps gradients finite
    sine = torch.where(reflect, torch.sin(math.pi * reduced).abs(), torch.ones_like(x))
    reflected = math.log(math.pi) - torch.log(sine) - positive
    result = torch.where(reflect, reflected, positive)
    pole = (x <= 0) & (x == torch.floor(x))
    return torch.where(pole | (x.abs() == math.inf), torch.full_like(x, math.inf), result)


def digamma(input: torch.Tensor) -> torch.Tensor:
    """What it does: ``torch.digamma(x)`` (``torch.special.digamma``/``psi``) from its asymptotic
    series.

    Why: torch_npu has no ``digamma`` kernel; entropies and gradients of Gamma, Beta and Dirichlet
    distributions need it. The recurrence ``digamma(y) = digamma(y + 1) - 1/y`` up to 10 and the
    reflection formula below 1/2 need only ``log``, ``tan``, ``where`` and arithmetic.

    Example: ``torch.digamma(alpha)`` becomes ``ascend_function.digamma(alpha)``.

    Fix safety: exact: ``-inf`` at +0 and ``inf`` at -0, NaN at the negative integers and -inf, as
    torch; values and gradient (``polygamma(1, x)``) within the catalogue's tolerance.
    """
    x, reflect, y, reduced = _reflection_setup(input)
    z, steps = _shifted_up(y)
    r2 = 1 / (z * z)
    series = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 / 132))))
    terms = [torch.where(below, 1 / value, torch.zeros_like(value)) for below, value in steps]
    recurrence = torch.stack(terms).sum(0)
    positive = torch.log(z) - 0.5 / z - series - recurrence
    # digamma(x) = digamma(1 - x) - pi / tan(pi x)
    tangent = torch.where(
        reflect & (reduced != 0), torch.tan(math.pi * reduced), torch.ones_like(x)
    )
    reflected = positive - math.pi / tangent
    result = torch.where(reflect, reflected, positive)
    result = torch.where(x == 0, -1 / x, result)  # -inf at +0, inf at -0
    negative_integer = (x < 0) & (x == torch.floor(x))
    return torch.where(negative_integer, torch.full_like(x, math.nan), result)
