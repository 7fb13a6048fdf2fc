"""A fast ``dataclasses.replace`` and ``__init__`` for the core's frozen, slotted classes.

The fold builds a new state for every event; ``dataclasses.replace`` re-runs ``__init__``
through keyword arguments and costs about 12 us on HandState, most of a hand's time. This
generates, once per class, a function that copies the slots directly: about 2 us through the
slots' descriptors, about 0.7 us through a plain twin class of the same layout (see
:func:`evolver`). It never mutates its input: the result is a new frozen object.

A frozen dataclass's own ``__init__`` writes each field with ``object.__setattr__`` (its
``__setattr__`` refuses); the engine makes events, steps and options for every decision, and
the audit replays every decision of a log. :func:`fast_init` generates an ``__init__`` with the
same signature and defaults that writes the slots through their descriptors, at about half
the cost. The objects stay frozen: only ``__init__`` changes.
"""

from __future__ import annotations

from dataclasses import MISSING, fields

_MISSING = object()


def fast_init(*classes: type) -> None:
    """Give each frozen slotted dataclass of ``classes`` an ``__init__`` that writes its slots
    directly (same parameters, same defaults)."""
    for cls in classes:
        params = getattr(cls, "__dataclass_params__", None)
        if (params is None or not params.frozen or "__slots__" not in vars(cls)
                or hasattr(cls, "__post_init__")):
            raise TypeError(f"{cls.__name__}: fast_init is for frozen slotted dataclasses "
                            f"without __post_init__")
        namespace: dict = {}
        args, body = [], []
        for i, f in enumerate(fields(cls)):
            if not f.init or f.kw_only or f.default_factory is not MISSING:
                raise TypeError(f"{cls.__name__}.{f.name}: fast_init takes plain fields")
            if f.default is MISSING:
                args.append(f.name)
            else:
                namespace[f"_d{i}"] = f.default
                args.append(f"{f.name}=_d{i}")
            # the slot may be declared by a base class (the steps share ``owner``)
            slot = next(vars(k)[f.name] for k in cls.__mro__ if f.name in vars(k))
            namespace[f"_s{i}"] = slot.__set__
            body.append(f"    _s{i}(self, {f.name})")
        src = f"def __init__(self, {', '.join(args)}):\n" + "\n".join(body or ["    pass"])
        exec(src + "\n", namespace)  # noqa: S102 - generated from the class's own fields
        init = namespace["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        init.__doc__ = cls.__init__.__doc__
        cls.__init__ = init


def evolver(cls):
    """Return ``evolve(obj, **changes)`` for the frozen slotted dataclass ``cls``."""
    names = [f.name for f in fields(cls)]
    # The changes are keyword-only in effect: a positional argument lands in ``_positional``
    # and is refused. They are not declared keyword-only (after ``*``) because CPython fills a
    # missing keyword-only default by a dict lookup each (~0.25 us a call on HandState), a
    # missing positional-or-keyword default from a tuple.
    params = "_positional=_M, /, " + ", ".join(f"{n}=_M" for n in names)
    check = ("    if _positional is not _M:\n"
             "        raise TypeError('evolve() takes the changes as keywords only')\n")
    twin = _twin(cls, names)
    if twin is not None:
        # The copy is built as a plain twin (same slots, so the same memory layout), whose
        # slots a plain assignment writes (``new.x = v``: about 3x faster than a descriptor's
        # ``__set__`` per field), then it becomes a ``cls``: assigning ``__class__`` between
        # classes of the same layout is what Python allows it for. The twin never escapes.
        body = "\n".join(f"    new.{n} = obj.{n} if {n} is _M else {n}" for n in names)
        src = (f"def evolve(obj, {params}):\n{check}    new = _new(_twin)\n{body}\n"
               f"    _set(new, '__class__', _cls)\n    return new\n")
    else:
        # Each slot is written through its own member descriptor: no name lookup, no __setattr__.
        body = "\n".join(f"    _s{i}(new, obj.{n} if {n} is _M else {n})"
                         for i, n in enumerate(names))
        src = f"def evolve(obj, {params}):\n{check}    new = _new(_cls)\n{body}\n    return new\n"
    namespace = {"_M": _MISSING, "_new": object.__new__, "_cls": cls, "_twin": twin,
                 "_set": object.__setattr__}
    for i, n in enumerate(names):
        namespace[f"_s{i}"] = cls.__dict__[n].__set__
    exec(src, namespace)  # noqa: S102 - generated from the class's own field names
    evolve = namespace["evolve"]
    evolve.__doc__ = f"A copy of a {cls.__name__} with the given fields changed."
    return evolve


def _twin(cls: type, names: list[str]) -> type | None:
    """A plain class with the slots of ``cls`` in the same order (so the same layout), or None
    when ``cls`` is not a direct slotted subclass of ``object`` holding exactly its fields."""
    if cls.__bases__ != (object,) or tuple(vars(cls).get("__slots__", ())) != tuple(names):
        return None
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": tuple(names)})
    probe = object.__new__(twin)
    try:
        object.__setattr__(probe, "__class__", cls)  # the layouts must match
    except TypeError:
        return None
    return twin
