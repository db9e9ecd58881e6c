"""Settings, layered as DESIGN.md says (later wins).

1. built-in defaults; 2. ``[tool.rwgate]`` of the nearest ``pyproject.toml`` or a ``rwgate.toml``,
searched upward from the document; 3. ``RWGATE_*`` environment; 4. per-document values (pandoc
``rwgate:`` metadata, command-line flags). Every layer is validated by one Pydantic model so an
invalid value is reported the same way wherever it came from: one line naming the file and key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rwgate.contract.models import Status
from rwgate.errors import ConfigError
from rwgate.settings import recorded
from rwgate.settings.files import user_config_path
from rwgate.settings.policy import OVERRIDES, AllowEntry, Policy, Preset


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: Preset = "default"
    fail_on: list[Status] = Field(default_factory=list)
    annotate: list[Status] = Field(default_factory=list)
    warn: list[Status] = Field(default_factory=list)
    ignore: list[Status] = Field(default_factory=list)
    allow: list[AllowEntry] = Field(default_factory=list)
    offline: bool = False
    no_cache: bool = False
    no_memo: bool = Field(
        default=False, description="remember no verdict (memos off; the look-up cache stays)"
    )
    cache_dir: Path | None = None
    snapshot: Path | None = None
    report: Path | None = None
    since: Path | None = Field(
        default=None, description="lockfile: report and gate on what changed since it"
    )
    lock: Path | None = Field(default=None, description="write the lockfile here after a check")
    crossref_url: str = "https://api.crossref.org"
    openalex_url: str = "https://api.openalex.org"
    doi_url: str = "https://doi.org"
    arxiv_url: str = "https://export.arxiv.org/api/query"
    arxiv_oai_url: str = "https://oaipmh.arxiv.org/oai"
    biorxiv_url: str = "https://api.biorxiv.org"
    mailto: str | None = None
    template: str | None = None
    inline: bool = False
    timeout: float = Field(default=10.0, gt=0)
    max_total_seconds: float = Field(default=60.0, gt=0)
    max_snapshot_age_days: int = Field(default=30, ge=0)
    recover_dois: bool = Field(
        default=False, description="look up entries without a DOI by title (verified matches)"
    )
    config_file: str | None = None
    warnings: list[str] = Field(
        default_factory=list, description="keys a document set that it may not (ignored)"
    )

    @property
    def cache_folder(self) -> Path:
        """The cache folder: ``cache_dir`` (a flag, ``RWGATE_CACHE_DIR``, the user's
        configuration) or the platform's default for the invoking user."""
        from rwgate.settings.paths import default_cache_dir

        return Path(self.cache_dir or default_cache_dir())

    @property
    def lookup_cache(self) -> Path | None:
        """The look-up cache's folder; None under ``--no-cache``."""
        return None if self.no_cache else self.cache_folder

    @field_validator("mailto")
    @classmethod
    def _plain_address(cls, value: str | None) -> str | None:
        """It goes into a User-Agent header: no line breaks, no header syntax."""
        if value is not None and (set(value) & set("\r\n;()") or "@" not in value):
            raise ValueError("expected a plain e-mail address")
        return value

    @field_validator("template")
    @classmethod
    def _template_compiles(cls, value: str | None) -> str | None:
        """A broken template is a configuration error here, not a crash at the first annotation."""
        if value:
            from jinja2 import Environment, TemplateSyntaxError

            try:
                Environment().parse(value)
            except TemplateSyntaxError as exc:
                raise ValueError(f"not a valid Jinja2 template: {exc.message}") from None
        return value

    def to_policy(self) -> Policy:
        """The policy these settings describe (validated: unknown statuses are errors)."""
        lists = {name: getattr(self, name) for name in OVERRIDES}
        try:
            return Policy.model_validate({"preset": self.policy, "allow": self.allow, **lists})
        except ValidationError as exc:
            raise ConfigError(_one_line(exc, self.config_file or "configuration")) from None


DOCUMENT_KEYS = frozenset(
    {"policy", "fail_on", "annotate", "warn", "ignore", "allow", "template", "inline",
     "recover_dois"}
)  # fmt: skip
"""What a document may set (its metadata, a config file beside it): policy, never the judge."""
USER_KEYS = frozenset(Settings.model_fields) - DOCUMENT_KEYS - {"config_file", "warnings"}
"""Where data comes from and where files go: the invoking user's alone (flags, environment, user
config). A new setting is a user key unless it is added to :data:`DOCUMENT_KEYS`: fail closed.
Every integrity source's declared ``settings`` are among these (tested)."""

_ENV: dict[str, str] = {
    "RWGATE_POLICY": "policy",
    "RWGATE_OFFLINE": "offline",
    "RWGATE_NO_CACHE": "no_cache",
    "RWGATE_NO_MEMO": "no_memo",
    "RWGATE_CACHE_DIR": "cache_dir",
    "RWGATE_SNAPSHOT": "snapshot",
    "RWGATE_REPORT": "report",
    "RWGATE_SINCE": "since",
    "RWGATE_LOCK": "lock",
    "RWGATE_CROSSREF_URL": "crossref_url",
    "RWGATE_OPENALEX_URL": "openalex_url",
    "RWGATE_DOI_URL": "doi_url",
    "RWGATE_ARXIV_URL": "arxiv_url",
    "RWGATE_ARXIV_OAI_URL": "arxiv_oai_url",
    "RWGATE_BIORXIV_URL": "biorxiv_url",
    "CROSSREF_MAILTO": "mailto",
    "RWGATE_TIMEOUT": "timeout",
    "RWGATE_MAX_SECONDS": "max_total_seconds",
    "RWGATE_RECOVER_DOIS": "recover_dois",
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _one_line(exc: ValidationError, where: str, names: Mapping[str, str] | None = None) -> str:
    """``where: key: message``; ``names`` spells a key as the user wrote it (an environment
    variable rather than the setting it feeds)."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
    if names and err["loc"] and str(err["loc"][0]) in names:
        loc = ".".join([names[str(err["loc"][0])], *(str(p) for p in err["loc"][1:])])
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
    more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
    return f"{where}: {loc}: {msg}{more}"


def _clean_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """TOML and YAML users write ``fail-on``, the model says ``fail_on``; a None sets nothing."""
    return {str(k).replace("-", "_"): v for k, v in data.items() if v is not None}


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, key in _ENV.items():
        value = env.get(var)
        if value is None:
            continue
        if key in ("offline", "no_cache", "no_memo", "recover_dois"):
            low = value.strip().lower()
            if low not in _TRUE | _FALSE:
                raise ConfigError(f"environment: {var}={value!r}: expected 1 or 0")
            layer[key] = low in _TRUE
        elif value.strip():
            layer[key] = value.strip()
    return layer


def _validated(
    data: dict[str, Any], where: str, names: Mapping[str, str] | None = None
) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_one_line(exc, where, names)) from None


def _merge(
    merged: dict[str, Any],
    layer: dict[str, Any],
    where: str,
    names: Mapping[str, str] | None = None,
) -> None:
    """``layer`` over ``merged``, once the two validate together (an error names ``where``)."""
    _validated({**merged, **layer}, where, names)
    merged.update(layer)


CONFIG_NAMES = ("rwgate.toml", "pyproject.toml")


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; ConfigError (one line, naming the file) if unreadable.
    The read is recorded (:mod:`rwgate.settings.recorded`): a memo re-checks the file's bytes."""
    try:
        raw = recorded.read_bytes(path)
        # Universal newlines, as a text-mode read would.
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        return tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None


def rwgate_section(path: Path, data: dict[str, Any]) -> Mapping[str, Any]:
    """The rwgate table of a file read by :func:`read_toml`: ``[tool.rwgate]``, else (a
    ``rwgate.toml`` or the user's ``config.toml``) the whole file; ConfigError when not a table."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table")
    section = tool.get("rwgate", data)
    if not isinstance(section, Mapping):
        raise ConfigError(f"{path}: [tool.rwgate] must be a table")
    return section


def find_config(start: Path) -> tuple[Path, Mapping[str, Any]] | None:
    """The nearest configuration file above ``start``: its path and rwgate section.

    A ``pyproject.toml`` without ``[tool.rwgate]`` is not one (the search goes on upward); a
    ``rwgate.toml`` always is, with or without the ``[tool.rwgate]`` header. Every candidate
    looked at is recorded, found or not: a configuration file that appears later invalidates.
    """
    here = start if start.is_dir() else start.parent
    for folder in [here.resolve(), *here.resolve().parents]:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                recorded.note_missing(candidate)
                continue
            data = read_toml(candidate)
            section = rwgate_section(candidate, data)
            if name == "rwgate.toml" or "rwgate" in data.get("tool", {}):
                return candidate, section
    return None


def _user_layer(env: Mapping[str, str]) -> tuple[Path, dict[str, Any]] | None:
    """The user configuration file's table (``[tool.rwgate]`` or top level), if there is one."""
    path = user_config_path(env)
    if not path.is_file():
        recorded.note_missing(path)
        return None
    return path, _clean_keys(rwgate_section(path, read_toml(path)))


def _document_layer(values: Mapping[str, Any], where: str, notes: list[str]) -> dict[str, Any]:
    """What a document may set (policy): any other key is dropped with a warning naming it."""
    layer = _clean_keys(values)
    for key in [k for k in layer if k in USER_KEYS]:  # unknown keys stay: validation names them
        del layer[key]
        notes.append(
            f"{where}: '{key}' ignored: a document sets policy only; where data comes from"
            " and where files go are the invoking user's (flags, environment,"
            " ~/.config/rwgate/config.toml)"
        )
    return layer


def _anchor_paths(layer: dict[str, Any], base: Path) -> None:
    for key in ("cache_dir", "snapshot", "report", "since", "lock"):
        if isinstance(layer.get(key), str):
            layer[key] = str(base / Path(layer[key]).expanduser())


def load_settings(
    start: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    overrides_name: str = "command line",
    metadata: Mapping[str, Any] | None = None,
    metadata_name: str = "metadata rwgate",
) -> Settings:
    """Settings for a document at ``start`` (a file or folder; the working directory if None).

    Layers, later wins: defaults; the invoking user's config file (any key); the ``rwgate.toml``
    or ``[tool.rwgate]`` found upward from the document (policy keys only); the environment (any
    key); the document's ``rwgate:`` metadata (policy keys only); ``overrides``, the invoking
    user's flags (any key). **The document is judged; it does not choose the judge**: a key a
    document may not set is dropped, and ``Settings.warnings`` names it and the file.
    """
    env = recorded.environ(env)  # every variable consulted is in the run's record
    merged: dict[str, Any] = {}
    notes: list[str] = []
    user = _user_layer(env)
    if user is not None:
        path, layer = user
        _anchor_paths(layer, path.parent)
        _merge(merged, layer, str(path))
    found = find_config(start or Path.cwd())
    if found is not None:
        path, section = found
        _merge(merged, _document_layer(section, str(path), notes), str(path))
        merged["config_file"] = str(path)
    _merge(merged, _env_layer(env), "environment", {v: k for k, v in _ENV.items()})
    if metadata:
        _merge(merged, _document_layer(metadata, metadata_name, notes), metadata_name)
    if overrides:
        _merge(merged, _clean_keys(overrides), overrides_name)
    settings = _validated(merged, "configuration")
    settings.to_policy()  # surface invalid statuses now, with the file named
    settings.warnings = notes
    return settings
