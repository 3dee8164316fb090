# dc_toolkit: the two commands of the README, and a few more.
#   make demo    install what is missing, build, run the main job on real data
#   make check   install what is missing, build, run every test (and the unit
#                tests again under AddressSanitizer + UBSan, and in a clang build
#                without MPI and the web UI)
#   make check-quick  the same, less the interop cases labelled slow (ctest -LE slow)
#   make bench   the benchmarks in bench/, figures side by side
#   make fuzz    build the libFuzzer targets (clang) and run each FUZZ_SECONDS
#   make install PREFIX=/usr/local DESTDIR=
#   make check-fresh  the README's commands and the Dockerfile in a new minimal
#                Debian 12 chroot (minutes; needs root and the network)

BUILD  ?= build
ASAN   ?= build-asan
CLANG  ?= build-clang
PREFIX ?= /usr/local
JOBS   ?= $(shell nproc)
NCARG  ?= /usr/share/ncarg/data
DEMO_FILE ?= $(NCARG)/nug/rectilinear_grid_3D.nc
DEMO_OUT  ?= demo-out
# every field within 1e-4 relative L1 error; a small sample keeps the demo to minutes. The
# 24 KiB inner chunks (32 latitude rows of one level) make the field many chunks, as a large
# field is; the sampler's smallest sample is then 3 of the 17 levels, each as its north, middle
# and south tiles (216 KiB), which the limit holds
DEMO_ARGS ?= --override-existing-l1-error 1e-4 --eval-data-size-limit 256KB --inner-chunk-mib 0.0234375
# every test's timeout times this (a machine busy with other work runs the cases several times slower)
TIMEOUT_SCALE ?= 1
FUZZ          ?= build-fuzz
FUZZ_SECONDS  ?= 600
FUZZ_PARALLEL ?= 1

.PHONY: all deps test-deps fuzz-deps build build-tests demo check check-quick test asan configs bench fuzz install clean check-fresh

all: build

deps:
	@sh scripts/install-deps.sh

test-deps:
	@sh scripts/install-deps.sh --test

# Configured first with the tests off, so that build, demo and install need only
# the build dependencies (the tests' configuration looks for node and the other
# test tools); test and bench turn them on, which also finds tools installed since.
$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DDCTK_TESTS=OFF

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

build-tests: deps $(BUILD)/CMakeCache.txt
	cmake -S . -B $(BUILD) -DDCTK_TESTS=ON -DDCTK_TEST_TIMEOUT_SCALE=$(TIMEOUT_SCALE)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@sh scripts/demo.sh $(BUILD)/dc_toolkit $(DEMO_FILE) $(DEMO_OUT) $(DEMO_ARGS)

test: build-tests
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

$(ASAN)/CMakeCache.txt:
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DDCTK_SANITIZE=ON

asan: deps $(ASAN)/CMakeCache.txt
	cmake -S . -B $(ASAN) -DDCTK_TEST_TIMEOUT_SCALE=$(TIMEOUT_SCALE)
	cmake --build $(ASAN) -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest -L 'unit|asan' --output-on-failure -j $(JOBS)

# The other compiler and the optional parts left out: what builds with gcc and MPI alone
# must build (warnings as errors) and pass its unit tests with clang and neither.
$(CLANG)/CMakeCache.txt:
	CC=clang cmake -S . -B $(CLANG) -DCMAKE_BUILD_TYPE=Debug -DDCTK_MPI=OFF -DDCTK_WEB=OFF

configs: deps $(CLANG)/CMakeCache.txt
	cmake -S . -B $(CLANG) -DDCTK_TEST_TIMEOUT_SCALE=$(TIMEOUT_SCALE)
	cmake --build $(CLANG) -j $(JOBS)
	cd $(CLANG) && ctest -L unit --output-on-failure -j $(JOBS)

check: test-deps
	$(MAKE) test
	$(MAKE) asan
	$(MAKE) configs

check-quick: test-deps
	$(MAKE) test CTEST_ARGS="-LE slow"
	$(MAKE) asan
	$(MAKE) configs

fuzz-deps:
	@sh scripts/install-deps.sh --fuzz

fuzz: fuzz-deps
	sh scripts/fuzz.sh $(FUZZ) $(FUZZ_SECONDS) $(FUZZ_PARALLEL)

bench: test-deps build-tests
	@sh bench/run.sh $(BUILD)

check-fresh:
	@sh scripts/check-fresh.sh

install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN) $(CLANG) $(FUZZ) $(DEMO_OUT)
