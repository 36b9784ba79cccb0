"""Wrappers that redirect the device (and backend) arguments of a callable, and nothing else."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ascendify.auto._devicemap import DROP, ArgumentKind, DeviceMap

Translator = Callable[[Any], Any]


@dataclass(frozen=True)
class ArgumentRule:
    """Where a callable takes device-like arguments: positional indices and keywords, each with its kind.

    Positions count the arguments after ``self`` for methods and constructors.
    """

    positions: tuple[tuple[int, ArgumentKind], ...] = ()
    keywords: tuple[tuple[str, ArgumentKind], ...] = ()

    def merged(self, other: ArgumentRule) -> ArgumentRule:
        return ArgumentRule(
            tuple(dict((*self.positions, *other.positions)).items()),
            tuple(dict((*self.keywords, *other.keywords)).items()),
        )


def redirect_arguments(
    original: Callable[..., Any], rule: ArgumentRule, device_map: DeviceMap, receiver: bool
) -> Callable[..., Any]:
    """``original`` with its device arguments redirected; ``receiver``: the first argument is ``self``."""
    shift = 1 if receiver else 0
    positions = tuple(
        (index + shift, device_map.translator(kind)) for index, kind in rule.positions
    )
    keywords = tuple((name, device_map.translator(kind)) for name, kind in rule.keywords)
    default_map_location = _default_map_location(rule, device_map, shift)

    if receiver and rule.positions[:1] == ((0, ArgumentKind.DEVICE),) and len(rule.positions) == 1:
        return _method_device_first(original, device_map, keywords)
    if not rule.positions and rule.keywords == (("device", ArgumentKind.DEVICE),):
        return _device_keyword(original, device_map)
    if len(positions) == 1 and not default_map_location:
        return _single_position(original, positions[0], keywords)

    @functools.wraps(original)
    def redirected(*args: Any, **kwargs: Any) -> Any:
        for index, translate in positions:
            if index < len(args):
                args = _replaced(args, index, translate)
        if kwargs:
            _translate_keywords(kwargs, keywords)
        if default_map_location is not None:
            index, name, translate = default_map_location
            if index >= len(args) and name not in kwargs:
                kwargs[name] = translate(None)
        return original(*args, **kwargs)

    return redirected


def _method_device_first(
    original: Callable[..., Any],
    device_map: DeviceMap,
    keywords: tuple[tuple[str, Translator], ...],
) -> Callable[..., Any]:
    """``tensor.to("cuda")``: the hottest shape, kept to a dict hit and one direct call."""
    known = device_map.known
    translate = device_map.device
    device_class = torch.device

    @functools.wraps(original)
    def redirected(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            first = args[0]
            first_class = first.__class__
            if first_class is str or first_class is device_class or first_class is int:
                mapped = known.get(first)
                if mapped is None:
                    mapped = translate(first)
                if not kwargs and len(args) == 1:
                    return original(self, mapped)
                if mapped is not first:
                    args = (mapped, *args[1:])
        if kwargs:
            _translate_keywords(kwargs, keywords)
        return original(self, *args, **kwargs)

    return redirected


def _device_keyword(original: Callable[..., Any], device_map: DeviceMap) -> Callable[..., Any]:
    """``torch.zeros(..., device="cuda")`` and the module constructors: one keyword, one dict hit."""
    known = device_map.known
    translate = device_map.device

    @functools.wraps(original)
    def redirected(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            value = kwargs.get("device")
            if value is not None:
                mapped = known.get(value) if value.__class__ in _HASHABLE_DEVICES else None
                kwargs["device"] = translate(value) if mapped is None else mapped
        return original(*args, **kwargs)

    return redirected


_HASHABLE_DEVICES = frozenset({str, torch.device})


def _single_position(
    original: Callable[..., Any],
    position: tuple[int, Translator],
    keywords: tuple[tuple[str, Translator], ...],
) -> Callable[..., Any]:
    """The common shape (``Tensor.to(device)``), kept to a handful of bytecodes for speed."""
    index, translate = position

    @functools.wraps(original)
    def redirected(*args: Any, **kwargs: Any) -> Any:
        if len(args) > index:
            value = args[index]
            mapped = translate(value)
            if mapped is not value:
                args = (*args[:index], mapped, *args[index + 1 :])
        if kwargs:
            _translate_keywords(kwargs, keywords)
        return original(*args, **kwargs)

    return redirected


def _replaced(args: tuple[Any, ...], index: int, translate: Translator) -> tuple[Any, ...]:
    value = args[index]
    mapped = translate(value)
    if mapped is value:
        return args
    if mapped is DROP:
        mapped = None
    return (*args[:index], mapped, *args[index + 1 :])


def _translate_keywords(
    kwargs: dict[str, Any], keywords: tuple[tuple[str, Translator], ...]
) -> None:
    for name, translate in keywords:
        if name in kwargs:
            mapped = translate(kwargs[name])
            if mapped is DROP:
                del kwargs[name]
            else:
                kwargs[name] = mapped


def _default_map_location(
    rule: ArgumentRule, device_map: DeviceMap, shift: int
) -> tuple[int, str, Translator] | None:
    """torch.load without map_location must still restore CUDA storages on the target device."""
    keywords = [name for name, kind in rule.keywords if kind is ArgumentKind.MAP_LOCATION]
    positions = [index for index, kind in rule.positions if kind is ArgumentKind.MAP_LOCATION]
    if not keywords or not positions:
        return None
    return (positions[0] + shift, keywords[0], device_map.map_location)


def redirect_constructor_class(original: type, rule: ArgumentRule, device_map: DeviceMap) -> type:
    """A drop-in for a built-in torch class whose ``__init__`` cannot be replaced (``torch.Generator``).

    Construction goes through the redirect; ``isinstance`` accepts every instance of the original class.
    """
    construct = redirect_arguments(original, rule, device_map, receiver=False)

    class _Redirecting(type(original)):  # type: ignore[misc]
        def __instancecheck__(cls, instance: object) -> bool:
            return isinstance(instance, original)

        def __subclasscheck__(cls, subclass: type) -> bool:
            return issubclass(subclass, original)

        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            return construct(*args, **kwargs)

    return _Redirecting(original.__name__, (original,), {"__module__": original.__module__})
