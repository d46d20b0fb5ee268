"""Jetson power rails: which INA3221 rail measures the whole module.

The module's energy is its input rail alone: `VDD_IN` (Orin NX / Orin Nano, Xavier NX) or
`POM_5V_IN` (Nano, TX2). The other rails are fed from it, so adding them to it double-counts
(jetson-stats#51, #344). A board whose monitors expose no input rail (AGX Xavier, AGX Orin:
`VIN_SYS_5V0` there is one 5 V system rail, not the module input) gets no energy from a single
rail.
"""

from __future__ import annotations

INPUT_RAILS = ("VDD_IN", "POM_5V_IN")
