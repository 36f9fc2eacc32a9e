"""Hydra-style `key=value` overrides without Hydra: parse, type-check, and refuse unknown keys.

Errors are ConfigError with a message naming the key and the fix; the CLI turns them into exit 2
before Ray is touched.
"""

from __future__ import annotations

import ast
import json
import os

from .sokoban_main import ADDABLE_PREFIX, CONFIG_NAME, SETTINGS, Setting


class ConfigError(ValueError):
    pass


def parse_scalar(text: str):
    """YAML-like scalars: null, true/false, ints, floats, [a, b] lists; anything else is a string."""
    low = text.strip().lower()
    if low in ("null", "none", "~"):
        return None
    if low == "true":
        return True
    if low == "false":
        return False
    stripped = text.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        try:
            value = ast.literal_eval(stripped)
            if isinstance(value, list):
                return value
        except (ValueError, SyntaxError):
            pass
        inner = stripped[1:-1].strip()  # Hydra also accepts [console,file] unquoted
        return [item.strip().strip("'\"") for item in inner.split(",")] if inner else []
    for cast in (int, float):
        try:
            return cast(stripped)
        except ValueError:
            pass
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
        return stripped[1:-1]
    return stripped


def coerce(key: str, setting: Setting, raw):
    """Check `raw` against the setting; returns the typed value or raises ConfigError."""
    if raw is None:
        if setting.nullable:
            return None
        raise ConfigError(f"bad value for '{key}': null is not allowed (expected {describe(setting)})")
    kind = setting.kind
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        raise ConfigError(f"bad value for '{key}': {raw!r} is not a bool (use true or false)")
    if kind == "int":
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ConfigError(f"bad value for '{key}': {raw!r} is not an integer")
        value = raw
    elif kind == "float":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ConfigError(f"bad value for '{key}': {raw!r} is not a number")
        value = float(raw)
    elif kind == "str":
        value = raw if isinstance(raw, str) else json.dumps(raw) if isinstance(raw, list) else str(raw)
    elif kind == "enum":
        if raw not in setting.choices:
            raise ConfigError(f"bad value for '{key}': {raw!r}; allowed values: {', '.join(setting.choices)}")
        return raw
    elif kind == "list_of_enum":
        items = raw if isinstance(raw, list) else [raw]
        bad = [item for item in items if item not in setting.choices]
        if bad:
            raise ConfigError(
                f"bad value for '{key}': {bad} not supported; allowed values: {', '.join(setting.choices)} "
                f"(e.g. {key}=\"{list(setting.choices[:2])}\")"
            )
        return tuple(items)
    elif kind == "list_of_int":
        items = raw if isinstance(raw, list) else [raw]
        for item in items:
            if isinstance(item, bool) or not isinstance(item, int):
                raise ConfigError(f"bad value for '{key}': {item!r} is not an integer (e.g. {key}=[128])")
            if setting.minimum is not None and item < setting.minimum:
                raise ConfigError(f"bad value for '{key}': {item!r} is below the minimum {setting.minimum:g}")
        return tuple(items)
    else:
        raise AssertionError(kind)
    if setting.minimum is not None and value < setting.minimum:
        raise ConfigError(f"bad value for '{key}': {value!r} is below the minimum {setting.minimum:g}")
    return value


def describe(setting: Setting) -> str:
    if setting.choices:
        return "one of " + ", ".join(setting.choices)
    return setting.kind + (" or null" if setting.nullable else "")


def _unknown_key_message(key: str) -> str:
    group = key.rsplit(".", 1)[0] if "." in key else ""
    siblings = sorted(k for k in SETTINGS if group and k.startswith(group + "."))
    hint = f" (new keys under ray_kwargs need a '+' prefix: +{key}=...)" if key.startswith(ADDABLE_PREFIX) else ""
    if siblings:
        return f"unknown override key '{key}'; known keys under {group}: {', '.join(s.rsplit('.', 1)[1] for s in siblings)}{hint}"
    groups = sorted({k.split(".")[0] for k in SETTINGS})
    return f"unknown override key '{key}'; known top-level groups: {', '.join(groups)}{hint}"


def build_config(overrides: list[str], cwd: str | None = None) -> dict:
    """Flat dict of every key (defaults + overrides), plus 'ray_kwargs' extras, with derived values."""
    flat = {key: setting.default for key, setting in SETTINGS.items()}
    extras: dict[str, object] = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not key=value")
        key, _, text = item.partition("=")
        add = force = False
        if key.startswith("++"):
            key, force = key[2:], True
        elif key.startswith("+"):
            key, add = key[1:], True
        if not key:
            raise ConfigError(f"override {item!r} has an empty key")
        value = parse_scalar(text)
        if key in SETTINGS:
            if add:
                raise ConfigError(f"cannot add '+{key}': the key already exists; drop the '+' ({key}={text})")
            flat[key] = coerce(key, SETTINGS[key], value)
        elif (add or force) and key.startswith(ADDABLE_PREFIX):
            extras[key] = value
        elif add or force:
            raise ConfigError(f"cannot add '+{key}': only keys under {ADDABLE_PREFIX.rstrip('.')} may be added with '+'")
        else:
            raise ConfigError(_unknown_key_message(key))
    return _derive(flat, extras, cwd or os.getcwd())


def _derive(flat: dict, extras: dict, cwd: str) -> dict:
    if flat["trainer.default_local_dir"] is None:
        flat["trainer.default_local_dir"] = os.path.join("checkpoints", flat["trainer.project_name"], flat["trainer.experiment_name"])
    flat["trainer.default_local_dir"] = os.path.abspath(os.path.join(cwd, flat["trainer.default_local_dir"]))
    if flat["trainer.resume_mode"] == "resume_path":
        path = flat["trainer.resume_from_path"]
        if not path or "global_step_" not in str(path):
            raise ConfigError(
                "trainer.resume_mode=resume_path needs trainer.resume_from_path=<dir>/global_step_N "
                f"(the path must contain 'global_step_'; got {path!r})"
            )
        flat["trainer.resume_from_path"] = os.path.abspath(os.path.join(cwd, path))
    _check_val_groups(flat)
    _check_cuda_devices(flat)
    if flat["algorithm.epsilon_end"] > flat["algorithm.epsilon_start"]:
        raise ConfigError("algorithm.epsilon_end must be <= algorithm.epsilon_start")
    if flat["env.num_boxes"] > 3:
        raise ConfigError("env.num_boxes: the toy supports 1..3 boxes")
    flat["config_name"] = CONFIG_NAME
    flat["ray_kwargs"] = _nest({k[len(ADDABLE_PREFIX):]: v for k, v in extras.items()})
    if flat["ray_kwargs.ray_init.num_cpus"] is not None:
        flat["ray_kwargs"].setdefault("ray_init", {})["num_cpus"] = flat["ray_kwargs.ray_init.num_cpus"]
    return flat


def _check_cuda_devices(flat: dict) -> None:
    """RAGEN's train.py asserts that system.CUDA_VISIBLE_DEVICES lists n_gpus_per_node devices."""
    devices = str(flat["system.CUDA_VISIBLE_DEVICES"]).split(",")
    gpus = flat["trainer.n_gpus_per_node"]
    if len(devices) != gpus:
        raise ConfigError(
            f"system.CUDA_VISIBLE_DEVICES ({flat['system.CUDA_VISIBLE_DEVICES']}) must have the same number of GPUs "
            f"as n_gpus_per_node ({gpus}); pass system.CUDA_VISIBLE_DEVICES=\"'{','.join(map(str, range(gpus)))}'\""
        )


def _check_val_groups(flat: dict) -> None:
    """RAGEN asserts one n_groups entry per tag and that they add up to es_manager.val.env_groups."""
    groups, tags = flat["es_manager.val.env_groups"], flat["es_manager.val.env_configs.tags"]
    n_groups = flat["es_manager.val.env_configs.n_groups"]
    if n_groups is None:
        flat["es_manager.val.env_configs.n_groups"] = (groups,)
        return
    if len(n_groups) != len(tags):
        raise ConfigError(
            f"es_manager.val.env_configs.n_groups={list(n_groups)} has {len(n_groups)} entries for "
            f"{len(tags)} tag(s) in es_manager.val.env_configs.tags={list(tags)}; give one per tag"
        )
    if sum(n_groups) != groups:
        raise ConfigError(
            f"es_manager.val.env_configs.n_groups={list(n_groups)} adds up to {sum(n_groups)}, but "
            f"es_manager.val.env_groups={groups}; make them equal"
        )


def _nest(dotted: dict) -> dict:
    out: dict = {}
    for key, value in dotted.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"'+ray_kwargs.{key}' conflicts with another override of a parent key")
        node[parts[-1]] = value
    return out


def parse_command_line(argv: list[str], cwd: str | None = None) -> dict:
    """`--config-name _2_sokoban` (or `--config-name=...`, optional) followed by overrides."""
    overrides, config_name, i = [], CONFIG_NAME, 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--config-name", "-cn"):
            if i + 1 >= len(argv):
                raise ConfigError("--config-name needs a value (only _2_sokoban is available)")
            config_name, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--config-name="):
            config_name, i = arg.split("=", 1)[1], i + 1
            continue
        if arg.startswith("--config-dir") or arg.startswith("--config-path"):
            raise ConfigError(f"{arg.split('=')[0]} is not supported by ragen_toy (configs are built in)")
        if arg.startswith("-"):
            raise ConfigError(f"unknown option {arg!r}; usage: --config-name _2_sokoban [key=value ...]")
        overrides.append(arg)
        i += 1
    if config_name != CONFIG_NAME:
        raise ConfigError(f"unknown --config-name {config_name!r}; the only config is {CONFIG_NAME}")
    return build_config(overrides, cwd)
