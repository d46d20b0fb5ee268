"""One device, one name: which catalog entry a device string from a file means (pure logic, no database).

A string ('H100', 'NVIDIA A100-SXM4-40GB', 'H100-SXM-80GB', 'Tesla V100-SXM2-16GB', an nvidia-smi or a
Jetson module name) and each catalog entry are parsed into a `DeviceId`: the vendor family ('h100'), the
memory size it states, and its form factor (SXM, PCIe, NVL, laptop, Jetson module or developer kit), which
gives its power class. A form factor the name does not state is read from what else it says: the memory
type ('NVIDIA H100 80GB HBM3' is the SXM part: the PCIe card has HBM2e), a DGX/HGX system (SXM), the
catalog entry's TDP and memory against the family's known parts ('H100 80GB' at 350 W is the PCIe card),
or the source's own hardware (ML.ENERGY's leaderboard runs on SXM parts).

The rules (`match`): an exact catalog name maps; otherwise a candidate must be the same family, with the
same memory size where both state one, and the same power class where both state a form factor (and a TDP
within 10 % where both state one): never across form factors or power classes. One sure candidate maps
('rule'); none adds the device as its own entry ('added', under `canonical_name`); several, or one whose
form factor either side leaves open for a family sold in several, is ambiguous: never mapped silently,
the person picks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# families sold in several form factors of different power; for each, its known parts:
# (form, memory sizes in GB (empty: any), TDP range in W)
PARTS: Mapping[str, tuple[tuple[str, frozenset[int], tuple[float, float]], ...]] = {
    "a100": (("pcie", frozenset({40}), (250, 250)), ("pcie", frozenset({80}), (300, 300)),
             ("sxm", frozenset({40, 80}), (400, 400))),
    "a800": (("pcie", frozenset({40, 80}), (250, 300)), ("sxm", frozenset({80}), (400, 400))),
    "h100": (("pcie", frozenset({80}), (300, 350)), ("sxm", frozenset({64, 80, 94}), (700, 700)),
             ("nvl", frozenset({94}), (350, 400))),
    "h800": (("pcie", frozenset({80}), (300, 350)), ("sxm", frozenset({80}), (700, 700))),
    "h200": (("sxm", frozenset({141}), (700, 700)), ("nvl", frozenset({141}), (600, 600))),
    "v100": (("pcie", frozenset({16, 32}), (250, 250)), ("sxm", frozenset({16, 32}), (300, 350))),
    "p100": (("pcie", frozenset({12, 16}), (250, 250)), ("sxm", frozenset({16}), (300, 300))),
    # Blackwell's workstation card, its passively cooled server edition, and its 300 W Max-Q
    "rtx pro 6000": (("workstation", frozenset({96}), (600, 600)), ("server", frozenset({96}), (600, 600)),
                     ("maxq", frozenset({96}), (300, 300))),
}
# families sold in one form factor only (whatever a name says of it, it is that part)
SXM_ONLY = frozenset({"b200", "b100", "gb200", "gh200"})
# sources whose hardware is known: a name without a form factor from them is that form factor
SOURCE_FORMS: Mapping[str, str] = {"mlenergy-leaderboard": "sxm"}  # ML.ENERGY: H100 SXM5, B200, A100 SXM4

FORM_WORDS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL", "maxq": "Max-Q", "laptop": "Laptop", "module": "module",
              "devkit": "Developer Kit", "server": "Server Edition", "workstation": "Workstation Edition"}
# a Jetson module and its developer kit are one part (the kit carries the module): one power class
POWER_CLASS = {"sxm": "sxm", "pcie": "pcie", "nvl": "nvl", "maxq": "maxq", "laptop": "laptop", "module": "standard",
               "devkit": "standard", "server": "server", "workstation": "workstation"}  # a server edition: passive

_FAMILY = re.compile(
    r"\b(jetson (?:agx orin|agx xavier|xavier nx|orin nx|orin nano|nano|tx2)"
    r"|rtx pro \d{4}|rtx a\d{4}|rtx \d{4} ada|(?:rtx|gtx) \d{3,4}(?: ti)?(?: super)?|titan rtx"
    r"|gh200|gb200|b200|b100|h200|h100|h800|h20|a100|a800|a40|a30|a10g?|l40s|l40|l4|v100s?|p100|t4|k80"
    r"|mi\d{2,3}[xa]?)\b")
_MEMORY = re.compile(r"(?<![\w.])(\d{1,3})\s?(?:gb|gib|g)(?=$|[^a-z]|x\d)")
_FORM = (("sxm", re.compile(r"\bsxm\d?\b|\b[dh]gx\b")), ("pcie", re.compile(r"\bpcie\b")),
         ("nvl", re.compile(r"\bnvl\b")),
         # a Max-Q workstation card (RTX PRO 6000 Blackwell Max-Q, 300 W) is its own power class, not a laptop part
         ("maxq", re.compile(r"\bmax q\b(?=.*\bworkstation\b)|\bworkstation\b(?=.*\bmax q\b)")),
         ("laptop", re.compile(r"\bmax q\b|\blaptop\b|\bmobile\b")),
         ("devkit", re.compile(r"\bdeveloper kit\b|\bdev kit\b|\bdevkit\b")), ("module", re.compile(r"\bmodule\b")),
         ("server", re.compile(r"\bserver edition\b")), ("workstation", re.compile(r"\bworkstation edition\b")))


@dataclass(frozen=True)
class DeviceId:
    """What a device name says: `family` None when it names no family this module knows."""

    family: str | None
    memory_gb: int | None = None
    form: str | None = None  # a key of FORM_WORDS, stated or inferred; None: not known
    form_stated: bool = False  # the name itself says it

    @property
    def power_class(self) -> str | None:
        if self.form is not None:
            return POWER_CLASS[self.form]
        return None if self.family in PARTS else "standard"  # a one-form family: its only part


@dataclass(frozen=True)
class CatalogEntry:
    name: str
    tdp_w: float | None = None
    memory_gb: float | None = None


@dataclass(frozen=True)
class Match:
    """What a device string maps to: `how` is exact | rule | added | ambiguous; `device_name` the catalog
    entry (for 'added', the new entry's name; for 'ambiguous', None); `candidates` what it could be."""

    source: str
    how: str
    device_name: str | None
    candidates: tuple[str, ...] = ()
    reason: str = ""


def _normalized(name: str) -> str:
    text = re.sub(r"\((?:r|tm)\)|\bnvidia\b|\bcorporation\b", " ", name.lower())
    text = re.sub(r"(?<=\d)(?=[a-z]{3,})|[-_/,\[\]()]+", " ", text)  # '80GBx8' stays; '-' and '_' are spaces
    return re.sub(r"\s+", " ", text).strip()


def parse(name: str, *, tdp_w: float | None = None, memory_gb: float | None = None,
          source_format: str | None = None) -> DeviceId:
    """The family, memory and form factor a device name states (see the module's docstring); `tdp_w` and
    `memory_gb` are what a catalog entry (or the file) states beside the name, `source_format` the format
    of the file that named it."""
    text = _normalized(name)
    found = _FAMILY.search(text)
    if not found:
        return DeviceId(None)
    family = re.sub(r"\s+", " ", found.group(1))
    family = "v100" if family == "v100s" else family
    memories = [int(m) for m in _MEMORY.findall(text)]
    memory = memories[0] if memories else (int(memory_gb) if memory_gb else None)
    form = next((f for f, pattern in _FORM if pattern.search(text)), None)
    if form is not None:
        return DeviceId(family, memory, form, True)
    if family in SXM_ONLY:
        return DeviceId(family, memory, "sxm")
    if family not in PARTS:
        return DeviceId(family, memory)
    if family == "h100" and re.search(r"\bhbm3\b", text):
        return DeviceId(family, memory, "sxm")
    if family == "h100" and re.search(r"\bhbm2e\b", text):
        return DeviceId(family, memory, "pcie")
    if tdp_w is not None:
        forms = {f for f, sizes, (low, high) in PARTS[family]
                 if low <= tdp_w <= high and (memory is None or not sizes or memory in sizes)}
        return DeviceId(family, memory, forms.pop() if len(forms) == 1 else None)
    return DeviceId(family, memory, SOURCE_FORMS.get(source_format or ""))


_WORDS = {"rtx": "RTX", "gtx": "GTX", "agx": "AGX", "nx": "NX", "ti": "Ti", "pro": "PRO", "titan": "TITAN"}


def canonical_name(source: str, ident: DeviceId) -> str:
    """The name an unknown device is added under: the family with what is known of its form factor and
    memory ('H100 SXM 80GB'), so that later strings for the same part find it; the string as it came,
    cleaned of 'NVIDIA' and '(R)', when no family is known."""
    if ident.family is None or ident.family.startswith("mi"):
        cleaned = re.sub(r"\s+", " ", re.sub(r"\((?:R|TM)\)|^NVIDIA\s+", " ", source.strip())).strip()
        return cleaned or source
    family = " ".join(_WORDS.get(w, w.upper() if re.search(r"\d", w) else w.title()) for w in ident.family.split())
    if re.fullmatch(r"gtx .*|rtx [2-5]0[5-9]0(?: .*)?", ident.family):
        family = "GeForce " + family  # the catalog's spelling of a consumer card ('GeForce RTX 4090')
    parts = [family]
    if ident.form is not None and (ident.family in PARTS or ident.form_stated):
        parts.append(FORM_WORDS[ident.form])
    if ident.memory_gb is not None:
        parts.append(f"{ident.memory_gb}GB")
    return " ".join(parts)


def _compatible(s: DeviceId, c: DeviceId, s_tdp: float | None, c_tdp: float | None) -> str | None:
    """'sure', 'maybe' (a form factor left open where the family has several) or None (never the same)."""
    if s.family is None or s.family != c.family:
        return None
    if s.memory_gb is not None and c.memory_gb is not None and s.memory_gb != c.memory_gb:
        return None
    if s_tdp and c_tdp and abs(s_tdp - c_tdp) > 0.1 * max(s_tdp, c_tdp):
        return None  # another power class, whatever the names say
    sc, cc = s.power_class, c.power_class
    if sc is not None and cc is not None:
        return "sure" if sc == cc else None
    return "maybe"


def match(source: str, catalog: Iterable[CatalogEntry], *, tdp_w: float | None = None,
          source_format: str | None = None) -> Match:
    """Which catalog entry `source` (a device string from a file) is; see the module's docstring."""
    entries = list(catalog)
    if any(e.name == source for e in entries):
        return Match(source, "exact", source)
    ident = parse(source, tdp_w=tdp_w, source_format=source_format)
    sure: list[str] = []
    maybe: list[str] = []
    for entry in entries:
        found = _compatible(ident, parse(entry.name, tdp_w=entry.tdp_w, memory_gb=entry.memory_gb),
                            tdp_w, entry.tdp_w)
        (sure if found == "sure" else maybe if found == "maybe" else []).append(entry.name)
    if len(sure) == 1 and not maybe:
        return Match(source, "rule", sure[0],
                     reason=f"same part as the catalog's {sure[0]!r}: {describe(ident)}")
    if not sure and not maybe:
        name = canonical_name(source, ident)
        return Match(source, "added", name, reason="no catalog entry is this part: added as its own entry")
    candidates = tuple(sure + maybe)
    open_form = ""
    if maybe and ident.family in PARTS:
        open_form = ("; the name does not say SXM, PCIe or NVL (each another power class)" if ident.form is None
                     else f"; the catalog does not say whether {', '.join(repr(c) for c in maybe)} is the "
                          f"{FORM_WORDS[ident.form]} part (each form factor is another power class)")
    return Match(source, "ambiguous", None, candidates,
                 reason=f"it could be {', '.join(repr(c) for c in candidates)}{open_form}")


def describe(ident: DeviceId) -> str:
    """What was read from a name, for a person: 'H100, SXM, 80 GB'."""
    if ident.family is None:
        return "no known device family"
    words = [ident.family.upper()]
    if ident.form is not None:
        words.append(FORM_WORDS[ident.form])
    if ident.memory_gb is not None:
        words.append(f"{ident.memory_gb} GB")
    return ", ".join(words)


__all__ = ["CatalogEntry", "DeviceId", "Match", "canonical_name", "describe", "match", "parse"]
