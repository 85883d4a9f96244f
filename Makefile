# The two commands a newcomer runs on a fresh Debian/Ubuntu machine: `make demo` and `make test`.
# Both first make sure an OpenCL platform exists (scripts/install-opencl.sh installs PoCL when none does).
CARGO ?= cargo

.PHONY: demo test lint opencl mpi cxx bench examples

demo: opencl cxx
	$(CARGO) run --release -p cliper-cli -- demo

# Every package of the workspace (library, CLI, benchmark program, fuzz harness) with every feature: the library's
# `chain` (its doctests run too) and `mpi` (the mpirun test; Open MPI comes from scripts/install-mpi.sh).
test: opencl mpi cxx lint
	$(CARGO) test --workspace --all-features
	$(MAKE) examples

# Runs every example on small inputs (outputs under target/examples-out), so none of them rots.
EXAMPLES_OUT = target/examples-out
examples: opencl cxx
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
lint: mpi cxx
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; else echo "rustfmt not installed: skipping the format check"; fi
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy --workspace --all-targets --all-features -- -D warnings; else echo "clippy not installed: skipping lints"; fi
	@# Broken intra-doc links fail too: the API documentation is part of the work.
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace --all-features

opencl:
	./scripts/install-opencl.sh

# What the default `jpeg-ls` feature (DICOM JPEG-LS through CharLS) builds with: cmake, make and a C++ compiler.
cxx:
	./scripts/install-cxx.sh

# What the `mpi` feature builds against (an MPI with mpicc and mpirun, libclang); the default build needs none.
mpi:
	./scripts/install-mpi.sh

# The benchmark suite on the default device with the peers for that kind of device and the report (tables and
# plots), into out/bench/ (docs/benchmarks.md says how to read it). A GPU gets the full sizes, a CPU --quick.
bench: opencl cxx
	$(CARGO) build --release -p cliper-bench -p cliper-cli
	./scripts/bench/run-suite.sh out/bench/$$(date +%F) auto
