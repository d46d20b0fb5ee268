"""Out of memory is an outcome, `oom`, in every mode (issue 30, defect 8): one classifier for the errors an
allocator really raises (CUDA, the CPU allocator, Python's MemoryError), and runs through generation and
serving whose model hits an allocation error are stored as `oom`, not `failed`."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from db import Store
from runner import SweepOptions, run_sweep, workloads
from runner.record import is_out_of_memory


def _raised(make: Any) -> BaseException:
    try:
        make()
    except BaseException as e:  # noqa: BLE001 - the test wants the real exception object
        return e
    raise AssertionError("expected an error")


def _cpu_allocator_refusal() -> None:
    torch.empty(2**62, dtype=torch.uint8)  # 4 EiB: the CPU allocator's own RuntimeError, on any machine


def test_the_errors_allocators_really_raise_are_out_of_memory() -> None:
    cpu = _raised(_cpu_allocator_refusal)
    assert type(cpu) is RuntimeError and "DefaultCPUAllocator: can't allocate memory" in str(cpu)
    assert is_out_of_memory(cpu)
    assert is_out_of_memory(_raised(lambda: bytearray(2**62)))  # MemoryError
    assert is_out_of_memory(_raised(lambda: np.empty(2**62, dtype=np.uint8)))  # numpy's MemoryError subclass
    # torch's own OOM type, as the CUDA caching allocator raises it (constructed: no GPU here)
    assert is_out_of_memory(torch.OutOfMemoryError(
        "CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 3.06 GiB "
        "is free. Of the allocated memory 74.22 GiB is allocated by PyTorch"))


@pytest.mark.parametrize("message", [
    "CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported",  # from a kernel launch
    "[enforce fail at C:\\actions-runner\\_work\\pytorch\\c10\\core\\impl\\alloc_cpu.cpp:72] data. "
    "DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.",  # Windows
    "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    "cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    "HIP out of memory. Tried to allocate 2.00 GiB",
    "MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.2 GB)",
    "std::bad_alloc",
])
def test_allocator_messages_in_a_runtime_error_are_out_of_memory(message: str) -> None:
    assert is_out_of_memory(RuntimeError(message))


def test_other_errors_are_failures_and_a_wrapped_oom_is_still_oom() -> None:
    assert not is_out_of_memory(RuntimeError("a kernel went wrong"))
    assert not is_out_of_memory(ValueError("out of memory"))  # only a RuntimeError speaks for an allocator
    assert not is_out_of_memory(_raised(lambda: torch.empty(2**40, 2**40)))  # a size overflow, not a lack of memory
    cpu = _raised(_cpu_allocator_refusal)

    def wrapped() -> None:
        try:
            raise cpu
        except RuntimeError as e:
            raise ValueError("the model could not build its cache") from e

    assert is_out_of_memory(_raised(wrapped))


# --- the generation and serving paths: an allocation error at the model boundary ---------------------

OOM_FROM_BATCH = 4


@contextlib.contextmanager
def _decoder_that_runs_out_at(batch: int) -> Iterator[str]:
    """llm-tiny, whose forward asks the CPU allocator for 4 EiB (a real refusal) from `batch` requests on."""
    name, shape = "test-llm-oom", workloads.DECODERS["llm-tiny"][1]

    def build(size: int) -> torch.nn.Module:
        model = shape.build(size)
        real = model.forward

        @functools.wraps(real)  # the same signature: the runner reads the KV cache's keyword from it
        def forward(*args: Any, **kwargs: Any) -> Any:
            ids = kwargs.get("input_ids")
            if ids is not None and ids.shape[0] >= batch:
                _cpu_allocator_refusal()
            return real(*args, **kwargs)

        model.forward = forward  # type: ignore[method-assign]
        return model

    tiny = workloads.get("llm-tiny")
    workloads.register(workloads.Workload(name, "llm-tiny", "text-generation", "text", 16, build, tiny.make_inputs,
                                          max_size=tiny.max_size, default_max_new_tokens=4))
    try:
        yield name
    finally:
        workloads.unregister(name)


@pytest.mark.parametrize("rates", [None, [1000.0]], ids=["generation", "serving"])
def test_an_allocation_error_in_generation_or_serving_is_stored_as_oom(
        rates: list[float] | None, seeded_db: Path, tmp_path: Path) -> None:
    with _decoder_that_runs_out_at(OOM_FROM_BATCH) as name:
        result = run_sweep(SweepOptions(workloads=[name], batch_sizes=[1, OOM_FROM_BATCH], seq_lens=[16],
                                        max_new_tokens=[4], request_rates=rates, warmup=1, steps=2, repeats=1,
                                        device="cpu", db=str(seeded_db), out=tmp_path / "sweep.json", idle=False))
    statuses = [(r["config"]["batch_size"], r["status"]) for r in result.runs]
    assert statuses == [(1, "ok"), (OOM_FROM_BATCH, "oom")], [r.get("error") for r in result.runs]
    oom = result.runs[1]
    assert "DefaultCPUAllocator: can't allocate memory" in oom["error"]
    assert oom["metrics"] == {"energy_missing_reason": "the run ran out of memory before the measured window completed"}
    assert result.exit_code == 0  # an OOM is an outcome, not a failure of the sweep
    with Store.open_read_only(seeded_db) as store:
        stored = store.query(f"SELECT batch_size, status FROM runs WHERE workload = '{name}' ORDER BY 1").rows()
    assert stored == [(1, "ok"), (OOM_FROM_BATCH, "oom")]
