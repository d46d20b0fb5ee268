"""The device a general table's row ran on (for `importers.general_table`), from its labels: a counted device
('2 x NVIDIA RTX 6000 Ada', a heading's '2x RTX 3060 12GB') is the GPU count and the device; a system is its GPUs
('DGX-GB300'); 'Apple M4, 16GB RAM, Metal' is the Apple M4. Where the row says it ran (a placement column: 'cpu',
'cuda', 'nnapi'; a setup named 'CPU'): a row on the CPU beside a GPU card the file names ran beside it, not on it, so
its device is not stated; a phone's or a board's row on its own CPU, GPU or NPU keeps it as the device, the placement
in the tag, so that a row on its CPU is never a repeat of one on its NPU. A backend in the device column ('cuda')
names no device: it is kept in the tag.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, clean_str
from importers.device_text import counted_device, device_from_path, device_named, gpu_of_system, kind_of_device
from importers.table_fields import Field, plain
from importers.table_labels import TPU
from importers.table_rows import is_backend

COUNTED_DEVICE = Field("counted_device", None, "label")  # '2 x NVIDIA A100': the GPU count and the device
PLACEMENT = Field("placement", None, "label")  # where a row's code ran ('cuda', 'cpu') beside a named device


def counted_row(labels: dict[str, str], config: dict[str, Any]) -> None:
    """A row's counted device read as its GPU count and its device (in place)."""
    if (counted := counted_device(labels.get(COUNTED_DEVICE.key, ""))) is not None:
        config.setdefault("gpu_count", counted[0])  # '2 x NVIDIA RTX 6000 Ada Generation (49140 MiB)'
        labels.setdefault("device", counted[1])
    elif (counted := counted_device(labels.get("device", ""))) is not None:  # a heading's '2x RTX 3060 12GB'
        config.setdefault("gpu_count", counted[0])
        labels["device"] = counted[1]


def _tagged(config: dict[str, Any], part: str) -> None:
    config["tag"] = ", ".join(p for p in (config.get("tag"), part) if p)[:200]


_UNKNOWN = re.compile(r"(?i)(?:unknown|not available|unavailable|unspecified)(?:[ _-]?(?:gpu|device|cpu|accelerator|"
                      r"hardware))?")  # 'n/a', 'none': missing marks, never read as a label at all


def row_device(conv: Conversion, labels: dict[str, str], config: dict[str, Any]) -> tuple[str | None, bool]:
    """(the device the row states, or None; whether the row says it ran elsewhere than a device a file name gives)."""
    stated = clean_str(labels.get("device"))
    if not stated and (tpu := clean_str(labels.get(TPU.key))):  # 'v6e' under 'tpu_type': the TPU v6e
        stated = tpu if "tpu" in tpu.lower() else f"TPU {tpu}"
    if stated and _UNKNOWN.fullmatch(stated.strip()):  # a writer's fallback ('Unknown GPU'): no device stated
        stated = None
    stated = gpu_of_system(stated) or stated if stated else stated  # 'DGX-GB300': its GPUs, counted apart
    if stated and "," in stated and device_from_path((head := stated.split(",")[0].strip(),)):
        stated = head  # 'Apple M4, 16GB RAM, Metal': the device, then its memory and its API
    # a row the file says ran on the CPU (beside a GPU it names, or in its setup's words): no file name's device
    elsewhere = bool(re.search(r"\bcpu\b", plain(str(config.get("tag") or ""))))
    if is_backend(str(config.get("engine") or "-")):  # 'backend': CPU names where it ran, no engine
        labels.setdefault(PLACEMENT.key, str(config.pop("engine")))
    placement = plain(labels.get(PLACEMENT.key, "")).strip()
    placement = "cpu" if placement == "false" else placement or next(  # 'gpu_used': False; a 'CPU' setup
        (p for p in plain(config.get("tag") or "").split(", ") if p.strip() in ("cpu", "mps")), "")
    card = bool(stated and device_named(stated) and kind_of_device(stated) == "gpu"
                and not stated.lower().startswith("apple"))  # a GPU card: a row on the CPU ran beside it
    if card and stated and placement and (placement.startswith("cpu") or placement == "mps"):
        conv.warn(f"the rows run on {placement[:20]!r} did not run on the {stated[:40]} the file names: their "
                  "device is not stated")
        stated, elsewhere = None, True
    elif not card and stated and labels.get(PLACEMENT.key) and kind_of_device(stated) != "cpu":
        _tagged(config, f"on {placement[:20]}")  # a phone's own CPU, GPU or NPU (SM-S947B)
    if stated and is_backend(stated):  # kept in the tag: a row on the NPU is never a repeat of one on the GPU
        conv.warn(f"{stated[:40]!r} in the device column is a backend, not a device: the device is not "
                  "stated; the backend is kept in the tag")
        _tagged(config, f"on {stated[:40]}")
        stated = None
    return stated, elsewhere
