# Two entry points, each doing all of the set-up on a fresh machine:
#   make app    create .venv, install, start the app (`hsc app`) on a bundled sample repository
#   make test   create .venv, install, lint and run the whole test suite
#   make docs        build the documentation site (docs/, mkdocs.yml) into site/ with --strict (CI runs it)
#   make figures     rerun the commands of the documentation's benchmark tables (docs/figures.md)
#   make readme      rerun the command-line transcripts of the README and docs/ and write what they print
#   make screenshots the browser tests' screenshots into docs/screenshots (the docs show them)
#   make extras also install the optional integrations (every extra in pyproject.toml) into .venv
#   make dist   the wheel and the sdist into dist/
#   make test-install  build them, install the lean core into a fresh venv, index and query (CI runs it)
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
SAMPLE ?= hsc/samples/inventory_py
PORT ?= 8501

.PHONY: app test test-install lint bench extras dist readme screenshots docs figures

$(BIN)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade --quiet pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

$(BIN)/.extras: $(BIN)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	touch $@

extras: $(BIN)/.extras

app: $(BIN)/.installed
	$(BIN)/hsc app $(SAMPLE) --port $(PORT)

lint: $(BIN)/.installed
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest -q

test-install: $(BIN)/.installed
	$(BIN)/python -m pytest -q -s -m install

bench: $(BIN)/.installed
	$(BIN)/python -m hsc bench perf

readme: $(BIN)/.installed
	$(BIN)/python tests/readme_transcripts.py --write

# The parameter and command-line pages are written from the code while the site builds (hsc/reference.py).
docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

figures: $(BIN)/.installed
	$(BIN)/python tests/doc_figures.py --run

screenshots: $(BIN)/.installed
	HSC_ARTIFACTS=docs/screenshots HSC_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q tests/test_browser.py tests/test_browser_teaching.py

dist: $(BIN)/.installed
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
