#!/usr/bin/env bash
# Makes sure the Python package can be built and tested: a virtual environment `.venv` (seeing the system's
# site-packages, so that numpy/scipy already installed are reused) with maturin and the reference tools of
# python/requirements-test.txt. Installs python3 with venv and pip through apt-get when they are missing. Quiet
# and quick when everything is there already.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    . scripts/apt-install.sh
    apt_install install-python python3 python3-venv python3-pip
fi
if [ ! -x .venv/bin/python ]; then
    python3 -m venv --system-site-packages .venv
fi
# pip checks what is installed first: nothing is downloaded when every requirement is met.
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-test.txt
# maturin runs as a program: the venv needs its own, even where the system's site-packages already hold one.
if [ ! -x .venv/bin/maturin ]; then
    .venv/bin/python -m pip install -q --disable-pip-version-check --ignore-installed "maturin>=1.9,<2"
fi
