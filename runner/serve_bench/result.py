"""What serve-bench records of one request (`RequestResult`: times of its send and of each text event, the counts
the figures use, what was wrong with the server's reply) and of the server (`ServerInfo`), and the base URL of a
target: plain records that the client, the event reader, the probe and the figures share."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RequestResult:
    index: int
    prompt_tokens_requested: int
    output_tokens_requested: int
    planned_s: float | None = None
    sent_s: float = 0.0
    token_s: list[float] = field(default_factory=list)  # each text-carrying event's arrival
    end_s: float | None = None
    prompt_tokens: int | None = None  # the counts the figures use (runner.serve_bench.counts decides them)
    output_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None  # refused | failed | timed_out | too_large
    in_flight_at_send: int = 0
    model: str | None = None  # the model id this request asks for; None: the run's
    usage_seen: bool = False  # the server sent a `usage`
    usage_prompt_tokens: int | None = None  # its counts, where whole numbers in range (runner.serve_bench.events)
    usage_output_tokens: int | None = None
    usage_problem: str | None = None  # what was wrong with the `usage` sent
    text_bytes: int = 0  # UTF-8 bytes of the text events' text
    text_parts: list[str] = field(default_factory=list)  # the text, kept for --tokenizer's count
    text_chars: int = 0
    text_overflow: bool = False  # past events.MAX_KEPT_TEXT_CHARS: the text was not all kept
    malformed_events: int = 0
    malformed_first: str | None = None
    prompt_tokens_client: int | None = None  # the prompt sent, counted with --tokenizer
    output_tokens_client: int | None = None  # the stream counted here (counts.client_output_tokens)
    count_source: str | None = None  # usage | stream: where output_tokens came from
    prompt_source: str | None = None  # usage | client: where prompt_tokens came from (counts)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.token_s)

    @property
    def ttft_ms(self) -> float | None:
        return (self.token_s[0] - self.sent_s) * 1000.0 if self.token_s else None

    @property
    def e2e_ms(self) -> float | None:
        return (self.token_s[-1] - self.sent_s) * 1000.0 if self.token_s else None

    @property
    def tpot_ms(self) -> float | None:
        """(e2e - TTFT) / (output tokens - 1), vLLM's; None for one output token."""
        if not self.token_s or not self.output_tokens or self.output_tokens < 2:
            return None
        return (self.token_s[-1] - self.token_s[0]) * 1000.0 / (self.output_tokens - 1)

    def gaps_ms(self) -> list[float]:
        return [(b - a) * 1000.0 for a, b in zip(self.token_s, self.token_s[1:])]

    def note_malformed(self, what: str) -> None:
        self.malformed_events += 1
        if self.malformed_first is None:
            self.malformed_first = what


@dataclass(frozen=True)
class ServerInfo:
    models: list[str]
    model: str
    engine: str | None
    engine_version: str | None
    max_model_len: int | None = None
    notes: tuple[str, ...] = ()  # what was cleaned out of the names the server sent
    model_name: str | None = None  # the model id cleaned for printing and storing (`model` is sent as is)

    @property
    def label(self) -> str:
        """The model's name as printed and stored."""
        return self.model_name or self.model


def base_url(target: str) -> str:
    """`http://host:port` or `http://host:port/v1` -> the URL the `/v1/...` paths hang from."""
    from runner.serve_bench.options import ServeBenchError

    url = target.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ServeBenchError(f"--target: {target[:80]!r} is not an http(s) URL, e.g. http://localhost:8000")
    return url[:-3] if url.endswith("/v1") else url
