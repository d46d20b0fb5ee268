"""One real serving engine per test session, shared by every serve-bench test module: `transformers serve
--continuous-batching` on the CPU with a 2-layer, 64-wide random-weight Llama and a tokenizer trained here (no
download), on a free localhost port, stopped by its PID (../shared/docs/PLATFORM.md has the recipe).

A test module imports `model_dir` and `server` from here; the fixtures of two modules share one model folder
and one server (`_shared`, counted), stopped when the last module's session fixture ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import free_port

TRANSFORMERS = Path(sys.executable).with_name("transformers")
MODEL_SCRIPT = """
import sys, torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
out = sys.argv[1]
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
text = ["the quick brown fox jumps over the lazy dog", "energy per token on a small model", "hello world"] * 20
tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>", "</s>", "<unk>"],
                                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
fast.chat_template = "{% for m in messages %}{{ m['content'] }}\\n{% endfor %}"
fast.save_pretrained(out)
torch.manual_seed(0)
LlamaForCausalLM(LlamaConfig(vocab_size=len(fast), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                             bos_token_id=0, eos_token_id=1)).save_pretrained(out)
"""


class Server:
    def __init__(self, model: Path, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        self.log_path = log
        self.log = log.open("wb")
        # --cb-num-blocks: without it continuous batching sizes its KV cache from the machine's free memory (60 %
        # of it on a CPU, about 14 GB here), which the kernel's OOM killer then takes back mid-test. 256 blocks of
        # 256 tokens hold far more than the tests' requests need, in about 70 MB for this 2-layer model.
        self.proc = subprocess.Popen([str(TRANSFORMERS), "serve", str(model), "--continuous-batching", "--device",
                                      "cpu", "--cb-num-blocks", "256", "--host", "127.0.0.1", "--port", str(self.port)],
                                     env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, log.read_text()[-2000:]
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            self.stop()
            raise AssertionError("transformers serve did not start in 90 s")
        # the first request starts the batching loop (seconds; tens of seconds on a loaded machine, where the
        # server may drop it once): outside every test's timing
        for attempt in range(3):
            try:
                httpx.post(self.url + "/v1/completions", json={"model": str(model), "prompt": "hello",
                                                               "max_tokens": 2}, timeout=120).raise_for_status()
                break
            except httpx.HTTPError:
                if attempt == 2:
                    self.stop()
                    raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:  # it does not always exit on SIGTERM: kill it by its PID
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


_shared: dict[str, Any] = {"users": 0}  # the session's model folder and server, whichever module asked first


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "model" not in _shared:
        out = tmp_path_factory.mktemp("tiny-llama")
        subprocess.run([sys.executable, "-c", MODEL_SCRIPT, str(out)], check=True, capture_output=True,
                       timeout=120)
        _shared["model"] = out
    return Path(_shared["model"])


@pytest.fixture(scope="session")
def server(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if "server" not in _shared:
        _shared["server"] = Server(model_dir, tmp_path_factory.mktemp("serve-log") / "serve.log")
    _shared["users"] += 1
    shared = _shared["server"]
    assert shared.proc.poll() is None, f"the session's server exited ({shared.proc.returncode}): " \
        + shared.log_path.read_text(errors="replace")[-3000:]
    try:
        yield _shared["server"]
    finally:
        _shared["users"] -= 1
        if _shared["users"] == 0:  # the last module's fixture: stop the server by its PID
            _shared.pop("server").stop()


