"""Building many models fast from values this program made itself.

A check of 100,000 works builds hundreds of thousands of models (references, look-ups, notices,
verdicts) from values rwgate produced and typed itself: validating them again only costs time, and
the cyclic garbage collector, rescanning a heap that grows by millions of objects, costs more.
Outside input is still validated where it enters (readers' fields, HTTP answers, MCP arguments);
these helpers are for the hot paths inside.

:func:`trusted` fills a model's fields directly, which is what ``model_construct`` ends with;
``model_construct`` itself runs a Python loop over every field and alias and was measured slower
than full validation (100,000 Lookups: 0.12 s here, 0.26 s validated, 0.68 s with
``model_construct``). It is used only for plain models (no private attributes, extras or post-init
hook: what ``model_construct`` would otherwise set up) while :data:`ENABLED` holds, and falls back
to validated construction otherwise; tests check that both give equal models.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel

ENABLED = True
"""False makes every :func:`trusted` call validate (the tests compare both ways)."""

_M = TypeVar("_M", bound=BaseModel)
_setattr = object.__setattr__
_new = object.__new__
_Plan = tuple[dict[str, Any], tuple[tuple[str, Any], ...], int, set[str]]
_plans: dict[type[BaseModel], _Plan | None] = {}
_fields_sets: dict[tuple[type[BaseModel], tuple[str, ...]], set[str]] = {}


def _plan(cls: type[BaseModel]) -> _Plan | None:
    """A plain model's constant defaults, its (field, default factory) pairs, its number of fields
    and the fields set its fully named instances share; None for a model that is not plain."""
    if cls not in _plans:
        fields = cls.model_fields
        plain = (
            not cls.__private_attributes__
            and cls.__new__ is object.__new__
            and cls.model_config.get("extra") != "allow"
            and cls.__pydantic_post_init__ is None
            and not any(f.alias and f.alias != name for name, f in fields.items())
        )
        constant = {n: f.default for n, f in fields.items() if f.default_factory is None}
        factories = tuple((n, f.default_factory) for n, f in fields.items() if f.default_factory)
        _plans[cls] = (constant, factories, len(fields), set(fields)) if plain else None
    return _plans[cls]


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls(**values)`` without validation, for values rwgate made and typed itself.

    Fields not named get their defaults, but are not in ``model_fields_set`` (as after validation).
    ``values`` must be a dict made for this call (a literal): when it names every field it becomes
    the model's ``__dict__`` without a copy.

    Models built with the same field names share one ``model_fields_set`` object: a set per model
    was a fifth of a 100,000-work check's memory, and nothing in rwgate reads it (``model_copy``
    copies it before changing it; only ``exclude_unset`` dumps, which rwgate never asks for, and
    assignment to a field, which rwgate never does on these models, would see it shared).
    """
    plan = _plans.get(cls) or _plan(cls)
    if plan is None or not ENABLED:
        return cls(**values)
    constant, factories, count, every = plan
    if len(values) == count:  # every field named (a dict cannot name one twice)
        state, names = values, every
    else:
        state = {**constant, **values}
        for name, factory in factories:
            if name not in values:
                state[name] = factory()
        shape = (cls, tuple(values))
        names = _fields_sets.get(shape) or _fields_sets.setdefault(shape, set(values))
    obj = _new(cls)  # BaseModel has no __new__ of its own (checked in _plan): object's
    _setattr(obj, "__dict__", state)
    _setattr(obj, "__pydantic_fields_set__", names)
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection while a batch of objects is built (they are all kept anyway).

    On the way out the objects built are moved to the oldest generation without a scan
    (``freeze`` then ``unfreeze``): re-enabling the collector with a million young objects
    pending would otherwise scan them all at the next allocation (0.15-0.25 s for 100,000
    works), only to keep them. They are still collected, with the old generation.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
