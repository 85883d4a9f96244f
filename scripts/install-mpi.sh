#!/usr/bin/env bash
# Makes sure what the `mpi` cargo feature builds against is installed: an MPI implementation with its compiler
# wrapper (Open MPI from Debian: `mpicc`, `mpirun`) and libclang, which the `mpi` crate's bindgen needs to read
# <mpi.h>. Does nothing when both are already there; otherwise installs them with apt-get (docs/scaling.md).
# `make test` builds every feature, so it calls this script; the default build needs no MPI.
set -euo pipefail

have_mpi() { command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; }
have_libclang() { ldconfig -p 2>/dev/null | grep -q 'libclang.*\.so'; }

if have_mpi && have_libclang; then
    exit 0
fi

echo "install-mpi: the mpi feature needs an MPI with mpicc and mpirun (Open MPI or MPICH) and libclang" >&2
. "$(dirname "$0")/apt-install.sh"
apt_install install-mpi openmpi-bin libopenmpi-dev libclang-dev

if ! (have_mpi && have_libclang); then
    echo "install-mpi: packages installed, but mpicc, mpirun or libclang is still missing" >&2
    exit 1
fi
