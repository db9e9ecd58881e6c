"""``rwgate lsp`` without its extra: one line naming the install command, exit 2."""

from __future__ import annotations

import sys

import pytest

from rwgate.frontends.cli.main import main


def test_without_pygls_one_line_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [
        m for m in sys.modules if m == "pygls" or m.startswith(("pygls.", "rwgate.frontends.lsp."))
    ]:
        if name != "rwgate.frontends.lsp.command":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygls", None)
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "rwgate lsp needs pygls" in err and "pip install '.[lsp]'" in err
