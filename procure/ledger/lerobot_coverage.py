"""How much of a LeRobot dataset's video is on disk, against what ``info.json`` declares.

For v2.x, the files of each episode and camera (``video_path``, ``total_episodes``,
``total_videos``); for v3.0, whose files hold many episodes each, the frames of each camera
(``total_frames``). Each function returns the note to print, or None when all is there.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from pathlib import Path
from typing import Any

from ..pipeline.streams import Stream


def _pattern(template: object) -> re.Pattern[str] | None:
    """A regular expression matching the paths of ``info.json``'s ``video_path`` template, with
    a group per field (``video_key``, ``episode_index``, …); None without a usable template."""
    if not isinstance(template, str) or not template:
        return None
    parts: list[str] = []
    seen: set[str] = set()
    try:
        for literal, field, spec, _conversion in string.Formatter().parse(template):
            parts.append(re.escape(literal))
            if field is None:
                continue
            if not field.isidentifier():
                return None
            if field in seen:  # the same field twice: the same text twice
                parts.append(f"(?P={field})")
            else:
                parts.append(f"(?P<{field}>[0-9]+)" if (spec or "").endswith("d") else f"(?P<{field}>.+?)")
            seen.add(field)
        return re.compile("".join(parts))
    except (ValueError, re.error):
        return None


def v2_coverage(root: Path, info: dict[str, Any], cameras: list[str], files: list[Path]) -> str | None:
    """A note when a v2.x dataset's video files on disk are fewer than it declares."""
    episodes = info.get("total_episodes")
    declared = info.get("total_videos")
    if declared is None and episodes is not None:
        declared = episodes * len(cameras)
    if declared is None or len(files) >= declared:
        return None
    pattern = _pattern(info.get("video_path"))
    held: dict[int, set[str]] = {}
    if pattern is not None and episodes is not None:
        for p in files:
            match = pattern.fullmatch(p.relative_to(root).as_posix())
            if match and "episode_index" in match.groupdict() and match.groupdict().get("video_key") in cameras:
                held.setdefault(int(match.group("episode_index")), set()).add(str(match.group("video_key")))
    if held:
        complete = sum(1 for keys in held.values() if len(keys) == len(cameras))
        return (
            f"{complete:,} of {episodes:,} episodes have every camera's video on disk "
            f"({len(files):,} of {declared:,} files)"
        )
    return f"{len(files):,} of {declared:,} video files on disk"


def _camera(root: Path, path: Path, pattern: re.Pattern[str] | None, cameras: list[str]) -> str | None:
    """The video feature a file belongs to: from the ``video_path`` template, else the
    folder named after the feature."""
    rel = path.relative_to(root)
    if pattern is not None:
        match = pattern.fullmatch(rel.as_posix())
        if match and match.groupdict().get("video_key") in cameras:
            return str(match.group("video_key"))
    return next((part for part in rel.parts if part in cameras), None)


def v3_coverage(root: Path, info: dict[str, Any], cameras: list[str], probed: list[Stream]) -> str | None:
    """A note when a v3.0 dataset's video files on disk hold fewer frames than it declares."""
    pattern = _pattern(info.get("video_path"))
    held: Counter[str] = Counter()
    for s in probed:
        held[_camera(root, Path(s.file), pattern, cameras) or ""] += s.frames
    total = int(info["total_frames"])
    on_disk = sum(min(held[c], total) for c in cameras)
    if on_disk >= total * len(cameras):
        return None
    return (
        f"the videos on disk hold {on_disk:,} of the {total * len(cameras):,} frames info.json declares "
        f"({len(cameras)} cameras × {total:,})"
    )
