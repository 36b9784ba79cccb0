"""ModelArts flavor strings."""

from __future__ import annotations

import pytest

from ascendify.jobs.flavor import Flavor, FlavorError, parse_flavor


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ascend: 8 | ARM: 192 cores 720 GB", Flavor("Ascend", 8, None, "ARM", 192, 720.0)),
        ("Ascend: 8*ascend-snt9b | ARM: 192 核 720GB", Flavor("Ascend", 8, "ascend-snt9b", "ARM", 192, 720.0)),
        ("Ascend: 1*ascend-snt9b(64GB) | ARM: 24 核 192GB", Flavor("Ascend", 1, "ascend-snt9b(64GB)", "ARM", 24, 192.0)),
        ("GPU: 1*NVIDIA-V100(32GB) | CPU: 8 核 64GB", Flavor("GPU", 1, "NVIDIA-V100(32GB)", "CPU", 8, 64.0)),
        ("CPU: 2 核 8GB", Flavor(None, 1, None, "CPU", 2, 8.0)),
        ("ascend: 2", Flavor("Ascend", 2)),
    ],
)  # fmt: skip
def test_flavors(text: str, expected: Flavor) -> None:
    assert parse_flavor(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty flavor"),
        ("eight cards", "is not 'KIND: DETAILS'"),
        ("Ascend: many", "expected a card count"),
        ("Ascend: 0", "expected a card count of at least 1"),
        ("TPU: 4", "unknown resource 'TPU'"),
        ("Ascend: 8 | GPU: 1", "two accelerator parts"),
        ("Ascend: 8 | ARM: lots", "expected a core count"),
    ],
)
def test_garbage_is_named(text: str, message: str) -> None:
    with pytest.raises(FlavorError, match=message):
        parse_flavor(text)


def test_known_flavors_parse_and_their_ids_stand_for_them() -> None:
    from ascendify.jobs.flavor import KNOWN_FLAVORS

    for flavor_id, text in KNOWN_FLAVORS:
        assert parse_flavor(flavor_id) == parse_flavor(text)
    assert parse_flavor("modelarts.kat1.8xlarge").cards == 8
    assert parse_flavor("modelarts.vm.cpu.8u").accelerator is None
