#!/usr/bin/env bash
# Makes sure what the default `hdf5` cargo feature builds with is installed: libhdf5 and its headers (Debian's
# libhdf5-dev), which the hdf5-metno-sys crate links against to read ISMRMRD and fastMRI raw data. Does nothing
# when pkg-config already finds it; otherwise installs it with apt-get. Every `make` target that compiles the
# library calls it.
set -euo pipefail

have_hdf5() { pkg-config --exists hdf5 2>/dev/null || [ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ]; }

if have_hdf5; then
    exit 0
fi

echo "install-hdf5: MRI raw data (the hdf5 feature) links libhdf5; installing libhdf5-dev" >&2
. "$(dirname "$0")/apt-install.sh"
apt_install install-hdf5 libhdf5-dev pkg-config

if ! have_hdf5; then
    echo "install-hdf5: libhdf5-dev installed, but its headers are still not found" >&2
    exit 1
fi
