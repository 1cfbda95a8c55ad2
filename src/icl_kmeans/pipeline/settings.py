"""Resolve the pipeline configuration: a preset's values, overridden by config.yaml and --config,
validated against the schema with errors that name key, value and what is allowed. No torch import.

The schema (types, ranges, descriptions) and the presets (values) are package data, in
icl_kmeans/pipeline/config/: config.schema.yaml and presets/<preset>.yaml. The workflow, the figures'
scale lines and the review read them from the installed package, wherever it runs.
"""

from __future__ import annotations

import copy
import functools
from importlib import resources
from pathlib import Path

import jsonschema
import yaml


SUBSET_SEEDS = 3  # seeds of a subset run unless `seeds` is given (the paper's first three)
DEFAULT_PRESET = "quick"  # when config.yaml and --config name none
CONFIG_DIR = resources.files(__package__) / "config"


class ConfigError(ValueError):
    pass


def _explain(err: jsonschema.ValidationError, schema: dict) -> str:
    key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties":
        allowed = ", ".join(sorted(schema["properties"]))
        return f"{err.message}. Allowed keys: {allowed}"
    prop = schema["properties"].get(str(err.absolute_path[0]) if err.absolute_path else "", {})
    allowed = prop.get("description", "")
    if "enum" in prop:
        allowed = f"one of {prop['enum']}. {allowed}"
    return f"config key {key!r} has invalid value {err.instance!r}: {err.message}. Allowed: {allowed}"


def validate(config: dict, schema: dict, where: str) -> None:
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(config), key=lambda e: list(e.path))
    if errors:
        raise ConfigError(f"invalid configuration ({where}):\n  " + "\n  ".join(_explain(e, schema) for e in errors))


def _types(prop: dict) -> set:
    t = prop.get("type", [])
    return {t} if isinstance(t, str) else set(t)


def _from_cli(value, prop: dict):
    """value with the strings that the schema wants as integer, number or boolean converted (left as
    they are when they do not parse: validation then names them)."""
    if isinstance(value, list) and "items" in prop:
        return [_from_cli(v, prop["items"]) for v in value]
    if isinstance(value, dict) and "properties" in prop:
        return {k: _from_cli(v, prop["properties"].get(k, {})) for k, v in value.items()}
    if not isinstance(value, str) or "string" in _types(prop):
        return value
    for kind, parse in (("integer", int), ("number", float)):
        if kind in _types(prop):
            try:
                return parse(value)
            except ValueError:
                pass
    if "boolean" in _types(prop) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def coerce_cli(config: dict, schema: dict) -> dict:
    """config (in place) with the values typed as the schema says. `snakemake --config "seeds=[1,2]"`
    parses a list's items with YAML's base loader, as strings ('1', '2'); scalars arrive typed."""
    for key, value in list(config.items()):
        config[key] = _from_cli(value, schema["properties"].get(key, {}))
    return config


def schema_file() -> Path:
    """config.schema.yaml, the package's file (a path: Snakemake's and jsonschema's tools read paths)."""
    return Path(str(CONFIG_DIR / "config.schema.yaml"))


def preset_file(preset: str) -> Path:
    return Path(str(CONFIG_DIR / "presets" / f"{preset}.yaml"))


@functools.lru_cache(maxsize=None)
def _load_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def load_schema() -> dict:
    return _load_yaml(schema_file())


def load_preset(preset: str) -> dict:
    """A preset's values, as its file has them (a copy), validated and checked to set every key."""
    schema = load_schema()
    values = copy.deepcopy(_load_yaml(preset_file(preset)))
    where = f"preset {preset} (icl_kmeans/pipeline/config/presets/{preset}.yaml)"
    validate(values, schema, where)
    missing = sorted(set(schema["properties"]) - set(values) - {"preset"})
    if missing:
        raise ConfigError(f"invalid configuration ({where}): it does not set {missing}; a preset sets every key")
    return values


def resolve(config: dict) -> dict:
    """Settings = the preset's values < explicit keys of config (config.yaml, --config). config's values
    are typed in place first (coerce_cli)."""
    schema = load_schema()
    coerce_cli(config, schema)
    validate(config, schema, "config.yaml and --config")
    preset = config.get("preset", DEFAULT_PRESET)
    merged = {**load_preset(preset), **config, "preset": preset}
    settings = {k: merged[k] for k in schema["properties"]}  # in the schema's order, as recorded before
    settings["overrides"] = sorted(k for k in config if k != "preset")
    if settings.get("subset") and "seeds" not in config:  # a subset trains the preset's first seeds
        settings["seeds"] = settings["seeds"][:SUBSET_SEEDS]
    return settings
