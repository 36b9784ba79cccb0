"""Cost of the runtime redirect: a redirected ``t.to("cuda")`` against the native ``t.to("cpu")``.

Both are measured in the same run, interleaved round by round (so load on the machine hits both alike),
and reported as medians in ns per call with their ratio (target: at most 1.2x). The second table is the
overhead on a small training step written for CUDA, against the same step written for the CPU.

    python benchmarks/bench_auto.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch
from torch import nn

from ascendify import auto

TARGET_RATIO = 1.2


def ns_per_call(statement: Callable[[], object], number: int) -> float:
    return timeit.timeit(statement, number=number) / number * 1e9


def side_by_side(
    cases: dict[str, tuple[bool, Callable[[], object]]], rounds: int, number: int
) -> dict[str, float]:
    """Median ns/call per case; each case runs with the redirect enabled or not, rounds interleaved."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for round_index in range(rounds + 1):  # round 0 warms up and is not counted
        for name, (redirected, statement) in cases.items():
            if redirected:
                auto.enable("cpu", environ={"RANK": "1"})
            try:
                elapsed = ns_per_call(statement, number)
            finally:
                auto.disable()
            if round_index:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def training_step(device: str) -> Callable[[], object]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    features, labels = torch.randn(32, 64), torch.randint(0, 10, (32,))

    def step() -> object:
        batch, target = features.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(batch), target)
        loss.backward()
        optimizer.step()
        return loss

    return step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    tensor = torch.ones(16)
    cuda = torch.device("cuda")

    calls = side_by_side(
        {
            'native t.to("cpu")': (False, lambda: tensor.to("cpu")),
            'redirected t.to("cuda")': (True, lambda: tensor.to("cuda")),
            'redirected t.to(torch.device("cuda"))': (True, lambda: tensor.to(cuda)),
            'with redirect, t.to("cpu")': (True, lambda: tensor.to("cpu")),
            'native torch.zeros(4, device="cpu")': (False, lambda: torch.zeros(4, device="cpu")),
            'redirected torch.zeros(4, device="cuda")': (
                True,
                lambda: torch.zeros(4, device="cuda"),
            ),
        },
        args.rounds,
        number=20000,
    )
    baseline = calls['native t.to("cpu")']
    print(f"{'call':45} {'ns/call':>9} {'ratio':>7}")
    for name, value in calls.items():
        reference = calls['native torch.zeros(4, device="cpu")'] if "zeros" in name else baseline
        print(f"{name:45} {value:9.0f} {value / reference:7.2f}x")
    ratio = calls['redirected t.to("cuda")'] / baseline
    verdict = "ok" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(
        f'redirected t.to("cuda") / native t.to("cpu") = {ratio:.2f}x (target <= {TARGET_RATIO}x: {verdict})'
    )

    auto.enable("cpu", environ={"RANK": "1"})
    cuda_step = training_step("cuda")  # built under the redirect, as a GPU script would be
    auto.disable()
    steps = side_by_side(
        {
            "CPU-written step": (False, training_step("cpu")),
            "CUDA-written step, redirected": (True, cuda_step),
        },
        args.rounds,
        number=200,
    )
    native, redirected = steps["CPU-written step"], steps["CUDA-written step, redirected"]
    print(f"\n{'training step (MLP 64-128-10, batch 32)':45} {'us/step':>9}")
    for name, value in steps.items():
        print(f"{name:45} {value / 1000:9.1f}")
    print(
        f"overhead per step: {(redirected - native) / 1000:+.1f} us ({(redirected / native - 1) * 100:+.1f}%)"
    )
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
