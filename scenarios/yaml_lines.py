"""YAML read with line numbers: every mapping remembers where it and each of its keys stood (for error messages)."""

from __future__ import annotations

from typing import Any

import yaml


class LineLoader(yaml.SafeLoader):
    """A YAML loader that remembers the line of every mapping key."""


def _construct_mapping(loader: LineLoader, node: yaml.MappingNode) -> dict[str, Any]:
    mapping: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        mapping[key] = loader.construct_object(value_node, deep=True)
        lines[str(key)] = key_node.start_mark.line + 1
    mapping["__lines__"] = lines
    mapping["__line__"] = node.start_mark.line + 1
    return mapping


LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def strip_lines(data: Any) -> Any:
    """The data without the line markers the loader added."""
    if isinstance(data, dict):
        return {k: strip_lines(v) for k, v in data.items() if k not in {"__lines__", "__line__"}}
    if isinstance(data, list):
        return [strip_lines(v) for v in data]
    return data


def line_of(data: Any, loc: tuple[int | str, ...]) -> int | None:
    """The line of the field at ``loc`` (the nearest enclosing mapping's when the field itself has none)."""
    line = data.get("__line__") if isinstance(data, dict) else None
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str):
            line = node.get("__lines__", {}).get(part, line)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
            line = node.get("__line__", line) if isinstance(node, dict) else line
        else:
            break
    return line
