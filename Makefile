# The two commands of the README, each doing its own set-up:
#   make demo   - create .venv if missing, install the project with every extra, run the main job
#   make test   - the same set-up, then the test suite without the `slow` calibration tests
#   make test-slow - only the `slow` tests; .ci/run runs both, so CI runs everything
# and, for development (docs/contributing.md): make test-all, lint, docs, bench.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.belief-coherence-installed

.PHONY: demo test test-slow test-all lint docs bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,test,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/coherence demo $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check coherence coherence_cli bayesnets elicitation tests benchmarks
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/python docs/_check_docs.py tables
	$(BIN)/python -m sphinx -W --keep-going -b html -q docs docs/_build/html
	$(BIN)/python docs/_check_docs.py offline docs/_build/html

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
