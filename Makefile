# Two commands for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# pytest workers for the parallel part of make test: three on two cores, since the tests wait on servers, browsers
# and subprocesses (a quiet fresh clone: 594 s with three, about 640 s with two); the slow tier's stress and memory
# checks keep two (passed so in 696 s)
TEST_WORKERS ?= 3
SLOW_WORKERS ?= 2
# torch is pinned and installed before everything else. On PyPI, Linux x86_64 wheels of this
# version are CUDA builds; set TORCH_INDEX_URL to PyTorch's CPU (or a specific CUDA) wheel index
# to choose another build, e.g. `make run TORCH_INDEX_URL=<index>`.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX_URL ?=
STAMP := $(VENV)/.joulebench-installed

.PHONY: setup run test test-slow lint browser postgres clean
# pytest keeps its rewritten test modules as bytecode: where the environment forbids writing bytecode, every test
# process (two workers, the serial and the slow runs) would rewrite all of them again, about 20 s each on 2 cores.
unexport PYTHONDONTWRITEBYTECODE

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL)) "torch==$(TORCH_VERSION)"
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

run: setup
	$(VENV)/bin/joulebench app

# Debian's chromium drives the browser tests (Playwright cannot download its own browser here).
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "browser tests need Chromium: run 'sudo apt-get install chromium'"; exit 1; fi; }

# Debian's PostgreSQL serves the team-store tests (a server per test session, in a temp folder).
postgres:
	@command -v initdb >/dev/null || [ -x /usr/lib/postgresql/15/bin/initdb ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else echo "team-store tests need PostgreSQL: run 'sudo apt-get install postgresql'"; exit 1; fi; }

test: setup browser postgres
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy joulebench energy tuning importers db ingest decision runner explorer cli
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not serial and not slow"
	$(PY) -m pytest -m "serial and not slow"

# The slow tier (tests/conftest.py SLOW says why each is there); CI runs it after `make test`.
test-slow: setup browser postgres
	$(PY) -m pytest -n $(SLOW_WORKERS) --dist loadfile -m "slow and not serial"
	$(PY) -m pytest -m "slow and serial"

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy joulebench energy tuning importers db ingest decision runner explorer cli

clean:
	rm -rf $(VENV) test-output .pytest_cache
