# mpmd: `make test` and `make demo` install what is missing, build, then test
# or demo. Everything is idempotent; a second run with nothing changed only
# re-runs the tests.
BUILD_DIR ?= build
VENV := .venv
PY := $(CURDIR)/$(VENV)/bin/python
JOBS ?= $(shell nproc)
export PYTHONPATH := $(CURDIR)/$(BUILD_DIR)/python_packages:$(PYTHONPATH)
export XLA_FLAGS ?= --xla_force_host_platform_device_count=8

.PHONY: all setup configure build test test-lit test-unit test-python demo clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt | setup
	cmake -S . -B $(BUILD_DIR) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DPython3_EXECUTABLE=$(PY) \
	  -DPython_EXECUTABLE=$(PY)

configure: setup $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)
	@# The venv imports mpmd from the build tree without PYTHONPATH.
	@$(PY) scripts/link_build_tree.py $(CURDIR)/$(BUILD_DIR)/python_packages

test-lit: build
	$(VENV)/bin/lit -sv $(BUILD_DIR)/test

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure

test-python: build
	$(PY) -m pytest -q python/tests

test: build
	@scripts/run_tests.sh $(BUILD_DIR)

demo: build
	$(PY) examples/demo.py

clean:
	rm -rf $(BUILD_DIR)
