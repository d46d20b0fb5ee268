"""The workload registry: models built from transformers configs with random weights.

Nothing is downloaded: pretrained weights change neither speed nor energy, so every model is
built from its config (`HF_HUB_OFFLINE=1` is set before transformers is imported) and fed
synthetic inputs of the right shape. transformers and torch are imported lazily, inside the
builders, so listing names (for `--help` and validation) stays instant.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

os.environ.setdefault("HF_HUB_OFFLINE", "1")

if TYPE_CHECKING:
    import torch

InputKind = Literal["text", "image"]
# (batch_size, size, device, train, generator) -> keyword arguments for model(**inputs)
InputMaker = Callable[[int, int, "torch.device", bool, "torch.Generator"], dict[str, "torch.Tensor"]]


@dataclass(frozen=True)
class Workload:
    """A model, a task and the shape of its synthetic inputs."""

    name: str
    model: str  # e.g. "bert-large"
    task: str  # e.g. "token-classification"
    input_kind: InputKind  # "text": size is the sequence length; "image": the image side in pixels
    default_size: int
    build: Callable[[int], torch.nn.Module]  # size -> model with random weights
    make_inputs: InputMaker
    max_size: int | None = None  # longest sequence the model's position embeddings allow
    size_multiple: int = 1  # e.g. the ViT patch size
    min_size: int = 1
    description: str = ""
    # generation workloads (task text-generation): output tokens per request by default; None for the others
    default_max_new_tokens: int | None = None

    @property
    def generates(self) -> bool:
        return self.default_max_new_tokens is not None

    @property
    def size_option(self) -> str:
        return "--seq-len" if self.input_kind == "text" else "--image-size"

    def size_problem(self, size: int) -> str | None:
        """Why `size` cannot be used with this workload, or None."""
        what = "sequence length" if self.input_kind == "text" else "image size"
        if size < self.min_size:
            return (f"{self.size_option}: {size} is too small for {self.name}; "
                    f"the {what} must be at least {self.min_size}")
        if self.max_size is not None and size > self.max_size:
            return f"{self.size_option}: {size} is too long for {self.name}; the {what} must be at most {self.max_size}"
        if size % self.size_multiple:
            return (f"{self.size_option}: {size} does not fit {self.name}; the {what} must be a multiple "
                    f"of {self.size_multiple}")
        return None

    def parameter_count(self) -> int:
        """Parameters of the model at its default size, counted without allocating weights."""
        import torch

        with torch.device("meta"):
            model = self.build(self.default_size)
        return sum(p.numel() for p in model.parameters())


_REGISTRY: dict[str, Workload] = {}


def register(workload: Workload, *, replace: bool = False) -> Workload:
    """Add a workload (tests register their own; shipped ones are registered below)."""
    if workload.name in _REGISTRY and not replace:
        raise ValueError(f"workload {workload.name!r} is already registered")
    _REGISTRY[workload.name] = workload
    return workload


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def names() -> list[str]:
    return list(_REGISTRY)


def get(name: str) -> Workload:
    """The workload called `name`; KeyError when there is none (options validate names first)."""
    return _REGISTRY[name]


# --- synthetic inputs -------------------------------------------------------------------------

def _ids(batch: int, seq: int, vocab: int, device: torch.device, gen: torch.Generator) -> torch.Tensor:
    import torch

    return torch.randint(0, vocab, (batch, seq), generator=gen).to(device)


def _text_inputs(vocab: int, *, token_types: bool) -> Callable[..., dict[str, torch.Tensor]]:
    def make(batch: int, seq: int, device: torch.device, gen: torch.Generator) -> dict[str, torch.Tensor]:
        import torch

        inputs = {"input_ids": _ids(batch, seq, vocab, device, gen),
                  "attention_mask": torch.ones(batch, seq, dtype=torch.long, device=device)}
        if token_types:
            inputs["token_type_ids"] = torch.zeros(batch, seq, dtype=torch.long, device=device)
        return inputs

    return make


def token_classification_inputs(vocab: int, num_labels: int) -> InputMaker:
    base = _text_inputs(vocab, token_types=True)

    def make(batch: int, seq: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        import torch

        inputs = base(batch, seq, device, gen)
        if train:
            inputs["labels"] = torch.randint(0, num_labels, (batch, seq), generator=gen).to(device)
        return inputs

    return make


def question_answering_inputs(vocab: int) -> InputMaker:
    base = _text_inputs(vocab, token_types=True)

    def make(batch: int, seq: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        import torch

        inputs = base(batch, seq, device, gen)
        if train:
            inputs["start_positions"] = torch.randint(0, seq, (batch,), generator=gen).to(device)
            inputs["end_positions"] = torch.randint(0, seq, (batch,), generator=gen).to(device)
        return inputs

    return make


def sequence_classification_inputs(vocab: int, num_labels: int, *, token_types: bool) -> InputMaker:
    base = _text_inputs(vocab, token_types=token_types)

    def make(batch: int, seq: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        import torch

        inputs = base(batch, seq, device, gen)
        if train:
            inputs["labels"] = torch.randint(0, num_labels, (batch,), generator=gen).to(device)
        return inputs

    return make


def causal_lm_inputs(vocab: int) -> InputMaker:
    base = _text_inputs(vocab, token_types=False)

    def make(batch: int, seq: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        inputs = base(batch, seq, device, gen)
        if train:
            inputs["labels"] = inputs["input_ids"]
        return inputs

    return make


def prompt_inputs(vocab: int) -> InputMaker:
    """Prompts of random token ids for a generation workload (no labels: generation does not train)."""
    def make(batch: int, seq: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        return {"input_ids": _ids(batch, seq, vocab, device, gen)}

    return make


def image_classification_inputs(num_labels: int) -> InputMaker:
    def make(batch: int, size: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
        import torch

        inputs = {"pixel_values": torch.randn(batch, 3, size, size, generator=gen).to(device)}
        if train:
            inputs["labels"] = torch.randint(0, num_labels, (batch,), generator=gen).to(device)
        return inputs

    return make


# --- the shipped workloads --------------------------------------------------------------------

BERT_VOCAB = 30522
GPT2_VOCAB = 50257
CONLL_LABELS = 9  # CoNLL-2003 NER tags (O, B/I-PER, B/I-ORG, B/I-LOC, B/I-MISC)


def _bert_shape(hidden: int, layers: int, heads: int) -> dict[str, Any]:
    return {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
            "intermediate_size": 4 * hidden}


BERT_BASE = _bert_shape(768, 12, 12)
BERT_LARGE = _bert_shape(1024, 24, 16)
BERT_TINY = _bert_shape(128, 2, 2)


def _bert(cls_name: str, shape: dict[str, Any], **extra: Any) -> Callable[[int], torch.nn.Module]:
    def build(size: int) -> torch.nn.Module:
        import transformers

        config = transformers.BertConfig(**shape, **extra)
        return getattr(transformers, cls_name)(config)

    return build


def _labels(n: int) -> dict[str, Any]:
    return {"num_labels": n}  # a PretrainedConfig keyword every config accepts


def _distilbert(size: int) -> torch.nn.Module:
    import transformers

    return transformers.DistilBertForSequenceClassification(transformers.DistilBertConfig(**_labels(2)))


def _gpt2(size: int) -> torch.nn.Module:
    import transformers

    return transformers.GPT2LMHeadModel(transformers.GPT2Config())


def _resnet50(size: int) -> torch.nn.Module:
    import transformers

    # ResNetConfig's defaults are ResNet-50: bottleneck blocks, depths 3-4-6-3.
    return transformers.ResNetForImageClassification(transformers.ResNetConfig(**_labels(1000)))


def _vit_base(size: int) -> torch.nn.Module:
    import transformers

    # ViTConfig's defaults are ViT-Base/16; position embeddings follow the image size.
    return transformers.ViTForImageClassification(transformers.ViTConfig(image_size=size, **_labels(1000)))


@dataclass(frozen=True)
class DecoderShape:
    """A decoder-only LM's shape with grouped-query attention, written here from the published configs
    (the config.json of each model on the Hugging Face Hub); the weights are random."""

    family: str  # "llama" or "qwen2": the transformers config and model classes
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    max_positions: int
    tie_embeddings: bool  # RoPE's base and scaling are left out: they change neither speed nor energy

    def config(self) -> Any:
        import transformers

        cls = transformers.LlamaConfig if self.family == "llama" else transformers.Qwen2Config
        return cls(vocab_size=self.vocab, hidden_size=self.hidden, intermediate_size=self.intermediate,
                   num_hidden_layers=self.layers, num_attention_heads=self.heads,
                   num_key_value_heads=self.kv_heads, max_position_embeddings=self.max_positions,
                   tie_word_embeddings=self.tie_embeddings)

    def build(self, size: int) -> torch.nn.Module:
        import transformers

        cls = transformers.LlamaForCausalLM if self.family == "llama" else transformers.Qwen2ForCausalLM
        return cls(self.config())


LLAMA3_VOCAB = 128256
DECODERS: dict[str, tuple[str, DecoderShape]] = {
    # name: (model, shape); the shapes of Qwen2.5-0.5B, Llama-3.2-1B, Llama-3.2-3B and Llama-3.1-8B
    "llm-0.5b": ("qwen2.5-0.5b", DecoderShape("qwen2", 896, 4864, 24, 14, 2, 151936, 32768, True)),
    "llm-1b": ("llama-3.2-1b", DecoderShape("llama", 2048, 8192, 16, 32, 8, LLAMA3_VOCAB, 131072, True)),
    "llm-3b": ("llama-3.2-3b", DecoderShape("llama", 3072, 8192, 28, 24, 8, LLAMA3_VOCAB, 131072, True)),
    "llm-8b": ("llama-3.1-8b", DecoderShape("llama", 4096, 14336, 32, 32, 8, LLAMA3_VOCAB, 131072, False)),
    # for tests: 2 layers, hidden 64, 4 query heads sharing 2 key/value heads
    "llm-tiny": ("llm-tiny", DecoderShape("llama", 64, 128, 2, 4, 2, 2048, 2048, True)),
}
GENERATION_PROMPT = 512  # prompt tokens per request by default (--seq-len)
GENERATION_OUTPUT = 128  # output tokens per request by default (--max-new-tokens)


def _register_shipped() -> None:
    for size_name, shape in (("large", BERT_LARGE), ("base", BERT_BASE)):
        register(Workload(
            f"bert-{size_name}-ner", f"bert-{size_name}", "token-classification", "text", 512,
            _bert("BertForTokenClassification", shape, num_labels=CONLL_LABELS),
            token_classification_inputs(BERT_VOCAB, CONLL_LABELS), max_size=512,
            description=f"BERT-{size_name.capitalize()} token classification, CoNLL-2003 shape (9 labels)"))
    for size_name, shape in (("large", BERT_LARGE), ("base", BERT_BASE)):
        register(Workload(
            f"bert-{size_name}-squad", f"bert-{size_name}", "question-answering", "text", 384,
            _bert("BertForQuestionAnswering", shape), question_answering_inputs(BERT_VOCAB), max_size=512,
            description=f"BERT-{size_name.capitalize()} question answering, SQuAD shape (seq 128 or 384)"))
    register(Workload(
        "distilbert-cls", "distilbert-base", "sequence-classification", "text", 128, _distilbert,
        sequence_classification_inputs(BERT_VOCAB, 2, token_types=False), max_size=512,
        description="DistilBERT-base sequence classification (2 labels)"))
    register(Workload(
        "gpt2", "gpt2", "causal-lm", "text", 512, _gpt2, causal_lm_inputs(GPT2_VOCAB), max_size=1024,
        description="GPT-2 (124M) causal language modelling"))
    register(Workload(
        "resnet50", "resnet-50", "image-classification", "image", 224, _resnet50,
        image_classification_inputs(1000), min_size=32,
        description="ResNet-50 image classification, 1000 classes"))
    register(Workload(
        "vit-base", "vit-base-patch16", "image-classification", "image", 224, _vit_base,
        image_classification_inputs(1000), size_multiple=16, min_size=16,
        description="ViT-Base/16 image classification, 1000 classes"))
    register(Workload(
        "bert-tiny", "bert-tiny", "token-classification", "text", 128,
        _bert("BertForTokenClassification", BERT_TINY, num_labels=CONLL_LABELS),
        token_classification_inputs(BERT_VOCAB, CONLL_LABELS), max_size=512,
        description="BERT-tiny (2 layers, hidden 128) token classification: for tests"))
    for name, (model, decoder) in DECODERS.items():
        tiny = name == "llm-tiny"
        register(Workload(
            name, model, "text-generation", "text", 32 if tiny else GENERATION_PROMPT, decoder.build,
            prompt_inputs(decoder.vocab), max_size=decoder.max_positions, default_max_new_tokens=16 if tiny else
            GENERATION_OUTPUT,
            description=("tiny decoder (2 layers, hidden 64) text generation: for tests" if tiny else
                         f"{model} shape (random weights) text generation, grouped-query attention, KV cache")))


_register_shipped()
