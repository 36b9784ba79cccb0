"""Holding calls to torch_npu's real signatures, and failing loudly on what is not emulated."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, NoReturn, cast

# One serialized parameter: [name, inspect kind name, default's source text or None].
SerializedSignature = list[list[str | None]]


class WheelDefault:
    """A default value as the wheel's source spells it (binding needs its presence, not its value)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __repr__(self) -> str:
        return self.source


def build_signature(params: SerializedSignature) -> inspect.Signature:
    return inspect.Signature(
        [
            inspect.Parameter(
                str(name),
                inspect.Parameter.__dict__[str(kind)],
                default=inspect.Parameter.empty if default is None else WheelDefault(default),
            )
            for name, kind, default in params
        ]
    )


def check_call(qualname: str, signature: inspect.Signature, args: Any, kwargs: Any) -> None:
    """Raise TypeError, as torch_npu would, when the real signature rejects these arguments."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{qualname}{signature}: {error}") from None


def not_emulated(qualname: str) -> NoReturn:
    raise NotImplementedError(f"npu stand-in does not emulate {qualname}")


def checked(
    qualname: str, params: SerializedSignature | None, target: Callable[..., Any]
) -> Callable[..., Any]:
    """``target`` behind the wheel's signature (unchecked when the wheel does not show it)."""
    signature = None if params is None else build_signature(params)

    @functools.wraps(target)
    def call(*args: Any, **kwargs: Any) -> Any:
        if signature is not None:
            check_call(qualname, signature, args, kwargs)
        return target(*args, **kwargs)

    if signature is not None:
        call.__signature__ = signature  # type: ignore[attr-defined]
    call.__qualname__ = call.__name__ = qualname.rpartition(".")[2]
    return call


def checked_overloads(
    qualname: str, overloads: list[SerializedSignature], target: Callable[..., Any]
) -> Callable[..., Any]:
    """``target`` behind an operator's schema overloads: the arguments must bind to one of them."""
    signatures = [build_signature(params) for params in overloads]

    @functools.wraps(target)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not any(_binds(signature, args, kwargs) for signature in signatures):
            listed = " | ".join(f"{qualname}{signature}" for signature in signatures)
            raise TypeError(f"{qualname}: no overload takes these arguments: {listed}")
        return target(*args, **kwargs)

    call.__qualname__ = call.__name__ = qualname.rpartition(".")[2]
    return call


def _binds(signature: inspect.Signature, args: Any, kwargs: Any) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def refuser(qualname: str) -> Callable[..., NoReturn]:
    """The behaviour of a callable the wheel has and the stand-in does not emulate."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        not_emulated(qualname)

    return refuse


def refusing(qualname: str, params: SerializedSignature | None) -> Callable[..., Any]:
    """A name the wheel has and the stand-in does not emulate: bad arguments still fail first."""
    return checked(qualname, params, refuser(qualname))


class Unemulated:
    """A torch_npu object (not a function or class) the stand-in does not emulate: any use fails."""

    def __init__(self, qualname: str) -> None:
        object.__setattr__(self, "_qualname", qualname)

    def __getattr__(self, name: str) -> NoReturn:
        not_emulated(f"{object.__getattribute__(self, '_qualname')}.{name}")

    def __setattr__(self, name: str, value: object) -> NoReturn:
        not_emulated(f"{object.__getattribute__(self, '_qualname')}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        not_emulated(object.__getattribute__(self, "_qualname"))

    def __repr__(self) -> str:
        return f"<npu stand-in: {object.__getattribute__(self, '_qualname')} is not emulated>"


def checked_class(qualname: str, entry: dict[str, Any], implementation: type | None) -> type:
    """A class named as in the wheel whose constructor and methods take the wheel's arguments.

    ``implementation`` provides the behaviour; without one, constructing the class fails. Methods the
    wheel's class has and the implementation lacks fail when called.
    """
    base = implementation or object
    name = qualname.rpartition(".")[2]
    members: dict[str, Any] = {"__module__": qualname.rpartition(".")[0], "__qualname__": name}
    constructor = None if entry["signature"] is None else build_signature(entry["signature"])

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if constructor is not None:
            check_call(qualname, constructor, args, kwargs)
        if implementation is None:
            not_emulated(qualname)
        cast(Any, implementation).__init__(self, *args, **kwargs)

    members["__init__"] = __init__
    for method, params in entry["methods"].items():
        members[method] = _checked_method(f"{qualname}.{method}", params, implementation, method)
    for attribute in entry["attributes"]:
        if implementation is None or not hasattr(implementation, attribute):
            opaque = implementation is not None and issubclass(implementation, OpaqueConstants)
            members[attribute] = (Token if opaque else NotEmulatedAttribute)(
                f"{qualname}.{attribute}"
            )
    return type(name, (base,), members)


class AsIs:
    """An emulation used as it is, unchecked: torch's own class where the wheel re-exports torch's
    (an enum cannot be subclassed to check its arguments)."""

    def __init__(self, value: object) -> None:
        self.value = value


class OpaqueConstants:
    """Implementation of a class of constants whose values only mean something to an NPU: each of
    the wheel's class attributes becomes a distinct token."""


class Token:
    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def __repr__(self) -> str:
        return self.qualname


class NotEmulatedAttribute:
    """A class attribute the wheel has and the stand-in does not emulate (instances may set it)."""

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def __get__(self, instance: object, owner: type | None = None) -> NoReturn:
        not_emulated(self.qualname)


def _checked_method(
    qualname: str, params: SerializedSignature, implementation: type | None, method: str
) -> Any:
    raw = None if implementation is None else inspect.getattr_static(implementation, method, None)
    if raw is None:
        return refusing(qualname, params)
    if isinstance(raw, staticmethod):
        return staticmethod(checked(qualname, params, raw.__func__))
    if isinstance(raw, classmethod):
        return classmethod(_bound_checked(qualname, params, raw.__func__))
    return _bound_checked(qualname, params, raw)


def _bound_checked(
    qualname: str, params: SerializedSignature, function: Callable[..., Any]
) -> Callable[..., Any]:
    signature = build_signature(params)

    @functools.wraps(function)
    def method(owner: Any, *args: Any, **kwargs: Any) -> Any:
        check_call(qualname, signature, args, kwargs)
        return function(owner, *args, **kwargs)

    return method
