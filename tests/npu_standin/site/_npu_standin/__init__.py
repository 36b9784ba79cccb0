"""Runtime of the test-only torch_npu stand-in: the hand-written half (the generated half is ``torch_npu``).

``module`` turns the generated API description into module contents, ``strict`` holds names to the
real signatures, ``placement`` makes the ``npu`` device run on the CPU, ``emulation`` is the table of
what the stand-in does for each torch_npu name it emulates.
"""


def autoload() -> None:
    """torch's device-backend autoload entry point (``standin_env(autoload=True)``), as torch_npu
    2.6+ registers one: ``import torch`` imports torch_npu."""
    import torch_npu  # noqa: F401
