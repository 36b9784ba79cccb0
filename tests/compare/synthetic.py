"""Small synthetic dumps for the comparison's unit tests: records built by hand, no torch."""

from __future__ import annotations

from ascendify.compare.records import FORWARD, Record, TensorStats


def constant(value: float, dtype: str = "float32", count: int = 4) -> TensorStats:
    """A tensor of ``count`` elements equal to ``value``."""
    return TensorStats(dtype, (count,), value, value, value, abs(value) * count**0.5, 0, 0)


def record(
    path: str, start: int, order: int, inputs: tuple[float, ...], output: float, **fields: object
) -> Record:
    base: dict[str, object] = {
        "rank": 0, "step": 0, "kind": FORWARD, "path": path, "call": 0, "slot": 0,
        "start": start, "order": order, "inputs": tuple(constant(v) for v in inputs),
        "outputs": (constant(output),),
    }  # fmt: skip
    base.update(fields)
    return Record(**base)  # type: ignore[arg-type]


# A model of three blocks whose middle one holds a norm and an mlp, then a loss:
# (path, start, end, input name, output name); a value per name makes one run.
LAYOUT = (
    ("Model", 1, 14, "x", "out"),
    ("embed", 2, 3, "x", "e"),
    ("blocks.0", 4, 5, "e", "b0"),
    ("blocks.1", 6, 11, "b0", "b1"),
    ("blocks.1.norm", 7, 8, "b0", "n"),
    ("blocks.1.mlp", 9, 10, "n", "m"),
    ("blocks.2", 12, 13, "b1", "out"),
)
CLEAN = {"x": 1.0, "e": 2.0, "b0": 3.0, "n": 4.0, "m": 5.0, "b1": 6.0, "out": 7.0, "loss": 0.5}


def run(values: dict[str, float], step: int = 0, rank: int = 0) -> list[Record]:
    records = [
        record(path, start, end, (values[source],), values[result], step=step, rank=rank)
        for path, start, end, source, result in LAYOUT
    ]
    loss = record("loss", 15, 15, (), values["loss"], kind="loss", step=step, rank=rank)
    return [*records, loss]


def changed(**values: float) -> dict[str, float]:
    return {**CLEAN, **values}
