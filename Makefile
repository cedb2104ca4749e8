# Quick start: `make demo` runs the offline demo, `make test` runs the checks.
# Both create .venv on first use; only Python 3.11+ and make are needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BASE   := $(VENV)/.installed-base
SERVER := $(VENV)/.installed-server
APT_LOG := .apt.log

.PHONY: demo chat eval web web-screenshots trace-screenshot chromium axe agui-client a2a-v03-client graphviz valgrind fastapi-oldest test lint docs docs-serve dist bench bench-smoke bench-peers bench-traffic bench-cache bench-tokens bench-instructions bench-guard clean

define venv
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "handoffs needs Python 3.11+, found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
endef

# Everything the tests, the linters, the docs and a release need (the `dev` extra).
$(STAMP): pyproject.toml
	$(venv)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The package alone (pydantic is its one dependency): all that demo, chat, run and check
# need. Nothing more is installed when `make test` already installed the dev extra.
$(BASE): pyproject.toml
	$(venv)
	test $(STAMP) -nt pyproject.toml || $(BIN)/python -m pip install --quiet -e .
	touch $(BASE)

# The package with its `server` extra (FastAPI, uvicorn), for `make web`.
$(SERVER): pyproject.toml
	$(venv)
	test $(STAMP) -nt pyproject.toml || $(BIN)/python -m pip install --quiet -e '.[server]'
	touch $(SERVER)

demo: $(BASE)
	$(BIN)/handoffs demo

# Talk to the support team in the terminal (offline unless a model or key is set).
chat: $(BASE)
	$(BIN)/handoffs chat

# How well the support team routes its 47 labelled conversations, offline (exit 1 under
# the threshold); `handoffs eval --help` for a team of yours or a real model.
eval: $(STAMP)
	$(BIN)/handoffs eval --model offline --min-accuracy 0.75

# The web page with the support team on the offline model: http://localhost:8000/ to chat,
# http://localhost:8000/operator (key: demo) to answer as the human operator, and
# http://localhost:8000/inspect (key: demo) to see what each agent's model saw.
web: $(SERVER)
	HANDOFFS_OPERATOR_KEY=$${HANDOFFS_OPERATOR_KEY:-demo} \
	OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=$${OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT:-true} \
	  $(BIN)/handoffs serve --demo --store memory:// --inspect

# $(call apt,PACKAGES,WHY): install Debian packages, saying in one line which and why; apt's
# own output (hundreds of lines for Chromium) goes to $(APT_LOG), shown only if it fails.
define apt
echo "make: installing $(1) from Debian $(2) (apt's output: $(APT_LOG))"; \
{ DEBIAN_FRONTEND=noninteractive apt-get install -y $(1) || \
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(1); }; \
} >>$(APT_LOG) 2>&1 || { tail -n 30 $(APT_LOG); exit 1; }
endef

# The browser tests (tests/web) use Debian's Chromium, never a downloaded browser: installed
# here when missing and we may install packages (root); otherwise those tests skip and say
# why (under CI=true they fail). The emoji font draws the agents' icons.
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  $(call apt,chromium fonts-noto-color-emoji,for the browser tests of the web page); \
	else echo "make: no /usr/bin/chromium and not root: the browser tests will skip"; fi

# The browser tests check every page state they visit with axe-core (accessibility), from
# the npm registry, pinned in tests/web/package-lock.json and installed under
# tests/web/node_modules; without npm those tests skip and say why (under CI=true they fail).
AXE := tests/web/node_modules/axe-core/axe.min.js
axe:
	@if [ -f $(AXE) ]; then :; \
	elif command -v npm >/dev/null; then \
	  echo "make: installing axe-core from the npm registry for the browser tests (tests/web)"; \
	  npm ci --prefix tests/web --no-audit --no-fund --loglevel=error; \
	else echo "make: no npm: the browser tests will skip (they need axe-core)"; fi

# The AG-UI test drives `handoffs serve --agui` from Node with @ag-ui/client, from the npm
# registry, pinned in tests/protocols/node/package-lock.json and installed under its
# node_modules; without npm that test skips and says why (under CI=true it fails).
AGUI_CLIENT := tests/protocols/node/node_modules/@ag-ui/client/package.json
agui-client:
	@if [ -f $(AGUI_CLIENT) ]; then :; \
	elif command -v npm >/dev/null; then \
	  echo "make: installing @ag-ui/client from the npm registry for the AG-UI test (tests/protocols)"; \
	  npm ci --prefix tests/protocols/node --no-audit --no-fund --loglevel=error; \
	else echo "make: no npm: the AG-UI client test will skip (it needs @ag-ui/client)"; fi

# `handoffs graph --format svg` draws with Graphviz's `dot`; its test runs when it is there
# (installed here from Debian when missing and we are root).
graphviz:
	@if command -v dot >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  $(call apt,graphviz,for the SVG graph test); \
	else echo "make: no Graphviz (dot) and not root: the SVG graph test will skip"; fi

# `make bench-instructions` counts CPU instructions under valgrind; its test runs when it is
# there (installed here from Debian when missing and we are root).
valgrind:
	@if command -v valgrind >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  $(call apt,valgrind,for the instruction-count test); \
	else echo "make: no valgrind and not root: the instruction-count test will skip"; fi

# An A2A 0.3 client (the a2a-sdk's 0.3.x line, from PyPI) in a venv of its own: the served
# team answers 0.3 and 1.0 clients alike (tests/protocols/test_a2a_v03.py). Made once;
# that test skips without it, outside CI.
A2A_V03_VENV := .test-venvs/a2a-v0.3
a2a-v03-client:
	@test -f $(A2A_V03_VENV)/.installed || { \
	  $(PYTHON) -m venv $(A2A_V03_VENV) && \
	  $(A2A_V03_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	    'a2a-sdk[http-server]>=0.3,<0.4' && \
	  touch $(A2A_V03_VENV)/.installed; }

# The oldest FastAPI the `server` extra allows (its `fastapi>=` bound), in a venv of its own
# with this checkout, from PyPI: tests/service/test_trace_context.py serves a traced team
# on it (a FastAPI without telemetry of its own). Made once; skipped by that test when
# missing, outside CI.
FASTAPI_OLDEST := $(shell sed -n 's/.*"fastapi>=\([0-9.]*\)".*/\1/p' pyproject.toml | head -1)
OLDEST_VENV := .test-venvs/fastapi-$(FASTAPI_OLDEST)
fastapi-oldest: $(STAMP)
	@test -f $(OLDEST_VENV)/.installed || { \
	  $(PYTHON) -m venv $(OLDEST_VENV) && \
	  $(OLDEST_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e . \
	    'fastapi==$(FASTAPI_OLDEST)' 'uvicorn[standard]>=0.29' 'opentelemetry-sdk>=1.27' && \
	  touch $(OLDEST_VENV)/.installed; }

# docs/img/trace_phoenix.png: one traced turn as Arize Phoenix shows it. Phoenix (pinned in
# docs/_tools/requirements-phoenix.txt, from PyPI) runs offline from a venv of its own;
# Debian's Chromium takes the picture. Not a step of `make test` (Phoenix is large).
trace-screenshot: $(STAMP) chromium
	@cmp -s docs/_tools/requirements-phoenix.txt .test-venvs/phoenix/.installed || { \
	  $(PYTHON) -m venv .test-venvs/phoenix && \
	  .test-venvs/phoenix/bin/python -m pip install --quiet --disable-pip-version-check \
	    -r docs/_tools/requirements-phoenix.txt && \
	  cp docs/_tools/requirements-phoenix.txt .test-venvs/phoenix/.installed; }
	$(BIN)/python docs/_tools/trace_screenshot.py

# The pictures of the page in the README and docs/web.md (docs/img/web_*.png), taken by
# browser tests against `handoffs serve --demo` (the chat, the console, the inspector).
web-screenshots: $(STAMP) chromium axe
	HANDOFFS_WEB_SCREENSHOTS=docs/img $(BIN)/pytest tests/web -k screenshots

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples docs/_tools
	$(BIN)/mypy --strict src

# pytest also builds the site strictly and runs every code block of docs/ (tests/docs).
test: lint chromium axe agui-client a2a-v03-client graphviz valgrind fastapi-oldest
	$(BIN)/pytest

# A release's sdist and wheel in dist/, built as a package index would (an isolated build)
# and checked by twine (the `release` extra, in `dev`); CHANGELOG.md says what changed.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/python -m twine check --strict dist/*

# The documentation site in site/ (mkdocs build --strict; a few seconds).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

bench: $(STAMP)
	$(BIN)/python bench/ours.py
	$(BIN)/python bench/telemetry.py

# Ours only, a few reps, results in a temp dir; exits non-zero if any check fails (CI).
bench-smoke: $(STAMP)
	$(BIN)/python bench/compare.py --smoke

# Everyone side by side: pinned peer venvs, a plot venv, a tokenizer venv and (when a
# python3.12+ is on PATH) ours under that newer CPython, all under .bench-venvs/,
# then one interleaved run writing bench/results/<date>.json (+ traffic-<date>.json),
# docs/benchmarks.md and docs/img/bench_*.png.
# The newest CPython 3.12+ here (on PATH, else under pyenv), for the streamed figure.
NEWER_PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -Vr); do $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; break; }; done)
bench-peers: $(STAMP) bench-tokens
	bash bench/peers/install.sh
	test -x .bench-venvs/plot/bin/python || $(PYTHON) -m venv .bench-venvs/plot
	cmp -s bench/requirements-plot.txt .bench-venvs/plot/.bench-stamp || \
	  { .bench-venvs/plot/bin/python -m pip install --quiet --disable-pip-version-check \
	      -r bench/requirements-plot.txt && \
	    cp bench/requirements-plot.txt .bench-venvs/plot/.bench-stamp; }
	@if [ -n "$(NEWER_PYTHON)" ]; then \
	  test -x .bench-venvs/newer/bin/python || $(NEWER_PYTHON) -m venv .bench-venvs/newer; \
	  .bench-venvs/newer/bin/python -m pip install --quiet --disable-pip-version-check -e .; \
	else echo "make: no CPython 3.12+ found: the streamed figure runs on $(PYTHON) only"; fi
	$(BIN)/python bench/compare.py

# Our hot paths in CPU instructions (valgrind), which machine noise cannot move; compare
# commits with TREES="/tmp/old/src src" (each a tree holding the handoffs package).
TREES ?= src
bench-instructions: $(STAMP) valgrind
	$(BIN)/python bench/instructions.py $(foreach t,$(TREES),--src $(t))

# The speed guard (CI): those counts against the budgets in bench/budgets.json, failing
# when one grows more than 3% and saying which functions grew; `python bench/guard.py
# --update` writes new budgets (docs/benchmarks.md, "The speed guard").
bench-guard: $(STAMP) valgrind
	$(BIN)/python bench/guard.py

# Model traffic only (figure (f)): every framework against one local OpenAI-compatible
# server; prints the tables, writes bench/results/traffic-<date>.json (docs: make bench-peers).
bench-traffic: $(STAMP) bench-tokens
	bash bench/peers/install.sh
	$(BIN)/python bench/traffic/run.py

# Prompt-cache hits and cost of the traffic scenario, the handoff's note in the system text
# (before issue 44) vs in the history (the stable prefix); prints docs/benchmarks.md's table.
bench-cache: $(STAMP)
	$(BIN)/python bench/traffic/cache.py

# tiktoken with an o200k_base file it loads offline (bench/traffic/tokens.py).
bench-tokens:
	test -x .bench-venvs/tokens/bin/python || $(PYTHON) -m venv .bench-venvs/tokens
	cmp -s bench/requirements-tokens.txt .bench-venvs/tokens/.bench-stamp || \
	  { .bench-venvs/tokens/bin/python -m pip install --quiet --disable-pip-version-check \
	      -r bench/requirements-tokens.txt && \
	    cp bench/requirements-tokens.txt .bench-venvs/tokens/.bench-stamp; }

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site dist $(APT_LOG)
