# The two commands a newcomer runs on a fresh Debian/Ubuntu machine: `make demo` and `make test`.
# Both first make sure an OpenCL platform exists (scripts/install-opencl.sh installs PoCL when none does).
CARGO ?= cargo

.PHONY: demo test lint opencl bench

demo: opencl
	$(CARGO) run --release --bin cliper -- demo

test: opencl lint
	$(CARGO) test

# Style and lints are part of the tests: CI runs `make test`.
lint:
	@if $(CARGO) fmt --version >/dev/null 2>&1; then $(CARGO) fmt --all -- --check; else echo "rustfmt not installed: skipping the format check"; fi
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(CARGO) clippy --all-targets -- -D warnings; else echo "clippy not installed: skipping lints"; fi

opencl:
	./scripts/install-opencl.sh

# Times the 16384² transpose on the default device (see docs/benchmarks.md for the peer comparison).
bench: opencl
	$(CARGO) run --release --bin cliper-bench -- transpose --rows 16384 --check
