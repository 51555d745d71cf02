# Convenience front end: `make run` and `make test` are the two commands of the README.
# Both install missing Debian packages (scripts/setup.sh), configure and build with CMake.
# SETUP=0 (or SPOTLAB_SKIP_SETUP=1 in the environment) skips the package step: for machines where
# the packages come another way (no apt, no root), see README.md "Set-up".
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=
SCENARIO ?= scenarios/default.cfg
OUT ?= results/default.h5
PREFIX ?= /usr/local
SETUP ?= 1
ifeq ($(SETUP),0)
export SPOTLAB_SKIP_SETUP = 1
endif

.PHONY: all setup configure build run test bench asan fuzz format clean install

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: setup configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p $(dir $(OUT))
	$(BUILD)/spotlab run $(SCENARIO) --out $(OUT)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# bin/spotlab, share/spotlab/data, share/spotlab/scenarios and the Python package under PREFIX
# (cmake/install.cmake); the binary is built for that prefix, and also finds its data after a move.
install: setup configure
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(abspath $(PREFIX))
	cmake --build $(BUILD) -j $(JOBS)
	cmake --install $(BUILD)

bench: build
	$(BUILD)/spotlab bench phold --repeat 3
	$(BUILD)/spotlab bench sched
	$(BUILD)/spotlab bench market
	$(BUILD)/spotlab bench kernels --cpu

# The whole suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build folder.
asan: setup
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSPOTLAB_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

# Fuzz targets (libFuzzer; docs/fuzzing.md): built with clang in build-fuzz, every target run
# FUZZ_SECONDS from seed corpora of the repository's own files. Fails on a crash in spotlab's code.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz:
	@FUZZ=1 bash scripts/setup.sh
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DSPOTLAB_FUZZ=ON -DSPOTLAB_CUDA=OFF
	cmake --build build-fuzz -j $(JOBS) --target spotlab fuzz_scenario fuzz_labjobs fuzz_traces fuzz_results fuzz_report
	bash fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Formats every C file as .clang-format says (clang-format 14; the `format` test checks it).
# CUDA files are not formatted: clang-format 14 splits kernel launches.
format:
	find sim app models analysis lab kernels fuzz tests -name '*.[ch]' | xargs $$(command -v clang-format-14 || echo clang-format) -i

clean:
	rm -rf $(BUILD) build-asan build-fuzz
