"""Precisions as PRODUCT.md defines them, and what each one means for the model and the loop.

- `fp32`: float32 with TF32 explicitly off;
- `tf32`: float32 with TF32 matmul and cuDNN on (effective on Ampere and newer only);
- `fp16`: autocast to float16, plus GradScaler when training;
- `bf16`: autocast to bfloat16;
- `fp16-weights`: inference with the model cast to half.

On a CPU only fp32 and bf16 apply; others are refused, never silently swapped.

Generation workloads run with the weights in the precision: `fp16` and `bf16` cast the model (as
serving engines such as vLLM run a model, and as imported generation results mean it), with no
autocast; `tf32` and `fp32` keep float32 weights.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from joulebench.vocab import CPU_PRECISIONS, INFER_ONLY_PRECISIONS, PRECISIONS

__all__ = ["CPU_PRECISIONS", "INFER_ONLY_PRECISIONS", "PRECISIONS", "Precision", "get", "problem"]


@dataclass(frozen=True)
class Precision:
    name: str
    autocast_dtype: torch.dtype | None = None
    weights_dtype: torch.dtype | None = None  # cast the model (and float inputs) to this
    grad_scaler: bool = False  # training only
    tf32: bool = False


_PLANS = {
    "fp32": Precision("fp32"),
    "tf32": Precision("tf32", tf32=True),
    "fp16": Precision("fp16", autocast_dtype=torch.float16, grad_scaler=True),
    "bf16": Precision("bf16", autocast_dtype=torch.bfloat16),
    "fp16-weights": Precision("fp16-weights", weights_dtype=torch.float16),
}


def get(name: str) -> Precision:
    return _PLANS[name]


def for_workload(name: str, generates: bool) -> Precision:
    """The plan for a workload: a generation workload's fp16 / bf16 are weights in that dtype."""
    plan = _PLANS[name]
    if generates and plan.autocast_dtype is not None:
        return Precision(name, weights_dtype=plan.autocast_dtype)
    return plan


def problem(name: str, mode: str, device: torch.device) -> str | None:
    """Why precision `name` cannot run in `mode` on `device`, or None."""
    if name not in _PLANS:
        return f"--precision: {name!r} is not a precision; valid: {', '.join(PRECISIONS)}"
    if name in INFER_ONLY_PRECISIONS and mode == "train":
        trainable = ", ".join(p for p in PRECISIONS if p not in INFER_ONLY_PRECISIONS)
        return (f"--precision: {name} is for inference only (the model is cast to half); "
                f"valid for --mode train: {trainable}")
    if device.type == "cpu" and name not in CPU_PRECISIONS:
        return f"--precision: {name} is not available on a CPU; valid on cpu: {', '.join(CPU_PRECISIONS)}"
    if device.type == "cuda" and name == "bf16" and not torch.cuda.is_bf16_supported():
        return (f"--precision: bf16 is not supported by {torch.cuda.get_device_name(device)}; "
                f"valid here: fp32, tf32, fp16, fp16-weights")
    return None


# torch.backends typed as Any: its fp32_precision attributes are dynamic and missing from the stubs.
_backends: Any = torch.backends


def _new_api() -> bool:
    return hasattr(_backends.cuda.matmul, "fp32_precision")


def _read_tf32_flags() -> bool:
    if _new_api():
        return (_backends.cuda.matmul.fp32_precision == "tf32"
                and _backends.cudnn.conv.fp32_precision == "tf32")
    return bool(_backends.cuda.matmul.allow_tf32 and _backends.cudnn.allow_tf32)


def _raw_flags() -> tuple[object, ...]:
    if _new_api():
        b = _backends
        return (b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision, b.cudnn.rnn.fp32_precision,
                b.mkldnn.fp32_precision)
    return (_backends.cuda.matmul.allow_tf32, _backends.cudnn.allow_tf32)


def _restore_raw_flags(flags: tuple[object, ...]) -> None:
    if _new_api():
        b = _backends
        (b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision, b.cudnn.rnn.fp32_precision,
         b.mkldnn.fp32_precision) = flags
    else:
        _backends.cuda.matmul.allow_tf32, _backends.cudnn.allow_tf32 = flags


def _set_tf32_flags(enabled: bool) -> None:
    if _new_api():
        # torch >= 2.9: the per-backend fp32_precision API; mixing it with the legacy
        # allow_tf32 flags raises, so only this one is used when present.
        value = "tf32" if enabled else "ieee"
        _backends.cuda.matmul.fp32_precision = value
        _backends.cudnn.conv.fp32_precision = value
        _backends.cudnn.rnn.fp32_precision = value
        # fp32 on a CPU means IEEE fp32: never let oneDNN downcast float32 matmuls.
        _backends.mkldnn.fp32_precision = "ieee"
    else:
        _backends.cuda.matmul.allow_tf32 = enabled
        _backends.cudnn.allow_tf32 = enabled


def tf32_in_effect(device: torch.device) -> bool:
    """TF32 actually used: the flags are on and the GPU has TF32 units (Ampere, sm_80, or newer)."""
    if device.type != "cuda" or not _read_tf32_flags():
        return False
    return torch.cuda.get_device_capability(device) >= (8, 0)


@contextlib.contextmanager
def tf32_setting(precision: Precision, device: torch.device) -> Iterator[bool]:
    """Set the TF32 flags explicitly for this precision; yield whether TF32 is in effect.

    The previous flags are restored afterwards.
    """
    before = _raw_flags()
    _set_tf32_flags(precision.tf32)
    try:
        yield tf32_in_effect(device)
    finally:
        _restore_raw_flags(before)


def autocast(precision: Precision, device: torch.device) -> contextlib.AbstractContextManager[object]:
    if precision.autocast_dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=precision.autocast_dtype)


def grad_scaler(precision: Precision, device: torch.device) -> torch.amp.GradScaler | None:
    if not precision.grad_scaler:
        return None
    return torch.amp.GradScaler(device.type)


def cast_inputs(inputs: dict[str, torch.Tensor], precision: Precision) -> dict[str, torch.Tensor]:
    """Float inputs follow a half-precision model; integer ids and labels stay as they are."""
    if precision.weights_dtype is None:
        return inputs
    return {k: v.to(precision.weights_dtype) if v.is_floating_point() else v for k, v in inputs.items()}
