"""A buyer's answers checked against the source file by hand, in a real browser (issue 28): the ML.ENERGY v3
Llama-3.1-8B leaderboard file (tests/fixtures/formats, attribution in SOURCES.md) uploaded on the Upload page
of a fresh `joulebench app`; Decide's B200 vs H100 answer read off the page and compared with the file's own
figures at each device's best max_num_seqs; then on Cost, with an electricity price typed in, the electricity
part of the cost per 1M output tokens compared with J/token x 1e6 / 3.6e6 x price. One browser session."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest

from tests.helpers import read_while_served
from tests.test_browser import _body, _set_number, _settled, _wait_text, page, server  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser
LEADERBOARD = (Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy"
               / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json")
PRICE_KWH = 0.30  # the price the buyer types (USD per kWh)
SHAPE = "llama-3.1-8b, prompt not stated + output length not stated"  # the file's runs, compared like for like


def _by_hand() -> dict[str, dict[str, dict]]:
    """Per device of the file: its best configuration by output tokens/s ('fastest') and by energy per
    request ('frugal': the cheapest electricity per sample), as the file states them."""
    configs = json.loads(LEADERBOARD.read_text())["configurations"]
    out: dict[str, dict[str, dict]] = {}
    for gpu in {c["gpu_model"] for c in configs}:
        mine = [c for c in configs if c["gpu_model"] == gpu]
        out[gpu] = {"fastest": max(mine, key=lambda c: c["output_throughput_tokens_per_sec"]),
                    "frugal": min(mine, key=lambda c: c["energy_per_request_joules"]),
                    "least_j_per_token": min(mine, key=lambda c: c["energy_per_token_joules"])}
    return out


def _sig(value: float) -> str:
    return f"{float(f'{value:.3g}'):g}"  # 3 significant figures, as the page writes them


def _stored_names(db: Path) -> dict[str, str]:
    """The device name the store gave each GPU of the file (the catalog's, where the import maps it), found by
    a server setting only that GPU's rows have."""
    configs = json.loads(LEADERBOARD.read_text())["configurations"]
    seqs = {gpu: {c["max_num_seqs"] for c in configs if c["gpu_model"] == gpu} for gpu in ("B200", "H100")}
    own = {gpu: min(mine - seqs["H100" if gpu == "B200" else "B200"]) for gpu, mine in seqs.items()}
    rows = read_while_served(db, "SELECT r.tag, r.device_name FROM runs r JOIN sources s USING (source_id) "
                                 "WHERE s.file_name = ?", [LEADERBOARD.name])
    by_tag = dict(rows)
    return {gpu: by_tag[f"max_num_seqs {n}"] for gpu, n in own.items()}


def test_decide_and_cost_answers_match_the_source_file(server: str, page, seeded_db: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    hand = _by_hand()
    # upload the file as a buyer does
    page.goto(f"{server}/upload")
    _wait_text(page, "Drop one or several result files")
    page.set_input_files("input[type=file] >> nth=0", str(LEADERBOARD))
    _wait_text(page, LEADERBOARD.name)
    page.get_by_role("button", name="Import 1 file").click()
    _wait_text(page, "20 runs added", 90_000)
    names = _stored_names(seeded_db)
    b200, h100 = names["B200"], names["H100"]

    # Decide: B200 vs H100 for inference, each at its best max_num_seqs
    query = urllib.parse.urlencode([("device", b200), ("device", h100), ("mode", "infer"), ("shape", SHAPE)])
    page.goto(f"{server}/decide?{query}")
    _wait_text(page, "Energy per token at your latency target")
    _wait_text(page, f"Fewest joules per output token with no latency limit ({SHAPE})")  # drawn after the heading
    _settled(page)
    body = _body(page)
    fast_b, fast_h = hand["B200"]["fastest"], hand["H100"]["fastest"]
    tokens_ratio = fast_b["output_throughput_tokens_per_sec"] / fast_h["output_throughput_tokens_per_sec"]
    requests_ratio = tokens_ratio * fast_h["avg_output_len"] / fast_b["avg_output_len"]  # samples/s: requests/s
    faster = re.search(r"Faster: (.+?) is faster at inference than (.+?): ([\d.]+)x \(.*?; (.+?) at max_num_seqs "
                       r"(\d+) \(its best of \d+ configurations measured\) vs (.+?) at max_num_seqs (\d+) ", body)
    assert faster, body[:3000]
    assert faster.group(1, 2) == (b200, h100)
    assert faster.group(3) == f"{requests_ratio:.1f}" == f"{tokens_ratio:.1f}"  # 37.4 / 24.7 and 14,799 / 9,806
    assert int(faster.group(5)) == fast_b["max_num_seqs"] and int(faster.group(7)) == fast_h["max_num_seqs"]
    assert f"Fewest joules per output token with no latency limit ({SHAPE})" in body
    for gpu, name in (("B200", b200), ("H100", h100)):  # J/token at the best configuration, as the file states
        best = hand[gpu]["least_j_per_token"]
        assert best["max_num_seqs"] == hand[gpu]["fastest"]["max_num_seqs"]  # the fastest is also the most frugal
        said = [line for line in body.splitlines() if re.search(rf"(^|: ){re.escape(name)} (at|also)", line)]
        assert said and re.search(rf"max_num_seqs {best['max_num_seqs']}\b", said[0]), (name, said, body[-3000:])
        assert f"{_sig(best['energy_per_token_joules'])} J/token" in said[0], (name, said)
    # the sample answer's cost is split, the electricity shown without a device price
    cost_line = next(line for line in body.splitlines() if line.startswith("Electricity + hardware per 1M samples"))
    assert f"{b200} {_sig(hand['B200']['fastest']['energy_per_request_joules'] / 3.6e6 * 1e6 * 0.15)} USD " \
           "electricity + hardware not known (no price: add one on Devices)" in cost_line, cost_line
    assert "None" not in body and "nan" not in body.split()

    # Cost: the buyer's own electricity price; the electricity part of the cost per 1M output tokens
    query = urllib.parse.urlencode({"workload": f"{json.loads(LEADERBOARD.read_text())['model_id']}:lm-arena-chat",
                                    "mode": "infer"})
    page.goto(f"{server}/cost?{query}")
    _wait_text(page, "Electricity only: no device price")
    _set_number(page, "Electricity price (USD per kWh)", f"{PRICE_KWH:.2f}")
    _wait_text(page, f"your {PRICE_KWH:g} USD per kWh")
    body = _body(page)
    for gpu, name in (("B200", b200), ("H100", h100)):
        found = re.search(rf"^{re.escape(name)} \((.+?)\): ([\d.]+) USD electricity \+ hardware not known \(no price: "
                          rf"add one on Devices\) per 1M samples; ([\d.]+) USD electricity \+ hardware not known "
                          rf"\(no price: add one on Devices\) per 1M output tokens\.$", body, re.MULTILINE)
        assert found, (name, body[:4000])
        frugal = hand[gpu]["frugal"]  # the cheapest configuration without a price: the least electricity
        assert found.group(1).endswith(f"max_num_seqs {frugal['max_num_seqs']}"), found.group(1)
        per_token = frugal["energy_per_token_joules"] * 1e6 / 3.6e6 * PRICE_KWH
        per_sample = frugal["energy_per_request_joules"] * 1e6 / 3.6e6 * PRICE_KWH
        assert found.group(3) == _sig(per_token), (found.group(3), per_token)
        assert found.group(2) == _sig(per_sample), (found.group(2), per_sample)
    assert "Add a price (Devices) for the hardware part" in body
