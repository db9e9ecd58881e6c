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
_plain_cache: dict[type[BaseModel], tuple[dict[str, Any], tuple[tuple[str, Any], ...]] | None] = {}
_fields_sets: dict[tuple[type[BaseModel], tuple[str, ...]], set[str]] = {}


def _defaults(
    cls: type[BaseModel],
) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]] | None:
    """A plain model's constant defaults and its (field, default factory) pairs; else None."""
    if cls not in _plain_cache:
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
        _plain_cache[cls] = (constant, factories) if plain else None
    return _plain_cache[cls]


def trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """``cls(**values)`` without validation, for values rwgate made and typed itself.

    Fields not named get their defaults, but are not in ``model_fields_set`` (as after validation).
    Models built with the same field names share one ``model_fields_set`` object: a set per model
    was a fifth of a 100,000-work check's memory, and nothing in rwgate reads it (``model_copy``
    copies it before changing it; only ``exclude_unset`` dumps, which rwgate never asks for, and
    assignment to a field, which rwgate never does on these models, would see it shared).
    """
    plan = _plain_cache[cls] if cls in _plain_cache else _defaults(cls)
    if plan is None or not ENABLED:
        return cls(**values)
    constant, factories = plan
    state = {**constant, **values}
    for name, factory in factories:
        if name not in values:
            state[name] = factory()
    obj = _new(cls)  # BaseModel has no __new__ of its own: object's, without the lookup
    _setattr(obj, "__dict__", state)
    names = (cls, tuple(values))
    shared = _fields_sets.get(names)
    if shared is None:
        shared = _fields_sets.setdefault(names, set(values))
    _setattr(obj, "__pydantic_fields_set__", shared)
    _setattr(obj, "__pydantic_extra__", None)
    _setattr(obj, "__pydantic_private__", None)
    return obj


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection while a batch of objects is built (they are all kept anyway)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
