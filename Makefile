# Quick start: `make demo` runs the offline demo, `make test` runs the checks.
# Both create .venv on first use; only Python 3.11+ and make are needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench bench-smoke bench-peers clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "handoffs needs Python 3.11+, found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/handoffs demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy --strict src

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python bench/ours.py
	$(BIN)/python bench/telemetry.py

# Ours only, a few reps, results in a temp dir; exits non-zero if any check fails (CI).
bench-smoke: $(STAMP)
	$(BIN)/python bench/compare.py --smoke

# Everyone side by side: pinned peer venvs and a plot venv under .bench-venvs/, then one
# interleaved run writing bench/results/<date>.json, docs/benchmarks.md and docs/img/bench_*.png.
bench-peers: $(STAMP)
	bash bench/peers/install.sh
	test -x .bench-venvs/plot/bin/python || $(PYTHON) -m venv .bench-venvs/plot
	cmp -s bench/requirements-plot.txt .bench-venvs/plot/.bench-stamp || \
	  { .bench-venvs/plot/bin/python -m pip install --quiet --disable-pip-version-check \
	      -r bench/requirements-plot.txt && \
	    cp bench/requirements-plot.txt .bench-venvs/plot/.bench-stamp; }
	$(BIN)/python bench/compare.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
