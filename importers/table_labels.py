"""What a results table's label columns name (for the general reader and the table readers): the device, model,
batch size, precision, engine, mode, load, lengths, status, repeat and tag, by a column's whole name or its last
dotted part (`config.batch_size`), a label's name (`engine_name`), pandas' merge suffixes, a phase's setting
(`infer_batch_size`), a length given in thousands (`context_length_k`) and the names people give the model
(`model_full_name`) and the device (`AMD Graphics Card`). What a figure column measures is `table_fields`'."""

from __future__ import annotations

import re

from importers.table_fields import HEADING_DEVICE, HEADING_TAG, OK_COLUMNS, Field, plain, uncamel

TPU = Field("tpu", None, "label")  # a TPU column's generation ('v6e'): the device, named as Google names it
LABELS: dict[str, Field] = {}
for _names, _field in (
    (("model", "model_name", "modelo", "modell", "modele", "modello", "llm", "network", "arch", "model_id",
      "model_path", "model_file", "topology_name", "topology", "model_version", "model_tag", "model_label",
      "checkpoint"),
     Field("model", None, "label")),
    (("device", "gpu", "gpu_name", "gpu_model", "gpu_type", "hardware", "accelerator", "dispositivo", "geraet",
      "device_name", "board", "platform", "plataforma", "hw", "hardware_model", "device_model", "board_model",
      "hardware_gpu", "gpu_names", "system", "chip", "soc", HEADING_DEVICE),
     Field("device", None, "label")),
    (("tpu", "tpu_type", "tpu_version", "tpu_generation", "tpu_name"), TPU),  # 'v6e': Google's TPU v6e
    (("batch", "batch_size", "bs", "bsz", "batchsize", "tamano_lote", "tamano_batch", "tamano_de_batch",
      "tamano_del_lote", "lote", "batchgroße", "batchgrosse", "batch_groesse", "taille_batch", "taille_du_lot"),
     Field("batch_size", None, "config")),
    (("precision", "dtype", "data_type", "precisión", "compute_dtype"), Field("precision", None, "label")),
    (("quantization", "quant", "quantisation", "cuantizacion"), Field("quantization", None, "config")),
    (("engine", "backend", "framework", "runtime_engine", "server"), Field("engine", None, "config")),
    (("mode", "phase", "type", "tipo", "kind", "task_type"), Field("mode", None, "label")),
    (("concurrency", "conc", "ccu", "max_concurrency", "num_concurrent", "users", "clients", "num_clients", "n_clients",
      "concurrent_clients", "concurrent_requests", "concurrent_users", "num_users", "n_users", "infstreams",
      "inf_streams", "request_concurrency", "max_request_concurrency", "maximum_request_concurrency"),
     Field("max_concurrency", None, "config")),
    (("request_rate", "rate_rps", "qps_target", "rps"), Field("request_rate_per_s", None, "config")),
    (("prompt_tokens", "input_len", "input_tokens", "prompt_len", "isl", "prompt_length", "prompt_token_count",
      "input_token_count"),
     Field("prompt_tokens_requested", None, "config")),
    (("output_len", "max_new_tokens", "osl", "output_length", "gen_len", "max_tokens", "new_tok", "max_new"),
     Field("output_tokens_requested", None, "config")),
    (("seq_len", "sequence_length", "seqlen", "context", "ctx", "context_tokens", "ctx_tokens", "context_length",
      "context_len",
      "ctx_len", "ctx_size", "n_ctx"), Field("seq_len", None, "config")),
    (("img_size", "image_size", "input_size", "resolution", "img_res", "imgsz"), Field("image_size", None, "config")),
    (("gpu_count", "num_gpus", "n_gpus", "gpus", "gpu_num", "num_gpu", "n_gpu", "ngpus", "gpu_number",
      "number_of_gpus", "tp", "tensor_parallel_size"), Field("gpu_count", None, "config")),
    (("power_mode", "nvpmodel", "power_profile", "power_mode_name", "nvpmodel_mode", "nvpmodel_name"),
     Field("power_mode", None, "config")),  # the setting (a label: '15W', 'MAXN_SUPER'), never a power figure
    (("status", "run_status", "state", "outcome", "execution_status", "exec_status", "result_status", "job_status")
     + OK_COLUMNS, Field("status", None, "label")),
    (("workload", "workload_name", "task_name"), Field("workload", None, "label")),
    (("run", "run_id", "repeat", "iteration", "trial", "rep", "repetition", "run_number", "run_no", "run_num",
      "run_idx", "run_index", "repeat_index", "repeat_idx", "trial_number", "trial_idx", "repetition_number"),
     Field("repeat", None, "label")),
    (("tag", HEADING_TAG), Field("tag", None, "config")),
):
    for _n in _names:
        LABELS[_n] = _field


_LENGTH_ASKED = re.compile(r"(?<=_)(?:output|input)_len$")
_MERGED = re.compile(r"_[xy]$")  # the suffix pandas' merge gives a column both tables had
_NAMED = ("device", "model", "engine", "power_mode", "quantization", "precision")  # `<label>_name` names the label
_PHASE = re.compile(r"^(?:infer|inference|train|training|eval)_(?=(?:batch|img|image)_size$)")


_THOUSANDS = re.compile(r"(?i)(?P<name>.+?)[_\s]*(?:_k|\(k\)|\[k\]|_ktok|\(k tokens\))")
_LENGTHS = ("seq_len", "prompt_tokens_requested", "output_tokens_requested")


def thousands_field(name: str) -> Field | None:
    """The token length a column gives in thousands ('context_length_k': 1, 2, 4 are 1,000, 2,000, 4,000 tokens)."""
    m = _THOUSANDS.fullmatch(name.strip()[:100])
    field = label_field(m.group("name")) if m is not None else None
    return field if field is not None and field.key in _LENGTHS else None


_MODEL_NAMED = re.compile(r"(?:(?:full|display|short|long|hf|base)_)?model_(?:(?:full|display|short|long|hf|repo)_)?"
                          r"(?:name|id)")


# a parent object describing the device (`gpu_info.model`: the GPU's model, never the ML model) or the settings of
# the run (`test_config.output_tokens`: the output length asked for, never a count of what was generated)
_DEVICE_PARENT = re.compile(r"(?:gpu|gpus|device|hardware|accelerator|hw|chip|soc)(?:_info|_spec|_specs|_details)?")
_SETTINGS_PARENT = re.compile(r"(?:[a-z]+_)?(?:config|configuration|settings|params|parameters|args|arguments|options)")
_ASKED = {"output_tokens": "output_tokens_requested", "completion_tokens": "output_tokens_requested",
          "num_output_tokens": "output_tokens_requested", "new_tokens": "output_tokens_requested"}


_CARD = re.compile(r"(?:[a-z]+_)?(?:graphics_card|video_card|gpu_card|graphics_processor)")


def label_field(name: str) -> Field | None:
    """The label a column names, by its whole name or its last dotted part (`config.batch_size`), or a label's name
    (`engine_name`, `board.name`); a leading '_' (`_repeat`) and a merge's '_x' / '_y' are no part of the name."""
    # '# GPUs': the number of GPUs; 'Model †': a footnote's mark, no part of the name
    low = plain(uncamel(name.strip().rstrip(" †‡§*¹²³"))).strip("_").removeprefix("#").strip(" -_")
    if _MERGED.search(low) and _MERGED.sub("", low) in LABELS:  # pandas' merge: 'request_rate_x' beside '_y'
        low = _MERGED.sub("", low)
    parts = low.split(".")
    if len(parts) > 1 and _DEVICE_PARENT.fullmatch(parts[-2]):
        if parts[-1] in ("model", "name", "model_name", "type", "product_name"):
            return LABELS["device"]
        if parts[-1] in ("count", "num", "number") and parts[-2].startswith("gpu"):
            return LABELS["gpu_count"]
    if len(parts) > 1 and _SETTINGS_PARENT.fullmatch(parts[-2]) and parts[-1] in _ASKED:
        return Field(_ASKED[parts[-1]], None, "config")
    parent = parts[-2] if len(parts) > 1 and parts[-1] in ("name", "id", "model", "type", "path", "file") else ""
    stem = low.replace(" ", "_").removesuffix("_name")
    phase = _PHASE.sub("", low.replace(" ", "_"))  # timm's 'infer_batch_size', 'train_img_size': the phase's setting
    lengths = _LENGTH_ASKED.search(low.replace("-", "_").replace(" ", "_"))  # vLLM's '--random-output-len'
    for candidate in (low, parts[-1], low.replace(" ", "_"), parent, phase, lengths.group() if lengths else "",
                      re.sub(r"[\s-]+", "_", low)):  # 'request-rate', 'num-prompts': a CLI flag's name
        if candidate in LABELS:
            return LABELS[candidate]
    if stem != low.replace(" ", "_") and stem in LABELS and LABELS[stem].key in _NAMED:
        return LABELS[stem]
    if _MODEL_NAMED.fullmatch(low.replace(" ", "_")):  # 'model_full_name', 'model_display_name', 'full_model_name'
        return LABELS["model"]
    if _CARD.fullmatch(low.replace(" ", "_")):  # 'AMD Graphics Card', 'Nvidia Graphics Card'
        return LABELS["device"]
    return None
