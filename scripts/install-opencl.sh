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

echo "install-opencl: no OpenCL platform found; installing ocl-icd-libopencl1 and pocl-opencl-icd" >&2
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-opencl: apt-get not found. Install an OpenCL ICD loader and a driver by hand:" >&2
    echo "  the GPU vendor's OpenCL driver, or PoCL (https://portablecl.org) for the CPU." >&2
    exit 1
fi
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends ocl-icd-libopencl1 pocl-opencl-icd

if ! (have_loader && have_vendor); then
    echo "install-opencl: packages installed, but still no OpenCL platform is visible" >&2
    exit 1
fi
