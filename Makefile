# The two commands a newcomer runs on a fresh Debian/Ubuntu machine: `make demo` and `make test`.
# Both first make sure an OpenCL platform exists (scripts/install-opencl.sh installs PoCL when none does).
CARGO ?= cargo

.PHONY: demo test lint opencl mpi cxx hdf5 bench examples python python-test python-scipy-suite

demo: opencl cxx hdf5
	$(CARGO) run --release -p cliper-cli -- demo

# Every package of the workspace (library, CLI, benchmark program, fuzz harness) with every feature: the library's
# `chain` (its doctests run too) and `mpi` (the mpirun test; Open MPI comes from scripts/install-mpi.sh).
# The tests' scratch folders (named by process id, left behind for inspection) go under one fresh folder, removed
# when every step passed: over many runs they had filled /tmp with gigabytes. A failed run keeps it and prints it.
test: opencl mpi cxx hdf5 lint
	tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/cliper-test.XXXXXX") && export TMPDIR="$$tmp" && \
	{ $(CARGO) test --workspace --all-features && $(MAKE) examples && $(MAKE) python-test \
	  || { echo "scratch files kept in $$tmp"; exit 1; }; } && rm -rf "$$tmp"

# Runs every example on small inputs (outputs under target/examples-out), so none of them rots.
EXAMPLES_OUT = target/examples-out
examples: opencl cxx hdf5
	mkdir -p $(EXAMPLES_OUT)
	$(CARGO) run --example transpose
	$(CARGO) run --example convolve_image -- data/phantom_256.png $(EXAMPLES_OUT)
	$(CARGO) run --example mat_pipeline -- data/matrices.mat $(EXAMPLES_OUT)/mat_pipeline.mat
	$(CARGO) run --example cascade -- 300
	$(CARGO) run --example ct_series -- data/ct_series $(EXAMPLES_OUT)/ct_smooth.nii.gz
	$(CARGO) run --example undersampled_recon -- tests/fixtures/bart/phantom8.cfl $(EXAMPLES_OUT)/recon
	$(CARGO) run --example make_sample_data -- $(EXAMPLES_OUT)/data
	@# The committed samples are exactly what the generator writes.
	@for f in $(EXAMPLES_OUT)/data/*; do \
		if [ -d "$$f" ]; then diff -r "$$f" "data/$$(basename "$$f")" || exit 1; \
		else cmp "$$f" "data/$$(basename "$$f")" || exit 1; fi; done
	@echo "examples ran; data/ matches examples/make_sample_data byte for byte"

# Style and lints are part of the tests: CI runs `make test`.
lint: mpi cxx hdf5
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; else echo "rustfmt not installed: skipping the format check"; fi
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy --workspace --all-targets --all-features -- -D warnings; else echo "clippy not installed: skipping lints"; fi
	@# The library as a user's crate and the examples build it (default features): code that only the chain or
	@# MPI reads must not warn there either.
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy -p cliper --lib -- -D warnings; fi
	@# Broken intra-doc links fail too: the API documentation is part of the work.
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace --all-features

# The Python package (python/): built by maturin (the dev profile, sharing target/ with cargo) and installed into
# .venv, which scripts/install-python.sh makes with the reference tools the tests compare with. `pip install
# ./python` builds the same package optimised, for use.
PYTHON = .venv/bin/python
WHEELS = target/wheels
python: opencl cxx hdf5
	./scripts/install-python.sh
	rm -f $(WHEELS)/cliper-*.whl
	$(PYTHON) -m maturin build --quiet -m python/Cargo.toml --profile dev -o $(WHEELS)
	$(PYTHON) -m pip install -q --disable-pip-version-check --force-reinstall --no-deps $(WHEELS)/cliper-*.whl

# The package's tests and docstring examples, then a fixed part of scipy.ndimage's own test suite run with
# cliper's functions in scipy's place (python/tests/scipy_suite/; known failures are strict xfails).
SCIPY_SUITE = PYTHONPATH=python/tests/scipy_suite $(PYTHON) -m pytest -p cliper_scipy -p no:cacheprovider -q --pyargs
python-test: python
	$(PYTHON) -m pytest -q -p no:cacheprovider python/tests --ignore=python/tests/scipy_suite
	$(PYTHON) -m pytest -q -p no:cacheprovider --doctest-modules --pyargs cliper
	$(SCIPY_SUITE) scipy.ndimage --cliper-quick

# The whole of scipy.ndimage's test suite with cliper's functions (about half an hour on 2 CPU cores); the counts
# per function go to out/scipy-suite.json (docs/python.md).
python-scipy-suite: python
	mkdir -p out
	$(SCIPY_SUITE) scipy.ndimage --cliper-report out/scipy-suite.json

opencl:
	./scripts/install-opencl.sh

# What the default `jpeg-ls` feature (DICOM JPEG-LS through CharLS) builds with: cmake, make and a C++ compiler.
cxx:
	./scripts/install-cxx.sh

# What the default `hdf5` feature (ISMRMRD and fastMRI raw data) links: libhdf5 (scripts/install-hdf5.sh).
hdf5:
	./scripts/install-hdf5.sh

# What the `mpi` feature builds against (an MPI with mpicc and mpirun, libclang); the default build needs none.
mpi:
	./scripts/install-mpi.sh

# The benchmark suite on the default device with the peers for that kind of device and the report (tables and
# plots), into out/bench/ (docs/benchmarks.md says how to read it). A GPU gets the full sizes, a CPU --quick.
# The CPU peers (numpy, scipy) run in the project's .venv, which scripts/install-python.sh makes: a fresh machine's
# python3 has neither, and the report then had no peers to compare with.
bench: opencl cxx hdf5
	./scripts/install-python.sh
	$(CARGO) build --release -p cliper-bench -p cliper-cli
	PYTHON=$(CURDIR)/$(PYTHON) ./scripts/bench/run-suite.sh out/bench/$$(date +%F) auto
