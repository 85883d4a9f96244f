#!/usr/bin/env bash
# Makes sure what the default `jpeg-ls` cargo feature builds with is installed: cmake and a C++ compiler, which
# the charls-sys crate uses to build CharLS (DICOM JPEG-LS) from its bundled source. Does nothing when both are
# already there; otherwise installs them with apt-get. Every `make` target that compiles the library calls it.
set -euo pipefail

have_cmake() { command -v cmake >/dev/null 2>&1; }
have_cxx() { command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1; }
have_make() { command -v make >/dev/null 2>&1; }

if have_cmake && have_cxx && have_make; then
    exit 0
fi

echo "install-cxx: DICOM JPEG-LS (the jpeg-ls feature) builds CharLS with cmake, make and a C++ compiler" >&2
. "$(dirname "$0")/apt-install.sh"
apt_install install-cxx cmake make g++

if ! (have_cmake && have_cxx && have_make); then
    echo "install-cxx: packages installed, but cmake, make or a C++ compiler is still missing" >&2
    exit 1
fi
