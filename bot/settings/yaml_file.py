"""Reading the config file: UTF-8 YAML, bounded in depth, every failure a ConfigError."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import yaml

from bot.settings.errors import ConfigError

MAX_CONFIG_DEPTH: Final = 32  # nesting levels a config may have (the real one needs 5)


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _ConfigLoader(yaml.SafeLoader):
    """SafeLoader that stops at MAX_CONFIG_DEPTH: PyYAML composes nodes recursively, so YAML
    nested 20,000 deep would end in a RecursionError (and scanning it takes minutes)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_CONFIG_DEPTH:
                raise _TooDeep(self.peek_event().start_mark.line + 1)  # type: ignore[no-untyped-call]
            return super().compose_node(parent, index)  # type: ignore[arg-type]
        finally:
            self._depth -= 1


def read_yaml(path: Path) -> object:
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
    loader = _ConfigLoader(text)
    try:
        return loader.get_single_data()
    except _TooDeep as exc:
        raise ConfigError(
            f"{path}: nested more than {MAX_CONFIG_DEPTH} levels deep (line {exc.line})"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
