"""Parameters and settings from text: a TOML file, ``name=value`` pairs and a form's values, checked;
what a query may set; and each field described for tables and forms."""

from __future__ import annotations

import dataclasses
import numbers
import re
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

from hsc.params.fields import SettingError, _kind, allowed
from hsc.params.parameters import Parameters
from hsc.params.settings import Settings

T = TypeVar("T", Parameters, Settings)


def _coerce(value: Any, f: dataclasses.Field) -> Any:
    """Text (from ``--set`` or a form) converted to the field's type; other
    values pass unchanged and are checked by the dataclass (so a float for an
    integer, or a list, is refused rather than truncated)."""
    kind = {"int": int, "float": float}.get(_kind(f.type))
    if isinstance(value, str) and f.metadata.get("choices"):
        return value.strip().lower()  # the spelling the choices are checked (and compared) in
    if isinstance(value, str) and kind is not None:
        try:
            return kind(value.strip())
        except ValueError:
            raise SettingError(f.name, f"{f.name} must be {allowed(f)}, got {value!r}") from None
    if kind is float and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return float(value)
    return value


def with_values(obj: T, values: dict[str, Any]) -> T:
    """A copy of ``obj`` with the given fields replaced (strings are converted)."""
    known = {f.name: f for f in fields(obj)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise SettingError(unknown[0], f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(known)}")
    converted = {k: _coerce(v, known[k]) for k, v in values.items()}
    return dataclasses.replace(obj, **converted)


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``, with a clear error for a bad pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"expected name=value, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def split_overrides(
    values: dict[str, Any], params: Parameters, settings: Settings
) -> tuple[Parameters, Settings]:
    """Apply a flat mapping of names to whichever dataclass owns each name."""
    param_names = {f.name for f in fields(Parameters)}
    setting_names = {f.name for f in fields(Settings)}
    unknown = sorted(set(values) - param_names - setting_names)
    if unknown:
        raise SettingError(
            unknown[0],
            f"unknown setting(s): {', '.join(unknown)}; parameters are {', '.join(sorted(param_names))}; "
            f"settings are {', '.join(sorted(setting_names))}",
        )
    params = with_values(params, {k: v for k, v in values.items() if k in param_names})
    settings = with_values(settings, {k: v for k, v in values.items() if k in setting_names})
    return params, settings


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file with optional ``[parameters]`` and ``[settings]`` tables
    (or the names at top level) and flatten them. A syntax error, a table
    where a value belongs or a name given twice is a ``ValueError`` naming the
    file, the line and the key."""
    return _read_toml(path)[0]


def _read_toml(path: str | Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The flat values and the line each key is on."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise ValueError(f"{path}: cannot read the settings file ({reason})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
    lines = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.match(r"\s*([A-Za-z0-9_-]+)\s*=", line)
        if match:
            lines.setdefault(match.group(1), number)
    flat: dict[str, Any] = {}
    for key, value in data.items():
        entries = (
            value.items() if isinstance(value, dict) and key in ("parameters", "settings") else [(key, value)]
        )
        for name, item in entries:
            where = f"{path}, line {lines[name]}" if name in lines else str(path)
            if isinstance(item, dict):
                raise ValueError(f"{where}: {name} is a table; expected a value (a number or a string)")
            if name in flat:
                raise ValueError(f"{where}: {name} is given twice")
            flat[name] = item
    return flat, lines


def configure(
    config: str | Path | None = None, assignments: list[str] | None = None
) -> tuple[Parameters, Settings]:
    """Parameters and settings from defaults, a TOML file, then ``name=value``
    pairs (the CLI's ``--set``). A bad value from the file names the file,
    the line and the key."""
    return split_overrides(given_values(config, assignments), Parameters(), Settings())


def given_values(config: str | Path | None = None, assignments: list[str] | None = None) -> dict[str, Any]:
    """The names a TOML file and ``name=value`` pairs give (the pairs win), checked: a bad
    value from the file names the file, the line and the key."""
    values, lines = _read_toml(config) if config else ({}, {})
    given = parse_assignments(assignments or [])
    try:
        split_overrides({**values, **given}, Parameters(), Settings())
    except SettingError as error:
        if error.name in values and error.name not in given:
            raise SettingError(error.name, f"{config}, line {lines.get(error.name, '?')}: {error}") from None
        raise
    return {**values, **given}


# Where a parameter of each stage takes effect: what a refusal at query time points to.
STAGE_SET_WHERE = {
    "chunk": "when a repository is indexed (`index --set`, Index.index, the app's sidebar before Index)",
    "embed": "when a repository is indexed (`index --set`, Index.index)",
    "hierarchy": "when a hierarchy is built (`build --set`, Index.build, the app's Save)",
}


def query_parameter_names() -> list[str]:
    return [f.name for f in fields(Parameters) if f.metadata["stage"] == "query"]


def query_overrides(values: dict[str, Any], with_settings: bool = False) -> dict[str, Any]:
    """The parameters among ``values`` that a query applies; a parameter of another stage
    is refused, naming where it is set instead, and so is any other name unless
    ``with_settings`` lets settings through (they are left out of the answer)."""
    stages = {f.name: f.metadata["stage"] for f in fields(Parameters)}
    known = set(stages) | ({f.name for f in fields(Settings)} if with_settings else set())
    unknown = sorted(set(values) - known)
    if unknown:
        raise SettingError(
            unknown[0],
            f"unknown parameter(s): {', '.join(unknown)}; a query takes {', '.join(query_parameter_names())}",
        )
    for name in values:
        stage = stages.get(name)
        if stage is not None and stage != "query":
            raise SettingError(
                name,
                f"{name} is a {stage} parameter and cannot apply to a query: it is set "
                f"{STAGE_SET_WHERE[stage]}; a query takes {', '.join(query_parameter_names())}",
            )
    return {name: value for name, value in values.items() if stages.get(name) == "query"}


def describe(obj_type: type[Parameters] | type[Settings]) -> list[dict[str, Any]]:
    """Name, default, type, stage, help and allowed values of each field, for tables and forms."""
    return [
        {
            "name": f.name,
            "default": f.default,
            "type": str(f.type).replace("'", ""),
            "stage": f.metadata["stage"],
            "help": f.metadata["help"],
            "minimum": f.metadata.get("minimum"),
            "maximum": f.metadata.get("maximum"),
            "choices": f.metadata.get("choices"),
            "allowed": allowed(f),
        }
        for f in fields(obj_type)
    ]
