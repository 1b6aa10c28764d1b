PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: browser demo test check typecheck screenshots rules-doc clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/okstra-tui --demo --all

# The browser tests drive Debian's Chromium (never a downloaded browser build): installed here when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || { \
	  if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && apt-get install -y -qq chromium; \
	  else \
	    echo "make test needs Chromium for the browser tests; install it first: sudo apt-get install -y chromium"; \
	    exit 1; \
	  fi; }

# The tests run in one worker process per core and one more (pytest-xdist): many of them wait on a child process,
# a browser or a watcher, and the extra worker uses those waits. `$(BIN)/python -m pytest` runs them in one.
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)' 2>/dev/null || echo auto)
test: $(STAMP) browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

# Every tool runs even when an earlier one fails, so one run lists every problem.
check: $(STAMP)
	@status=0; \
	echo "ruff format --check"; $(BIN)/ruff format --check . || status=1; \
	echo "ruff check"; $(BIN)/ruff check . || status=1; \
	echo "mypy (strict; packages from pyproject.toml)"; $(BIN)/python -m mypy || status=1; \
	echo "lint-imports"; $(BIN)/lint-imports || status=1; \
	echo "function length"; $(BIN)/python tools/function_length.py || status=1; \
	echo "path literals"; $(BIN)/python tools/path_literals.py || status=1; \
	exit $$status

typecheck: $(STAMP)
	$(BIN)/python -m mypy

screenshots: $(STAMP)
	$(BIN)/python -m okstra_tui.screenshots screenshots
	OKSTRA_WRITE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/browser/test_serve_browser.py -k in_the_browser

rules-doc: $(STAMP)
	$(BIN)/okstra check --list-rules --format markdown > docs/rules.md

clean:
	rm -rf $(VENV) build dist
