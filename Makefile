# Two entry points, each doing all of the set-up on a fresh machine:
#   make app    create .venv, install, start the app on a bundled sample repository
#   make test   create .venv, install, lint and run the whole test suite
#   make extras also install the optional integrations (pyproject.toml's extras) into .venv
#   make readme      rerun the README's command-line transcripts and write what they print into it
#   make screenshots the browser tests' screenshots into docs/screenshots (the README shows them)
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
SAMPLE ?= sample_repos/inventory_py
PORT ?= 8501

.PHONY: app test lint bench extras readme screenshots

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

# Every requirement of every optional extra, read from pyproject.toml (one list of them).
EXTRAS = $(BIN)/python -c 'import tomllib; extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; print(" ".join(sorted({r for rs in extras.values() for r in rs})))'

$(BIN)/.extras: $(BIN)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet $$($(EXTRAS))
	touch $@

extras: $(BIN)/.extras

app: $(BIN)/.installed
	HSC_APP_REPO=$(SAMPLE) $(BIN)/streamlit run app.py --server.port $(PORT)

lint: $(BIN)/.installed
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest -q

bench: $(BIN)/.installed
	$(BIN)/python -m hsc bench perf

readme: $(BIN)/.installed
	$(BIN)/python tests/readme_transcripts.py --write

screenshots: $(BIN)/.installed
	HSC_ARTIFACTS=docs/screenshots HSC_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q tests/test_browser.py tests/test_browser_teaching.py
