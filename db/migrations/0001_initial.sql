-- JouleBench results store, schema version 1.
-- Units are in column names: _w watts, _j joules, _s seconds, _ms milliseconds, _mb 10^6 bytes,
-- _gb 10^9 bytes, _sps samples per second, _mhz, _gbs GB/s.

CREATE SEQUENCE source_id_seq START 1;

-- Provenance: every file that brought data in (local run, uploaded file, reference CSV).
CREATE TABLE sources (
    source_id           INTEGER PRIMARY KEY DEFAULT nextval('source_id_seq'),
    kind                VARCHAR NOT NULL CHECK (kind IN ('local', 'upload', 'reference')),
    file_name           VARCHAR NOT NULL,
    format              VARCHAR NOT NULL,
    tool                VARCHAR,
    tool_version        VARCHAR,
    content_sha256      VARCHAR NOT NULL UNIQUE,
    imported_at         TIMESTAMPTZ NOT NULL,
    run_count           INTEGER NOT NULL,
    duplicate_run_count INTEGER NOT NULL,
    finding_count       INTEGER NOT NULL
);

-- Device catalog. Prices carry their currency, source and date; user edits persist.
CREATE TABLE devices (
    device_name          VARCHAR PRIMARY KEY,
    kind                 VARCHAR NOT NULL CHECK (kind IN ('gpu', 'jetson', 'cpu')),
    vendor               VARCHAR,
    architecture         VARCHAR,
    memory_gb            DOUBLE,
    memory_type          VARCHAR,
    tdp_w                DOUBLE,
    launch_date          VARCHAR,
    cuda_cores           BIGINT,
    tensor_cores         BIGINT,
    stream_processors    BIGINT,
    memory_bandwidth_gbs DOUBLE,
    cpu_arch             VARCHAR,
    cpu_cores            BIGINT,
    cpu_max_mhz          DOUBLE,
    gpu_max_mhz          DOUBLE,
    memory_max_mhz       DOUBLE,
    storage_interfaces   VARCHAR,
    price_amount         DOUBLE,
    price_currency       VARCHAR,
    price_kind           VARCHAR,
    price_source         VARCHAR,
    price_date           VARCHAR,
    citation             VARCHAR,
    notes                VARCHAR
);

-- Jetson power modes (nvpmodel ids and the paper's custom modes).
CREATE TABLE power_modes (
    device_name     VARCHAR NOT NULL,
    mode_id         VARCHAR NOT NULL,
    mode_name       VARCHAR,
    cpu_cores       BIGINT,
    cpu_max_mhz     DOUBLE,
    gpu_max_mhz     DOUBLE,
    memory_max_mhz  DOUBLE,
    power_budget_w  DOUBLE,
    citation        VARCHAR,
    notes           VARCHAR,
    PRIMARY KEY (device_name, mode_id)
);

-- Software and host a run used; deduplicated by a hash of the content.
CREATE TABLE environments (
    env_id               VARCHAR PRIMARY KEY,
    system_name          VARCHAR,
    framework            VARCHAR,
    driver_version       VARCHAR,
    cuda_version         VARCHAR,
    cudnn_version        VARCHAR,
    torch_version        VARCHAR,
    transformers_version VARCHAR,
    python_version       VARCHAR,
    os                   VARCHAR,
    cpu_model            VARCHAR,
    cpu_count            BIGINT,
    ram_gb               DOUBLE
);

CREATE TABLE runs (
    run_id                 VARCHAR PRIMARY KEY,
    source_id              INTEGER NOT NULL,
    device_name            VARCHAR NOT NULL,
    env_id                 VARCHAR,
    status                 VARCHAR NOT NULL CHECK (status IN ('ok', 'oom', 'failed', 'interrupted')),
    error                  VARCHAR,
    started_at             TIMESTAMPTZ,
    ended_at               TIMESTAMPTZ,
    -- configuration
    workload               VARCHAR NOT NULL,
    model                  VARCHAR,
    task                   VARCHAR,
    mode                   VARCHAR NOT NULL CHECK (mode IN ('train', 'infer', 'idle')),
    precision              VARCHAR CHECK (precision IN ('fp32', 'tf32', 'fp16', 'bf16', 'fp16-weights')),
    tf32_enabled           BOOLEAN,
    batch_size             BIGINT,
    grad_accum_steps       BIGINT,
    seq_len                BIGINT,
    image_size             BIGINT,
    gpu_count              BIGINT,
    power_limit_w          DOUBLE,
    power_mode             VARCHAR,
    compile                BOOLEAN,
    warmup_steps           BIGINT,
    measured_steps         BIGINT,
    repeat_index           BIGINT,
    tag                    VARCHAR,
    -- summary metrics
    examples               BIGINT,
    optimizer_steps        BIGINT,
    duration_s             DOUBLE,
    throughput_sps         DOUBLE,
    iterations_per_s       DOUBLE,
    throughput_derivation  VARCHAR,
    latency_avg_ms         DOUBLE,
    latency_p50_ms         DOUBLE,
    latency_p90_ms         DOUBLE,
    latency_p95_ms         DOUBLE,
    latency_p99_ms         DOUBLE,
    latency_max_ms         DOUBLE,
    weak_scaling           DOUBLE,
    mem_peak_allocated_mb  DOUBLE,
    mem_peak_reserved_mb   DOUBLE,
    mem_peak_rss_mb        DOUBLE,
    mem_used_device_mb     DOUBLE,
    energy_j               DOUBLE CHECK (energy_j > 0),
    energy_missing_reason  VARCHAR,
    energy_boundary        VARCHAR CHECK (energy_boundary IN ('gpu_board', 'jetson_module', 'cpu_package', 'system', 'wall', 'estimated')),
    energy_method          VARCHAR CHECK (energy_method IN ('counter', 'sampled', 'reported', 'estimated')),
    avg_power_w            DOUBLE,
    j_per_sample           DOUBLE CHECK (j_per_sample > 0),
    j_per_iteration        DOUBLE CHECK (j_per_iteration > 0),
    idle_power_w           DOUBLE,
    net_j_per_sample       DOUBLE,
    flags                  VARCHAR[],
    notes                  VARCHAR,
    -- where the run was first recorded (kept across export and re-import)
    origin_kind            VARCHAR NOT NULL,
    origin_file_name       VARCHAR,
    origin_format          VARCHAR,
    origin_tool            VARCHAR,
    origin_tool_version    VARCHAR,
    origin_sha256          VARCHAR,
    origin_imported_at     TIMESTAMPTZ,
    citation               VARCHAR
);

CREATE TABLE power_traces (
    run_id        VARCHAR NOT NULL,
    domain        VARCHAR NOT NULL,
    boundary      VARCHAR,
    method        VARCHAR,
    sample_count  BIGINT NOT NULL,
    PRIMARY KEY (run_id, domain)
);

CREATE TABLE power_samples (
    run_id   VARCHAR NOT NULL,
    domain   VARCHAR NOT NULL,
    t_s      DOUBLE NOT NULL,
    power_w  DOUBLE NOT NULL
);

CREATE TABLE step_times (
    run_id       VARCHAR NOT NULL,
    step_index   BIGINT NOT NULL,
    duration_ms  DOUBLE NOT NULL
);

-- Ratios and percentages a source states (never turned into invented absolute numbers).
CREATE TABLE findings (
    finding_id       VARCHAR PRIMARY KEY,
    source_id        INTEGER NOT NULL,
    metric           VARCHAR NOT NULL,
    relation         VARCHAR NOT NULL CHECK (relation IN ('ratio', 'change_pct', 'scale_factor')),
    value            DOUBLE NOT NULL,
    subject_device   VARCHAR,
    subject_desc     VARCHAR,
    subject_run_id   VARCHAR,
    baseline_device  VARCHAR,
    baseline_desc    VARCHAR,
    baseline_run_id  VARCHAR,
    quote            VARCHAR,
    citation         VARCHAR
);
