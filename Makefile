# Two entry points, each doing all of the set-up on a fresh machine:
#   make app    create .venv, install, start the app on a bundled sample repository
#   make test   create .venv, install, lint and run the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
SAMPLE ?= sample_repos/inventory_py
PORT ?= 8501

.PHONY: app test lint bench

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

app: $(BIN)/.installed
	HSC_APP_REPO=$(SAMPLE) $(BIN)/streamlit run app.py --server.port $(PORT)

lint: $(BIN)/.installed
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest -q

bench: $(BIN)/.installed
	$(BIN)/python -m hsc bench perf
