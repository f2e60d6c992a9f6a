"""Chart spaces: `<data>/spaces/personal` and `<data>/spaces/team`, the folders rendered charts are saved in."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal, get_args

__all__ = ["SPACES", "Space", "list_charts", "recorded_save", "remember_save", "save_chart"]

Space = Literal["personal", "team"]
SPACES: tuple[Space, ...] = get_args(Space)
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]")
_SAVE_KEY = re.compile(r"[0-9a-f]{32}")


def save_chart(data_folder: Path, space: Space, name: str, png: bytes) -> Path:
    """Write `png` as `<data>/spaces/<space>/<name>.png` (replacing an older copy) and return its path."""
    if space not in SPACES:
        raise ValueError(f"space must be one of {', '.join(SPACES)}; got {space!r}")
    folder = data_folder / "spaces" / space
    folder.mkdir(parents=True, exist_ok=True)
    # The user chose a space; a link planted in its place must not send the chart to another one.
    if folder.is_symlink() or folder.resolve() != (data_folder / "spaces").resolve() / space:
        raise ValueError(f"the {space} space at {folder} is a link to {folder.resolve()}; refusing to save there")
    path = folder / f"{_UNSAFE_NAME_CHARS.sub('_', name)}.png"
    if path.is_symlink():
        raise ValueError(f"{path.name} in the {space} space is a link; refusing to write through it")
    _write_whole(path, png)
    return path


def list_charts(data_folder: Path, space: Space) -> list[Path]:
    return sorted((data_folder / "spaces" / space).glob("*.png"))


def remember_save(data_folder: Path, key: str, record: dict[str, object]) -> None:
    """Keep what the save under idempotency `key` produced, so a second use of the key writes nothing."""
    path = _save_record(data_folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_whole(path, json.dumps(record).encode())


def recorded_save(data_folder: Path, key: str) -> dict[str, object] | None:
    """What the save under `key` produced, or None when nothing was saved under it yet."""
    path = _save_record(data_folder, key)
    return json.loads(path.read_text()) if path.exists() else None


def _save_record(data_folder: Path, key: str) -> Path:
    if not _SAVE_KEY.fullmatch(key):
        raise ValueError(f"an idempotency key is 32 lower-case hex digits; got {key!r}")
    return data_folder / "spaces" / ".saves" / f"{key}.json"


def _write_whole(path: Path, content: bytes) -> None:
    # Readers never see a half-written file: write aside, then rename.
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_bytes(content)
    os.replace(partial, path)
