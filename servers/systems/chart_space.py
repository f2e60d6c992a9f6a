"""Chart spaces: `<data>/spaces/personal` and `<data>/spaces/team`, the folders rendered charts are saved in."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, get_args

__all__ = ["SPACES", "Space", "list_charts", "save_chart"]

Space = Literal["personal", "team"]
SPACES: tuple[Space, ...] = get_args(Space)
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]")


def save_chart(data_folder: Path, space: Space, name: str, png: bytes) -> Path:
    """Write `png` as `<data>/spaces/<space>/<name>.png` (replacing an older copy) and return its path."""
    if space not in SPACES:
        raise ValueError(f"space must be one of {', '.join(SPACES)}; got {space!r}")
    folder = data_folder / "spaces" / space
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_UNSAFE_NAME_CHARS.sub('_', name)}.png"
    # Readers never see a half-written chart: write aside, then rename.
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_bytes(png)
    os.replace(partial, path)
    return path


def list_charts(data_folder: Path, space: Space) -> list[Path]:
    return sorted((data_folder / "spaces" / space).glob("*.png"))
