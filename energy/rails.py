"""Jetson power rails by board: which INA3221 rails make the module's input power.

One table for the runner's sensor (`runner.sensors.jetson`) and every log parser
(`importers.powerlogs`: tegrastats, jtop, wide telemetry CSVs), so a board's energy is the same
figure wherever it is read.

The rule (NVIDIA's Jetson Linux Developer Guide, "Software-based power consumption modeling"
for each board, and the AGX Xavier Product Design Guide DG-09840-001 section 5.6.2):

- a board with an input rail (Nano `POM_5V_IN`; TX1, TX2, TX2 NX, Xavier NX, Orin NX and Orin
  Nano `VDD_IN`) measures the module on that rail alone. Its other rails are fed from it:
  adding them double-counts (jetson-stats #51);
- a board without one (AGX Xavier, AGX Orin) measures the module as the sum of the rails
  whose monitors sit on the regulator inputs, and never a rail fed from one of those (AGX
  Orin's `VDDQ_VDD2_1V8AO` is fed from `VIN_SYS_5V0`). One of those rails alone, e.g. AGX
  Orin's `VIN_SYS_5V0` ("System 5V"), is a part, never the module (jetson-stats #344);
- AGX Thor's carrier-board INA238 `VIN` is the input of module and carrier together: the
  whole developer kit, boundary `system`.

`module_power(names, device)` applies the rule to the rails a log or sysfs offers. Rail names
are matched as NVIDIA prints them; hand-rolled loggers' names ("GPU+SOC", "I/O (5V0)",
"power_in_mw", "System_Power_Inst") are matched through each board's aliases, and the board
is identified from the rails themselves or, where they do not tell, from the device name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

INPUT_RAILS = ("VDD_IN", "POM_5V_IN")  # the rails that alone are a module's input, on the boards that have one
FLAG_SUM_OF_RAILS = "energy_sum_of_rails"  # a run whose module energy is a sum of rails (no input rail)


@dataclass(frozen=True)
class Board:
    """One Jetson board family's power monitor rails and how they make the module's power."""

    name: str
    device_pattern: str  # a regular expression matching the board in a device name
    rails: tuple[str, ...]  # the rail labels its monitors print (tegrastats, sysfs)
    input_rail: str | None  # the one rail that is the module's input, when the board has it
    summed: tuple[str, ...] = ()  # without an input rail: the rails that together are the module's input
    sub_rails: tuple[str, ...] = ()  # fed from the input (or from a summed rail): never added
    aliases: dict[str, str] = field(default_factory=dict)  # other names only this board's rails have -> rail
    # names any board's logger may use ("GPU", "System"): read as this board's rails only when the
    # device name says which board it is, never to identify the board
    generic_aliases: dict[str, str] = field(default_factory=dict)
    boundary: str = "jetson_module"
    source: str = ""

    def canonical(self, key: str, named: bool = False) -> str:
        """This board's name for a rail key (its own label, or the label an alias stands for); generic
        aliases count only when the board is `named` by the device."""
        if key in self.rails:
            return key
        if key in self.aliases:
            return self.aliases[key]
        return self.generic_aliases.get(key, key) if named else key

    def identifies(self, keys: set[str]) -> bool:
        """True when every one of these rail keys is one of this board's rails and its measuring rails are there."""
        rails = {self.canonical(k) for k in keys}
        return bool(keys) and rails <= set(self.rails) and (
            (self.input_rail in rails) if self.input_rail else set(self.summed) <= rails
        )


_DOC_NANO = "Jetson Linux Developer Guide r32, power_management_nano (POM_5V_IN: 'total power consumption')"
_DOC_TX = "Jetson Linux Developer Guide r28/r32, power_management_tx2 (VDD_IN: module input)"
_DOC_XNX = "Jetson Linux Developer Guide r35, Jetson Xavier NX power monitor (VDD_IN: total module power)"
_DOC_AGXX = ("Jetson AGX Xavier Product Design Guide DG-09840-001 5.6.2: the six monitors sit on the regulator "
             "inputs fed from SYS_VIN_HV / SYS_VIN_MV; no input rail")
_DOC_ORIN = "Jetson Linux Developer Guide r35/r36, Orin NX / Orin Nano power monitor (VDD_IN: module input)"
_DOC_AGXO = ("Jetson Linux Developer Guide r35/r36, Jetson AGX Orin power monitor: VDD_GPU_SOC, VDD_CPU_CV, "
             "VIN_SYS_5V0 (0x40) and VDDQ_VDD2_1V8AO (0x41, fed from VIN_SYS_5V0); no input rail")
_DOC_THOR = "Jetson Linux Developer Guide r38, Jetson Thor: carrier INA238 VIN = input of module and carrier"

# The order matters only for identification by device name: more specific names first.
BOARDS: tuple[Board, ...] = (
    Board("Jetson AGX Orin", r"agx[ _-]?orin|orin[ _-]?agx", ("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0",
          "VDDQ_VDD2_1V8AO"), None, summed=("VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"),
          sub_rails=("VDDQ_VDD2_1V8AO",),
          aliases={"GPU_SOC": "VDD_GPU_SOC", "CPU_CV": "VDD_CPU_CV", "SYS_5V0": "VIN_SYS_5V0", "5V0": "VIN_SYS_5V0",
                   "I_O_5V0": "VIN_SYS_5V0", "VDDQ": "VDDQ_VDD2_1V8AO", "I_O_VDDQ": "VDDQ_VDD2_1V8AO",
                   "VDDQ_VDD2": "VDDQ_VDD2_1V8AO"},
          generic_aliases={"GPU": "VDD_GPU_SOC", "CPU": "VDD_CPU_CV", "SYSTEM": "VIN_SYS_5V0", "SYS": "VIN_SYS_5V0"},
          source=_DOC_AGXO),
    Board("Jetson AGX Xavier", r"agx[ _-]?xavier|xavier[ _-]?agx|jetson[ _-]?xavier(?![ _-]?nx)",
          ("GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"), None,
          summed=("GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"),
          aliases={"VDD_GPU": "GPU", "VDD_CPU": "CPU", "VDD_SOC": "SOC", "VDD_CV": "CV", "VDD_DDRQ": "VDDRQ",
                   "DDRQ": "VDDRQ", "SYS_5V": "SYS5V", "VDD_SYS5V": "SYS5V"},
          source=_DOC_AGXX),
    Board("Jetson AGX Thor", r"thor", ("VIN", "VDD_GPU", "VDD_CPU_SOC_MSS", "VIN_SYS_5V0"), "VIN",
          sub_rails=("VDD_GPU", "VDD_CPU_SOC_MSS", "VIN_SYS_5V0"), boundary="system", source=_DOC_THOR),
    Board("Jetson Orin NX / Orin Nano", r"orin[ _-]?(nx|nano)", ("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"), "VDD_IN",
          sub_rails=("VDD_CPU_GPU_CV", "VDD_SOC"),
          aliases={"IN": "VDD_IN", "CPU_GPU_CV": "VDD_CPU_GPU_CV", "SOC": "VDD_SOC"}, source=_DOC_ORIN),
    Board("Jetson Xavier NX", r"xavier[ _-]?nx", ("VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC", "VDD_CPU_GPU"),
          "VDD_IN", sub_rails=("VDD_CPU_GPU_CV", "VDD_SOC", "VDD_CPU_GPU"),
          aliases={"IN": "VDD_IN", "5V_IN": "VDD_IN", "CPU_GPU_CV": "VDD_CPU_GPU_CV", "SOC": "VDD_SOC"},
          source=_DOC_XNX),
    Board("Jetson TX2 NX", r"tx2[ _-]?nx", ("VDD_IN", "VDD_CPU_GPU", "VDD_SOC"), "VDD_IN",
          sub_rails=("VDD_CPU_GPU", "VDD_SOC"), aliases={"IN": "VDD_IN"}, source=_DOC_TX),
    Board("Jetson TX2", r"tx2", ("VDD_IN", "VDD_SYS_GPU", "VDD_SYS_SOC", "VDD_SYS_CPU", "VDD_SYS_DDR",
          "VDD_4V0_WIFI", "VDD_GPU", "VDD_SOC", "VDD_CPU", "VDD_DDR", "VDD_WIFI"), "VDD_IN",
          sub_rails=("VDD_SYS_GPU", "VDD_SYS_SOC", "VDD_SYS_CPU", "VDD_SYS_DDR", "VDD_4V0_WIFI", "VDD_GPU", "VDD_SOC",
                     "VDD_CPU", "VDD_DDR", "VDD_WIFI"),
          aliases={"IN": "VDD_IN"}, source=_DOC_TX),
    Board("Jetson TX1", r"tx1", ("VDD_IN", "VDD_GPU", "VDD_CPU"), "VDD_IN", sub_rails=("VDD_GPU", "VDD_CPU"),
          aliases={"IN": "VDD_IN"}, source=_DOC_TX),
    Board("Jetson Nano", r"nano", ("POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"),
          "POM_5V_IN", sub_rails=("POM_5V_GPU", "POM_5V_CPU"),
          aliases={"5V_IN": "POM_5V_IN", "IN": "POM_5V_IN", "5V_GPU": "POM_5V_GPU", "5V_CPU": "POM_5V_CPU",
                   "VDD_IN": "POM_5V_IN"},
          source=_DOC_NANO),
)


def normalise(name: str) -> str:
    """A rail or column name in one spelling: upper case, runs of other characters as '_'."""
    return re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")


def board_for_device(device: str | None) -> Board | None:
    """The board a device name names ('Jetson AGX Orin 64GB' -> AGX Orin), or None."""
    if not device:
        return None
    low = device.lower()
    if "orin" in low and re.search(r"orin[ _-]?nano|orin[ _-]?nx", low):
        return next(b for b in BOARDS if b.name.startswith("Jetson Orin NX"))
    for board in BOARDS:
        if re.search(board.device_pattern, low):
            return board
    return None


def boards_for_rails(names: Iterable[str]) -> list[Board]:
    """The boards whose monitors print exactly these rail labels (Orin NX and Xavier NX print the same)."""
    found = {rail_key(n) for n in names}
    return [board for board in BOARDS if board.identifies(found)]


_DROP = {"POWER", "PWR", "INST", "INSTANT", "CUR", "CURRENT", "MW", "W", "CONSUMPTION", "WATTS", "MILLIWATTS"}


def rail_key(column: str) -> str:
    """A log column's rail name: 'Current VDD_IN Power Consumption (mW)' -> VDD_IN, 'GPU+SOC' -> GPU_SOC,
    'POM_5V_IN_CUR' -> POM_5V_IN, 'Power VDD_CPU_CV' -> VDD_CPU_CV, 'power_in_mw' -> IN."""
    return "_".join(t for t in normalise(column).split("_") if t and t not in _DROP)


@dataclass(frozen=True)
class ModulePower:
    """Which of a log's rails make the module's power, and how that was decided."""

    rails: tuple[str, ...]  # the log's own names of the rails to add up (one when the board has an input rail)
    board: Board | None
    summed: bool  # True when the module power is a sum of rails (a board without an input rail)
    boundary: str = "jetson_module"
    note: str = ""
    missing_reason: str | None = None  # when no module power can be read from these rails

    @property
    def ok(self) -> bool:
        return bool(self.rails)


def module_power(names: Iterable[str], device: str | None = None) -> ModulePower:
    """The rails among `names` (as the log spells them) whose sum is the module's power.

    The board is identified from the rails; where they do not tell (hand-rolled column names),
    from `device`. Without an input rail on a board that has one, or with rails that do not match
    a known board, nothing is summed: the reason says what is missing.
    """
    names = [n for n in names if n]
    by_key: dict[str, str] = {}
    for n in names:
        by_key.setdefault(rail_key(n), n)
    candidates = boards_for_rails(by_key)
    named = board_for_device(device)
    board = named if named is not None and (named in candidates or not candidates) else (
        candidates[0] if candidates else None)
    if board is None:
        for rail in INPUT_RAILS:  # an input rail is an input rail on any board that prints it
            if rail in by_key:
                return ModulePower((by_key[rail],), None, False, note=f"module input rail {rail}")
        return ModulePower((), None, False, missing_reason=(
            f"no module input rail ({', '.join(INPUT_RAILS)}) among the rails {', '.join(names) or '(none)'}, and the "
            "board cannot be told from them: name the Jetson module (e.g. --device 'Jetson AGX Orin') to apply its "
            "rail rule"))
    label = board.name if len(candidates) < 2 or board is named else " / ".join(c.name for c in candidates)
    canon: dict[str, str] = {}
    for key, original in by_key.items():
        canon.setdefault(board.canonical(key, named=board is named), original)
    if board.input_rail:
        if board.input_rail in canon:
            rail = canon[board.input_rail]
            note = f"{label}: module input rail {board.input_rail}" + (
                f" (column '{rail}')" if rail != board.input_rail else "")
            if board.boundary != "jetson_module":
                note += "; it includes the carrier board"
            return ModulePower((rail,), board, False, board.boundary, note)
        return ModulePower((), board, False, board.boundary, missing_reason=(
            f"{label} measures the module on its input rail {board.input_rail}, which the log does not have "
            f"(rails: {', '.join(names)}); the other rails are parts of it and are not added up"))
    missing = [r for r in board.summed if r not in canon]
    if missing:
        return ModulePower((), board, False, board.boundary, missing_reason=(
            f"{label} has no input rail: its module power is {' + '.join(board.summed)}, and the log lacks "
            f"{', '.join(missing)} (rails: {', '.join(names)}); one rail alone is a part, not the module"))
    rails = tuple(canon[r] for r in board.summed)
    left_out = [canon[r] for r in board.sub_rails if r in canon]
    note = (f"{label} has no input rail: module power = sum of {' + '.join(rails)}"
            + (f"; {', '.join(left_out)} is fed from those rails and is not added" if left_out else ""))
    return ModulePower(rails, board, True, board.boundary, note)


# --- Jetson modules by CPU cores and memory -----------------------------------------------------
# NVIDIA's module data sheets (jetson-modules comparison): (module, CPU cores, memory GB). A log
# that prints the CPU core list and the RAM total (tegrastats, hand-rolled jtop loggers) narrows
# the module down; it is offered to the user, never stored as stated by the file.
MODULES: tuple[tuple[str, int, int], ...] = (
    ("Jetson AGX Thor", 14, 128),
    ("Jetson AGX Orin 64GB", 12, 64), ("Jetson AGX Orin 32GB", 8, 32),
    ("Jetson Orin NX 16GB", 8, 16), ("Jetson Orin NX 8GB", 6, 8),
    ("Jetson Orin Nano 8GB", 6, 8), ("Jetson Orin Nano 4GB", 6, 4),
    ("Jetson AGX Xavier 64GB", 8, 64), ("Jetson AGX Xavier 32GB", 8, 32),
    ("Jetson Xavier NX 16GB", 6, 16), ("Jetson Xavier NX 8GB", 6, 8),
    ("Jetson TX2", 6, 8), ("Jetson TX2 4GB", 6, 4), ("Jetson TX2 NX", 6, 4),
    ("Jetson TX1", 4, 4), ("Jetson Nano", 4, 4), ("Jetson Nano 2GB", 4, 2),
)
# The OS sees less than the module's memory (carve-outs for firmware and the GPU): 62,841 MB of
# an AGX Orin 64GB, 7,607 MB of an Orin Nano 8GB, 7,859 MB of a TX2, 3,964 MB of a Nano.
_VISIBLE_SHARE = (0.8, 1.0)


def modules_for(cores: int | None, ram_total_mb: float | None, rails: Iterable[str] = ()) -> list[str]:
    """The modules whose CPU core count and memory fit a log's (and whose board prints its rails);
    empty when the log gives neither figure."""
    if not cores and not ram_total_mb:
        return []
    by_rails = boards_for_rails(rails)
    out = []
    for name, n_cores, gb in MODULES:
        if cores and cores != n_cores:
            continue
        if ram_total_mb and not (_VISIBLE_SHARE[0] <= ram_total_mb / (gb * 1024) <= _VISIBLE_SHARE[1]):
            continue
        if by_rails and board_for_device(name) not in by_rails:
            continue
        out.append(name)
    return out
