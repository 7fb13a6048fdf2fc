"""Value classes: the one way the core defines its events, states, steps, legal actions and
clock.

    @value
    class Seat(Value):
        seat: int
        stack: int = 0

    s = Seat(3, 100)       # a frozen, slotted dataclass: equality, hashing, repr
    s.evolve(stack=90)     # a new Seat with ``stack`` changed, like dataclasses.replace

:func:`value` makes the class a ``dataclass(frozen=True, slots=True)`` and adds two pieces of
generated code (source built from the class's own fields, compiled once per class); both are
kept because removing either makes the hands measurably slower (bench/bench_values.py, the
figures are in each function's docstring). :class:`Value`, the base of every value class,
declares the typed ``evolve`` for type checkers.

A value class may define ``__post_init__`` to validate itself: the constructor and ``evolve``
call it, as the dataclass constructor and ``dataclasses.replace`` do. (shared/infra/codec.py
decodes objects slot by slot, without ``__init__``: it does not call it.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Self, TypeVar, dataclass_transform

_MISSING = object()


class Value:
    """The base of every :func:`value` class. It holds no data (``__slots__ = ()``, so the
    class's layout is its own fields) and declares :meth:`evolve`."""

    __slots__ = ()

    def evolve(self, **changes: Any) -> Self:
        """A copy with the fields named in ``changes`` set to their values (keywords only,
        unknown fields refused), like ``dataclasses.replace``; the original is untouched.
        :func:`value` puts the class's generated copy in place of this one."""
        raise TypeError(f"{type(self).__name__} is not made by @value")


_V = TypeVar("_V", bound=Value)


@dataclass_transform(frozen_default=True)
def value(cls: type[_V]) -> type[_V]:
    """Make ``cls`` (a subclass of :class:`Value`) a frozen slotted dataclass with the
    generated constructor of :func:`_fast_init` and ``evolve`` of :func:`evolver`.

    Fields are plain: no ``field(default_factory=...)``, ``kw_only``, ``init=False`` or
    ``InitVar`` (the generated constructor does not make them; a TypeError says so)."""
    if not (isinstance(cls, type) and issubclass(cls, Value)):
        raise TypeError(f"@value: {getattr(cls, '__name__', cls)!r} must derive from Value")
    made = dataclasses.dataclass(frozen=True, slots=True)(cls)
    _fast_init(made)
    setattr(made, "evolve", evolver(made))  # noqa: B010 - mypy sees Value.evolve
    return made


def _fast_init(cls: type) -> None:
    """Give the frozen slotted dataclass ``cls`` an ``__init__`` with the same parameters and
    defaults that writes each slot through its descriptor, where the dataclass's own goes
    through ``object.__setattr__`` (a frozen class's ``__setattr__`` refuses). It calls
    ``__post_init__`` when the class has one. The dataclass's own stays as
    ``cls.__dataclass_init__`` (bench/bench_values.py puts it back to measure).

    Kept because measured: with the dataclass's ``__init__`` instead (bench/bench_values.py,
    variant b) the hand benchmark is 1.06x to 1.19x slower in three runs of 11 to 21 rounds
    (1.13x in a separate a/b run of 41), the fold 1.01x to 1.09x, the audit within its noise.
    ``.venv/bin/python -m bench.bench_values --seconds 6 --rounds 21``"""
    dataclass_init = vars(cls)["__init__"]
    namespace: dict[str, Any] = {}  # the generated code's globals
    args, body = [], []
    for i, f in enumerate(dataclasses.fields(cls)):
        if not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"@value {cls.__name__}.{f.name}: only plain fields (no "
                            f"default_factory, kw_only or init=False)")
        if f.default is dataclasses.MISSING:
            args.append(f.name)
        else:
            namespace[f"_d{i}"] = f.default
            args.append(f"{f.name}=_d{i}")
        # the slot may be declared by a base class (a subclass inherits its fields)
        slot = next(vars(k)[f.name] for k in cls.__mro__ if f.name in vars(k))
        namespace[f"_s{i}"] = slot.__set__
        body.append(f"    _s{i}(self, {f.name})")
    code = dataclass_init.__code__
    if list(code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]) != [
            f.name for f in dataclasses.fields(cls)]:
        raise TypeError(f"@value {cls.__name__}: only plain fields (no InitVar)")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    src = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"])
    exec(src + "\n", namespace)  # noqa: S102 - generated from the class's own fields
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = dataclass_init.__doc__
    init.__annotations__ = dict(dataclass_init.__annotations__)
    patched: Any = cls  # mypy does not model replacing a class's __init__
    patched.__dataclass_init__ = dataclass_init
    patched.__init__ = init


def evolver(cls: type, twin: bool = True) -> Callable[..., Any]:
    """``evolve(obj, **changes)`` for the frozen slotted dataclass ``cls``: a new object with
    every slot copied from ``obj`` or taken from ``changes``, without the keyword-argument
    ``__init__`` call of ``dataclasses.replace``. It calls ``__post_init__`` on the copy when
    the class has one. ``twin=False``: without the twin below (for bench/bench_values.py).

    The copy is built as a plain twin of ``cls`` (:func:`_twin`: the same slots, so the same
    memory layout, and no frozen ``__setattr__``), whose slots plain assignments write, then it
    becomes a ``cls`` by ``__class__`` assignment, which Python allows between classes of the
    same layout. The twin never escapes. A class the twin cannot copy (fields split over
    several classes) writes each slot through its descriptor.

    Kept because measured (bench/bench_values.py, three runs of 11 to 21 rounds): with
    ``dataclasses.replace`` instead (variant c) the hand benchmark is 1.49x to 1.67x slower, the
    fold 2.6x to 2.8x, the audit 1.29x to 1.43x; without the twin (variant e) the hands are
    1.12x to 1.18x slower, the fold 1.33x to 1.39x.
    ``.venv/bin/python -m bench.bench_values --seconds 6 --rounds 21``"""
    names = [f.name for f in dataclasses.fields(cls)]
    # The changes are keyword-only in effect: a positional argument lands in ``_positional``
    # and is refused. They are not declared after ``*`` on purpose: CPython fills missing
    # keyword-only defaults by name, positional-or-keyword ones by position, and this is the
    # fold's most frequent call.
    params = "_positional=_M, /, " + ", ".join(f"{n}=_M" for n in names)
    check = ("    if _positional is not _M:\n"
             "        raise TypeError('evolve() takes the changes as keywords only')\n")
    post = "    new.__post_init__()\n" if hasattr(cls, "__post_init__") else ""
    twin_cls = _twin(cls, names) if twin else None
    if twin_cls is not None:
        body = "\n".join(f"    new.{n} = obj.{n} if {n} is _M else {n}" for n in names)
        src = (f"def evolve(obj, {params}):\n{check}    new = _new(_twin)\n{body}\n"
               f"    _set(new, '__class__', _cls)\n{post}    return new\n")
    else:
        body = "\n".join(f"    _s{i}(new, obj.{n} if {n} is _M else {n})"
                         for i, n in enumerate(names))
        src = (f"def evolve(obj, {params}):\n{check}    new = _new(_cls)\n{body}\n{post}"
               f"    return new\n")
    namespace: dict[str, Any] = {"_M": _MISSING, "_new": object.__new__, "_cls": cls,
                                 "_twin": twin_cls, "_set": object.__setattr__}
    for i, n in enumerate(names):
        namespace[f"_s{i}"] = next(vars(k)[n] for k in cls.__mro__ if n in vars(k)).__set__
    exec(src, namespace)  # noqa: S102 - generated from the class's own field names
    evolve: Callable[..., Any] = namespace["evolve"]
    evolve.__qualname__ = f"{cls.__qualname__}.evolve"
    evolve.__doc__ = f"A copy of a {cls.__name__} with the given fields changed."
    return evolve


def _twin(cls: type, names: list[str]) -> type | None:
    """A class with the slots of ``cls`` in the same order and the same bases (so the same
    layout), but none of its methods, or None when ``cls`` does not hold exactly its fields
    in its own slots directly under :class:`Value`."""
    if cls.__bases__ != (Value,) or tuple(vars(cls).get("__slots__", ())) != tuple(names):
        return None
    twin = type(f"_{cls.__name__}Twin", cls.__bases__, {"__slots__": tuple(names)})
    probe: object = object.__new__(twin)
    try:
        object.__setattr__(probe, "__class__", cls)  # the layouts must match
    except TypeError:
        return None
    return twin
