"""Issue 48: rw-filter chooses who runs it (pandoc, or the Lua filter) once, at its entry.

The Lua filter's options (``--verdicts``, ``--lua-memo FILE``) were threaded as flags, then as a
``Caller``, through ``process``, ``check_document`` and the run into ``finalize``. They are now
read once into :class:`rwgate.frontends.pandoc.filter.Filter`, whose phases read them there: no
function
of the filter takes the mode as a parameter.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from rwgate.frontends.pandoc import filter as rw_filter
from rwgate.frontends.pandoc.filter import Filter
from rwgate.frontends.pandoc.lua import lua_answer
from rwgate.settings import recorded


@pytest.mark.parametrize(
    ("args", "fmt", "verdicts", "memo"),
    [
        ([], "html", False, None),
        (["latex"], "latex", False, None),
        (["html", "--verdicts"], "html", True, None),
        (["docx", "--lua-memo", "m.json"], "docx", False, Path("m.json")),
        (["html", "--verdicts", "--lua-memo", "m.json"], "html", True, Path("m.json")),
        (["html", "--lua-memo"], "html", False, None),
    ],
)
def test_the_mode_is_read_once_from_the_arguments(
    args: list[str], fmt: str, verdicts: bool, memo: Path | None
) -> None:
    run = Filter.of(args, {"RWGATE_VERBOSE": "1"})
    assert (run.fmt, run.verdicts, run.memo) == (fmt, verdicts, memo)
    assert isinstance(run.env, recorded.RecordingEnv)  # every read recorded, as before
    assert run.env["RWGATE_VERBOSE"] == "1"


def test_untouched_answers_as_the_caller_expects() -> None:
    assert Filter.of(["html"], {}).untouched(b"{}") == b"{}"
    assert Filter.of(["html", "--verdicts"], {}).untouched(b"{}") == lua_answer({}, {})


def test_no_function_of_the_filter_takes_the_mode() -> None:
    """The mode lives on the Filter (its constructor aside): no function or method takes it."""
    names = {"caller", "verdicts", "lua_memo", "memo"}
    functions = [f for _, f in inspect.getmembers(rw_filter, inspect.isfunction)]
    functions += [f for _, f in inspect.getmembers(Filter, inspect.isfunction)]
    for function in functions:
        if function.__module__ != rw_filter.__name__ or function.__name__ == "__init__":
            continue
        taken = set(inspect.signature(function).parameters) & names
        assert not taken, f"{function.__qualname__} takes {taken}"
