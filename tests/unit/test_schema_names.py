"""The names of rwgate's published layouts are part of the contract: a layout's name changes only
with its layout. (A package move once rewrote four of them as module paths, ``rwgate.lock/1``
becoming ``rwgate.verdicts.lock/1``, and every test moved with it.)"""

from __future__ import annotations

from rwgate.contract.models import REPORT_SCHEMA
from rwgate.frontends.latex.verdict import STATE_SCHEMA
from rwgate.frontends.screen.summary import SCHEMA as SCREEN_SCHEMA
from rwgate.frontends.verify.report import VERIFY_SCHEMA
from rwgate.settings.recorded import LAYOUT
from rwgate.verdicts.lock import LOCK_SCHEMA


def test_published_layout_names_are_not_module_paths() -> None:
    assert REPORT_SCHEMA == "rwgate.report/1"
    assert LOCK_SCHEMA == "rwgate.lock/1"
    assert SCREEN_SCHEMA == "rwgate.screen/2"
    assert VERIFY_SCHEMA == "rwgate.verify/1"
    assert STATE_SCHEMA == "rwgate.latex/1"
    assert LAYOUT == "rwgate-record/1"
