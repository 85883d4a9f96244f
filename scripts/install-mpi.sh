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

echo "install-mpi: installing Open MPI (openmpi-bin, libopenmpi-dev) and libclang-dev for the mpi feature" >&2
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-mpi: apt-get not found. Install an MPI (Open MPI or MPICH, with mpicc) and libclang by hand," >&2
    echo "  or build without the mpi feature." >&2
    exit 1
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends openmpi-bin libopenmpi-dev libclang-dev

if ! (have_mpi && have_libclang); then
    echo "install-mpi: packages installed, but mpicc, mpirun or libclang is still missing" >&2
    exit 1
fi
