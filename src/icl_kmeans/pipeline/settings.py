"""Resolve the pipeline configuration: preset values, overridden by config.yaml and --config,
validated against workflow/schemas/config.schema.yaml with errors that name key, value and what
is allowed. No torch import."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import yaml


SUBSET_SEEDS = 3  # seeds of a subset run unless `seeds` is given (the paper's first three)


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


def load_schema(workflow_dir: Path) -> dict:
    return yaml.safe_load((Path(workflow_dir) / "schemas" / "config.schema.yaml").read_text())


def resolve(config: dict, workflow_dir: str | Path) -> dict:
    """Settings = schema defaults < preset file < explicit keys of config (config.yaml, --config).
    config's values are typed in place first (coerce_cli)."""
    workflow_dir = Path(workflow_dir)
    schema = load_schema(workflow_dir)
    coerce_cli(config, schema)
    validate(config, schema, "config.yaml and --config")
    preset = config.get("preset", schema["properties"]["preset"]["default"])
    preset_values = yaml.safe_load((workflow_dir / "presets" / f"{preset}.yaml").read_text())
    validate(preset_values, schema, f"workflow/presets/{preset}.yaml")
    settings = {k: v["default"] for k, v in schema["properties"].items()}
    settings.update(preset_values)
    settings.update(config)
    settings["preset"] = preset
    settings["overrides"] = sorted(k for k in config if k != "preset")
    if settings.get("subset") and "seeds" not in config:  # a subset trains the preset's first seeds
        settings["seeds"] = settings["seeds"][:SUBSET_SEEDS]
    return settings
