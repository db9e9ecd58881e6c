"""The tool list an agent can afford: every tool's schemas cut to what an agent reads.

An agent loads ``tools/list`` into its context at every start; pydantic's full answer schemas made
it 59 kB for 12 tools. Each output schema keeps its top-level fields with their JSON types, an
object or list of objects naming the fields it holds (one level down), so no field is hidden;
input schemas lose ``null`` defaults and ``anyOf [X, null]`` becomes a type list. The bound is a
test (``tests/e2e/test_mcp.py``) and a figure in ``benchmarks/README.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Schema = dict[str, Any]
_DEFS = "#/$defs/"


def _ref(schema: Schema) -> str | None:
    """The ``$defs`` name a ``$ref`` schema points at, or None."""
    ref = schema.get("$ref")
    return ref.removeprefix(_DEFS) if isinstance(ref, str) and ref.startswith(_DEFS) else None


def _nullable(schema: Schema) -> tuple[Schema, bool]:
    """``anyOf: [X, {type: null}]`` -> (X, True); anything else -> (it, False)."""
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = next(o for o in options if o != {"type": "null"})
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        return {**other, **rest}, True
    return schema, False


def _model(schema: Schema, defs: dict[str, Schema]) -> tuple[str, Schema] | None:
    """The model an object (or a list's items) is, by its ``$defs`` name, or None."""
    inner, _ = _nullable(schema)
    if inner.get("type") == "array" and isinstance(inner.get("items"), dict):
        inner = inner["items"]
    name = _ref(inner)
    return None if name is None else (name, defs[name])


def _fields(definition: Schema, defs: dict[str, Schema]) -> str:
    """``key, doi, notices[type, doi, date], ...``: a model's fields, and those of the models
    its lists hold (one level down)."""
    names = []
    for name, prop in definition.get("properties", {}).items():
        inner = _model(prop, defs)
        listed = _nullable(prop)[0].get("type") == "array" and inner is not None
        sub = ", ".join(inner[1].get("properties", {})) if listed and inner else ""
        names.append(f"{name}[{sub}]" if sub else name)
    return ", ".join(names)


def _typed(schema: Schema, defs: dict[str, Schema], seen: dict[str, str]) -> Schema:
    """A property's schema as its JSON type; an object or a list of objects also says which
    model it holds, with the model's fields the first time the tool list names it."""
    inner, nullable = _nullable(schema)
    name = _ref(inner)
    target = inner if name is None else defs[name]
    kind = target.get("type") or ("object" if "properties" in target else None)
    brief: Schema = {} if kind is None else {"type": [kind, "null"] if nullable else kind}
    model = _model(schema, defs)
    if model is not None:
        name, definition = model
        brief["description"] = name if name in seen else f"{name}: {_fields(definition, defs)}"
        seen.setdefault(name, "")
    return brief


def brief_output(schema: Schema, seen: dict[str, str], tool: str = "") -> Schema:
    """An output schema with every top-level field and its type. ``seen`` maps the models an
    earlier tool of the list already described to that tool (shared definitions, once): a
    second tool answering with the same model names it and that tool."""
    model = schema.get("title")
    if isinstance(model, str) and seen.get(model):
        return {"type": "object", "description": f"{model}, as {seen[model]} answers"}
    if isinstance(model, str):
        seen[model] = tool
    defs = schema.get("$defs", {})
    props = schema.get("properties", {})
    return {
        "type": "object",
        "properties": {name: _typed(prop, defs, seen) for name, prop in props.items()},
    }


def shrink_tools(tools: Iterable[Any]) -> None:
    """Every tool's advertised schemas cut, in the order the tool list shows them, its input
    schema closed (``additionalProperties: false``, as ``RwServer.call_tool`` enforces it) and its
    description on one line. A docstring's line breaks and indentation are tokens in every
    agent's context, and so are pydantic's generated titles ("Key", "Doi") of every property."""
    seen: dict[str, str] = {}
    for tool in tools:
        brief = brief_input(tool.parameters)
        tool.parameters.clear()
        tool.parameters.update(brief, additionalProperties=False)
        tool.description = " ".join((tool.description or "").split())
        output = tool.fn_metadata.output_schema
        if output is not None:
            shrunk = brief_output(output, seen, tool.name)
            output.clear()
            output.update(shrunk)


def _noise(key: str, value: Any) -> bool:
    """What no agent needs to read: pydantic's generated ``title`` strings (a property *named*
    ``title`` is a schema object, and stays), a null or false default (an optional argument's or
    a flag's), a length cap no real argument reaches, the 1000..2999 bounds of a year, a minimum
    of 1."""
    return (
        (key == "title" and isinstance(value, str))
        or (key == "default" and (value is None or value is False))
        or (key == "maxLength" and isinstance(value, int) and value >= 100)
        or (key, value) in (("minimum", 1000), ("maximum", 2999), ("minimum", 1))
    )


_TRIVIAL: tuple[Schema, ...] = ({"items": {}}, {"additionalProperties": True})


def _one_type(options: list[Any]) -> list[str] | None:
    """``anyOf`` of bare types (a list of anything, an object of anything) as one type list."""
    kinds = []
    for option in options:
        rest = {k: v for k, v in option.items() if {k: v} not in _TRIVIAL}
        if set(rest) != {"type"} or not isinstance(rest["type"], str):
            return None
        kinds.append(rest["type"])
    return kinds


def brief_input(schema: Any) -> Any:
    """An input schema without titles or ``default: null`` and with ``anyOf [X, null]`` as a
    type list (the arguments are validated by the tool's own model, not by this text)."""
    if isinstance(schema, list):
        return [brief_input(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("anyOf"), list) and (kinds := _one_type(schema["anyOf"])):
        schema = {"type": kinds, **{k: v for k, v in schema.items() if k != "anyOf"}}
    inner, nullable = _nullable(schema)
    out = {k: brief_input(v) for k, v in inner.items() if not _noise(k, v)}
    if nullable and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    elif nullable:
        out = {"anyOf": [out, {"type": "null"}]}
    return out
