"""Benchmark (issue 48): how far the user's settings travel through the code of one run.

Three real runs on the bundled example, offline against the bundled sample snapshot (imported
first into isolated ``XDG_CONFIG_HOME``/``XDG_CACHE_HOME``/``XDG_DATA_HOME``), each in a fresh
cache so that no memo answers it:

* ``rwgate check --offline paper.md``;
* ``pandoc paper.md --citeproc --filter rw-filter -t html`` (pandoc from the pypandoc wheel);
* ``rw-latexmk --offline paper.tex`` (latexmk then runs the ``rwgate bibtex`` hook, a Python
  process of its own).

Every Python process of a run is profiled with ``sys.setprofile`` (and ``threading.setprofile``),
installed before anything else runs by a ``sitecustomize`` module this script writes and puts on
``PYTHONPATH``: a run is the real console script, its hooks included, with the resident worker
off (``RWGATE_RESIDENT=0``). Each process writes what it saw on exit; this script adds them up.

Definitions (a *settings object* is an instance of :class:`rwgate.settings.config.Settings` or of
:class:`rwgate.settings.policy.Policy`, or of a subclass):

* **stays**: the distinct rwgate functions (module + qualified name) called at least once with an
  argument (``self`` and ``*args`` items included, ``**kwargs`` not) that is a settings object,
  or an rwgate object holding one as a direct attribute (``vars()`` or ``__slots__``, one level);
* **rooms**: the distinct modules those functions live in;
* **climbs**: the distinct (caller, callee) pairs of stays, where the caller is the nearest rwgate
  frame under the callee's (frames of the standard library or of dependencies in between are
  skipped), whose two modules fall in different entries of the ``layers`` contract in
  pyproject.toml (a module belongs to the longest entry that is it or a package holding it), the
  callee's entry in a higher layer than the caller's. Entries of one layer (``|`` or ``:``) are
  never a climb between them; a module in no entry is never one either. The contract forbids
  importing upward, so a climb can only be a call back (a function or object handed down);
* **crossings** (for context): the same pairs in either direction, down the layers included.

Usage: ``.venv/bin/python benchmarks/settings_walk.py [-v] [--only NAME] [--json FILE]``. The
rwgate measured is the one Python imports: ``PYTHONPATH=OTHER/src`` measures another tree (the
"before" figures in benchmarks/README.md are 74ac5de's ``src`` measured so).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import rwgate

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# Installed as sitecustomize.py: runs at the start of every Python process of a run (the hooks
# latexmk starts included) and only when RWGATE_WALK_OUT is set. Standard library only.
PROFILER = r"""
import atexit, json, os, sys, threading

_OUT = os.environ.get("RWGATE_WALK_OUT")
if _OUT:
    _SRC = os.environ["RWGATE_WALK_SRC"]
    _TOP = os.path.dirname(_SRC.rstrip(os.sep))
    _TARGETS = frozenset(os.environ["RWGATE_WALK_CLASSES"].split(","))
    _names = {}
    _stays = {}
    _edges = set()

    def _name(code):
        name = _names.get(code)
        if name is None:
            module = os.path.relpath(code.co_filename, _TOP)[:-3].replace(os.sep, ".")
            module = module[: -len(".__init__")] if module.endswith(".__init__") else module
            name = _names[code] = (module, module + ":" + code.co_qualname)
        return name

    def _is_settings(value):
        return any(k.__module__ + "." + k.__qualname__ in _TARGETS for k in type(value).__mro__)

    def _holds(value):
        if _is_settings(value):
            return True
        kind = type(value)
        if not kind.__module__.startswith("rwgate"):
            return False
        try:
            attrs = list(vars(value).values())
        except TypeError:
            attrs = [getattr(value, s, None) for s in getattr(kind, "__slots__", ())]
        return any(_is_settings(a) for a in attrs)

    def _profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(_SRC):
            return
        count = code.co_argcount + code.co_kwonlyargcount
        star = bool(code.co_flags & 0x04)
        if not count and not star:
            return
        local = frame.f_locals
        values = [local.get(v) for v in code.co_varnames[:count]]
        if star:
            values.extend(local.get(code.co_varnames[count], ()) or ())
        if not any(_holds(v) for v in values):
            return
        module, name = _name(code)
        _stays[name] = module
        back = frame.f_back
        while back is not None and not back.f_code.co_filename.startswith(_SRC):
            back = back.f_back
        if back is not None:
            _edges.add((_name(back.f_code)[1], name))

    def _dump():
        sys.setprofile(None)
        threading.setprofile(None)
        path = os.path.join(_OUT, "%d.json" % os.getpid())
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"argv": sys.argv, "stays": _stays, "edges": sorted(_edges)}, out)

    atexit.register(_dump)
    threading.setprofile(_profile)
    sys.setprofile(_profile)
"""


@dataclass
class Walk:
    """What the processes of one run saw, added up."""

    stays: dict[str, str] = field(default_factory=dict)
    edges: set[tuple[str, str]] = field(default_factory=set)
    processes: int = 0

    @classmethod
    def read(cls, folder: Path) -> Walk:
        walk = cls()
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text("utf-8"))
            walk.stays.update(data["stays"])
            walk.edges.update((a, b) for a, b in data["edges"])
            walk.processes += 1
        return walk

    def rooms(self) -> set[str]:
        return set(self.stays.values())

    def crossings(self, layers: list[list[str]]) -> list[tuple[str, str, bool]]:
        """The calls between two stays whose modules fall in different entries of the layers
        contract, each with whether it goes up (a climb, see the module doc)."""
        out = []
        for caller, callee in sorted(self.edges):
            if caller not in self.stays or callee not in self.stays:
                continue
            here = layer_of(self.stays[caller], layers)
            there = layer_of(self.stays[callee], layers)
            if here is None or there is None or here[1] == there[1]:
                continue
            out.append((caller, callee, there[0] < here[0]))  # layer 0 is the highest
        return out

    def climbs(self, layers: list[list[str]]) -> list[tuple[str, str]]:
        """The crossings that go up the layers contract."""
        return [(a, b) for a, b, up in self.crossings(layers) if up]


def read_layers(pyproject: Path) -> list[list[str]]:
    """The layers contract, highest first, each layer as its entries."""
    data = tomllib.loads(pyproject.read_text("utf-8"))
    for contract in data["tool"]["importlinter"]["contracts"]:
        if contract.get("type") == "layers":
            return [
                [e.strip() for e in layer.replace(":", "|").split("|")]
                for layer in contract["layers"]
            ]
    raise SystemExit("no layers contract in pyproject.toml")


def layer_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """(layer index, entry) of the longest entry that is ``module`` or a package holding it."""
    best: tuple[int, str] | None = None
    for index, layer in enumerate(layers):
        for entry in layer:
            inside = module == entry or module.startswith(entry + ".")
            if inside and (best is None or len(entry) > len(best[1])):
                best = (index, entry)
    return best


def settings_classes() -> str:
    from rwgate.settings.config import Settings
    from rwgate.settings.policy import Policy

    return ",".join(f"{k.__module__}.{k.__qualname__}" for k in (Settings, Policy))


def _env(base: Path, site: Path, out: Path | None, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RWGATE_", "XDG_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        XDG_CONFIG_HOME=str(base / "config"),
        XDG_CACHE_HOME=str(base / cache),
        XDG_DATA_HOME=str(base / "data"),
        RWGATE_RESIDENT="0",
        RWGATE_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH")))),
    )
    if out is not None:
        env.update(
            RWGATE_WALK_OUT=str(out),
            RWGATE_WALK_SRC=str(Path(rwgate.__file__).parent) + os.sep,
            RWGATE_WALK_CLASSES=settings_classes(),
        )
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], name: str) -> int:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):  # 1: the gate stopped the build (still a full run)
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"{name}: exit status {proc.returncode}")
    return proc.returncode


def front_ends() -> dict[str, list[str]]:
    from rwgate.readers.pandoc_exe import pandoc_path

    return {
        "rwgate check": [str(BIN / "rwgate"), "check", "--offline", "paper.md"],
        "rw-filter": [
            *(pandoc_path(), "paper.md", "--citeproc", "--filter", "rw-filter"),
            *("-t", "html", "-o", "paper.html"),
        ],
        "rw-latexmk": [str(BIN / "rw-latexmk"), "--offline", "-pdf", "paper.tex"],
    }


def measure(names: Iterable[str] | None = None) -> dict[str, Walk]:
    """Each front end's walk, run in a scratch copy of examples/."""
    walks = {}
    with tempfile.TemporaryDirectory(prefix="rwgate-walk-") as tmp:
        base = Path(tmp)
        site = base / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(PROFILER, "utf-8")
        _run(
            [str(BIN / "rwgate"), "data", "import", "--sample"],
            base,
            _env(base, site, None, "c"),
            "import",
        )
        for name, cmd in front_ends().items():
            if names is not None and name not in names:
                continue
            work, out = base / name.replace(" ", "-"), base / f"out-{name.replace(' ', '-')}"
            work.mkdir()
            out.mkdir()
            for file in ("paper.md", "paper.tex", "refs.bib"):
                shutil.copy(ROOT / "examples" / file, work / file)
            _run(cmd, work, _env(base, site, out, f"cache-{work.name}"), name)
            walks[name] = Walk.read(out)
    return walks


def table(walks: dict[str, Walk], layers: list[list[str]]) -> str:
    rows = [
        "| front end | processes | stays | rooms | climbs | crossings |",
        "|---|---|---|---|---|---|",
    ]
    for name, walk in walks.items():
        rows.append(
            f"| {name} | {walk.processes} | {len(walk.stays)} | {len(walk.rooms())} "
            f"| {len(walk.climbs(layers))} | {len(walk.crossings(layers))} |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--json", type=Path, help="also write every stay and climb here")
    parser.add_argument("-v", "--verbose", action="store_true", help="list stays and climbs")
    parser.add_argument("--only", action="append", help="one front end (repeatable)")
    args = parser.parse_args()
    layers = read_layers(ROOT / "pyproject.toml")
    walks = measure(args.only)
    print(table(walks, layers))
    if args.verbose:
        for name, walk in walks.items():
            print(f"\n{name}: stays")
            for stay in sorted(walk.stays):
                print(f"  {stay}")
            print(f"{name}: crossings (^ a climb)")
            for caller, callee, up in walk.crossings(layers):
                print(f"  {'^' if up else ' '} {caller} -> {callee}")
    if args.json is not None:
        data = {
            name: {
                "stays": sorted(walk.stays),
                "rooms": sorted(walk.rooms()),
                "climbs": walk.climbs(layers),
                "crossings": [[a, b] for a, b, _ in walk.crossings(layers)],
            }
            for name, walk in walks.items()
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
