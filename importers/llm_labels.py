"""Labels the LLM benchmark readers share: a precision from a dtype and a quantisation, never guessed.

JouleBench's precision vocabulary (the result schema's `config.precision`) holds fp32, tf32, fp16,
bf16 and fp16-weights. Weights quantised to int4, int8, fp8, FP4 or MXFP4 are none of those: such a
run's precision is left not stated (the warning names the quantisation), never taken as its
activations' dtype.
"""

from __future__ import annotations

from importers.base import Conversion, clean_str
from importers.optimum import DTYPES

NO_QUANTISATION = frozenset({"", "none", "null", "no_quant", "auto", "n/a"})


def quantization_of(quantisation: object) -> str | None:
    """The weights' quantisation a file states ('FP8', 'W4A16_AWQ'), or None where it states none (or 'None')."""
    quant = clean_str(quantisation)
    return quant[:200] if quant is not None and quant.lower() not in NO_QUANTISATION else None


def precision_of(conv: Conversion, dtype: object, quantisation: object, where: str) -> str | None:
    """fp16 / bf16 / fp32 from a dtype the file states, unless the weights are quantised; else the folder's
    or the user's precision (`Conversion.precision`), else None with the reason recorded for the warning."""
    quant = clean_str(quantisation)
    if quant is not None and quant.lower() not in NO_QUANTISATION:
        precision = conv.precision(None)
        if precision is None:
            conv.unstated.setdefault("precision", f"({where} states quantisation {quant[:40]!r}, which is not one of "
                                                  "fp32, tf32, fp16, bf16)")
        return precision
    name = clean_str(dtype)
    precision = conv.precision(DTYPES.get((name or "").lower()))
    if precision is None and name:
        conv.unstated.setdefault("precision", f"({where} states dtype {name[:40]!r}, which is not one of fp32, tf32, "
                                              "fp16, bf16)")
    return precision
