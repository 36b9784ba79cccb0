"""Save now through the frameworks' own save paths: what the launcher's start hook installs in a
rank that imports transformers' Trainer or accelerate, so such a project loses at most the step
in flight when the launcher stops it, with no edit.

The start hook (:mod:`ascendify.launch.starthook`) calls :func:`install_trainer_callback` right
after the program's own import of ``transformers.trainer`` and :func:`install_accelerate_trigger`
right after that of ``accelerate.accelerator``; a program that imports neither never loads this
module. The request itself is :func:`ascendify.save_requested` (the save-now file, or SIGTERM).

- **Trainer**: every Trainer gets :class:`SaveNowCallback` among its default callbacks. At the
  first step end after a request it sets ``control.should_save`` (the Trainer writes
  ``checkpoint-<step>`` as it always does, with its optimizer, scheduler and RNG state) and
  ``control.should_training_stop``, and once that save is done the rank exits with 0. On many
  ranks they first agree (a one-value all-reduce on a CPU group each step), so every rank stops
  after the same step and the save's collectives match. A Trainer given
  ``enable_jit_checkpoint=True`` answers SIGTERM itself: the callback then stays out of it.
- **accelerate**: a plain loop has no step end to hook, but accelerate has its own way to stop
  every process together: ``accelerator.check_trigger()``, true on all processes once any called
  ``set_trigger()``. A request sets the trigger, so a loop that ends with ``if
  accelerator.check_trigger(): accelerator.save_state(...); break`` saves and stops on every
  rank after the same step. SIGTERM becomes a request from the loop's first ``check_trigger()``
  on (a loop that never calls it is stopped by SIGTERM as before).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ascendify.savenow import release_sigterm, save_requested


def install_trainer_callback() -> None:
    """Add :class:`SaveNowCallback` to the callbacks every Trainer starts with."""
    trainer_module = sys.modules["transformers.trainer"]
    callback = _trainer_callback_class()
    defaults: list[Any] = trainer_module.DEFAULT_CALLBACKS
    if not any(getattr(known, "__name__", "") == callback.__name__ for known in defaults):
        defaults.append(callback)


def install_accelerate_trigger() -> None:
    """Make a save-now request set ``Accelerator``'s trigger before each ``check_trigger()``."""
    accelerator_class = sys.modules["accelerate.accelerator"].Accelerator
    original: Callable[[Any], bool] = accelerator_class.check_trigger
    if getattr(original, "asks_save_now", False):
        return

    def check_trigger(self: Any) -> bool:
        if save_requested():  # the first call also makes SIGTERM a request
            self.set_trigger()
        return original(self)

    check_trigger.asks_save_now = True  # type: ignore[attr-defined]
    check_trigger.__doc__ = original.__doc__
    accelerator_class.check_trigger = check_trigger


def _trainer_callback_class() -> type:
    from transformers import TrainerCallback

    class SaveNowCallback(TrainerCallback):
        """Save a checkpoint and stop at the first step end after the launcher asked to save."""

        def __init__(self) -> None:
            self.agree: Callable[[bool], bool] = bool
            self.saving = False

        def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if not _answers_sigterm_itself(args):
                save_requested()  # SIGTERM is a request from here on, not the end of the rank
                self.agree = _agreement()

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if _answers_sigterm_itself(args) or not self.agree(save_requested()):
                return
            control.should_save = True
            control.should_training_stop = True
            self.saving = True

        def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if self.saving:  # the Trainer has written checkpoint-<step>: the stop may go on
                print(
                    f"ascendify: saved step {state.global_step} when asked; exiting",
                    file=sys.stderr,
                    flush=True,
                )
                raise SystemExit(0)

        def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            release_sigterm()

    return SaveNowCallback


def _answers_sigterm_itself(args: Any) -> bool:
    return bool(getattr(args, "enable_jit_checkpoint", False))


def _agreement() -> Callable[[bool], bool]:
    """What makes every rank's answer the same: on many ranks, whether any rank was asked (a
    CPU all-reduce: a device one would hold up the device queue each step); alone, its own."""
    import torch
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return bool
    group = dist.new_group(backend="gloo")  # every rank calls on_train_begin: a collective call

    def any_rank(asked: bool) -> bool:
        flag = torch.tensor([int(asked)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
        return bool(flag.item())

    return any_rank
