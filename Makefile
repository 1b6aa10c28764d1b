PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test typecheck screenshots rules-doc clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/okstra-tui --demo

test: $(STAMP)
	$(BIN)/python -m pytest

typecheck: $(STAMP)
	$(BIN)/python -m mypy okstra_core

screenshots: $(STAMP)
	$(BIN)/python -m okstra_tui.screenshots screenshots

rules-doc: $(STAMP)
	$(BIN)/okstra check --list-rules --format markdown > docs/rules.md

clean:
	rm -rf $(VENV) build dist
