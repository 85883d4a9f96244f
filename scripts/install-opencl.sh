#!/usr/bin/env bash
# Makes sure an OpenCL platform is available, so `make demo` and `make test` work on a fresh Debian/Ubuntu
# machine. Does nothing when an ICD loader and at least one vendor driver are already installed (a GPU driver
# or PoCL); otherwise installs the ICD loader and PoCL (OpenCL on the CPU) with apt-get.
set -euo pipefail

have_loader() { ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'; }
have_vendor() {
    local dir="${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}"
    [ -d "$dir" ] && compgen -G "$dir/*.icd" >/dev/null
}

if have_loader && have_vendor; then
    exit 0
fi

echo "install-opencl: no OpenCL platform found (an ICD loader and a driver: the GPU vendor's, or PoCL for the CPU)" >&2
. "$(dirname "$0")/apt-install.sh"
apt_install install-opencl ocl-icd-libopencl1 pocl-opencl-icd

if ! (have_loader && have_vendor); then
    echo "install-opencl: packages installed, but still no OpenCL platform is visible" >&2
    exit 1
fi
