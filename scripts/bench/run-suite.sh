#!/usr/bin/env bash
# Runs the benchmark suite and the peers for this device in one go, then the report:
#   scripts/bench/run-suite.sh PREFIX [auto|gpu|cpu]
# writes PREFIX.json (cliper-bench suite), PREFIX-suite.txt (its table), PREFIX-peers.txt (the peers' raw output,
# same call), PREFIX.md (the report table) and PREFIX-plots/*.svg.
#   gpu: full sizes; CLBlast on the NVIDIA platform, cuBLAS/cuDNN/CuPy through peer_torch.py and
#        scripts/bench/peer_filterbank.py.
#   cpu: `--quick` sizes; CLBlast on PoCL (platform "Portable") through scripts/bench/clblast_quick.c (built here
#        when libclblast.so.1 and the OpenCL headers are installed), numpy/scipy through scripts/bench/peer_numpy.py.
#   auto (the default): gpu when the device cliper picks (CLIPER_DEVICE honoured) is a GPU, else cpu.
# SUITE_ARGS adds arguments to the suite (e.g. `--only fft,recon`); PEERS picks the GPU peers (default
# "clblast torch gemm filterbank ndimage fft").
# BENCH (default target/release/cliper-bench) and PEERBENCH (default .device-kit/peerbench, else
# ../shared/peerbench) say where the programs are; PYTHON (default python3) runs the CPU peers, which need numpy
# and scipy (`make bench` passes the project's .venv). Nothing else should run on the machine meanwhile.
set -uo pipefail
prefix=${1:?usage: run-suite.sh PREFIX [auto|gpu|cpu]}
mode=${2:-auto}
bench=${BENCH:-target/release/cliper-bench}
python=${PYTHON:-python3}
if [ "$mode" = auto ]; then
    kind=$("$(dirname "$bench")/cliper" devices --json | python3 -c \
        'import json, sys; print(next((d["kind"] for d in json.load(sys.stdin)["devices"] if d["default"]), "CPU"))')
    mode=$([ "$kind" = GPU ] && echo gpu || echo cpu)
    echo "device kind $kind: $mode mode"
fi
peerbench=${PEERBENCH:-}
if [ -z "$peerbench" ]; then
    for d in .device-kit/peerbench ../shared/peerbench; do [ -d "$d" ] && peerbench=$d && break; done
fi
mkdir -p "$(dirname "$prefix")"
peers="$prefix-peers.txt"
: > "$peers"

if [ "$mode" = gpu ]; then
    # shellcheck disable=SC2086
    "$bench" suite ${SUITE_ARGS:-} --json "$prefix.json" 2>&1 | tee "$prefix-suite.txt"
    suite_rc=${PIPESTATUS[0]}
    wanted=" ${PEERS:-clblast torch gemm filterbank ndimage fft} "
    if [[ $wanted == *" clblast "* ]] && [ -n "$peerbench" ] && [ -x "$peerbench/clblast_bench" ]; then
        PLATFORM=NVIDIA "$peerbench/clblast_bench" 1 2>&1 | tee -a "$peers"
    fi
    if [[ $wanted == *" torch "* ]] && [ -n "$peerbench" ]; then
        timeout 400 python3 "$peerbench/peer_torch.py" 2>&1 | tee -a "$peers"
    fi
    if [[ $wanted == *" gemm "* ]]; then
        timeout 200 python3 scripts/bench/peer_gemm.py 2>&1 | tee -a "$peers"
    fi
    if [[ $wanted == *" filterbank "* ]]; then
        timeout 120 python3 scripts/bench/peer_filterbank.py 2>&1 | tee -a "$peers"
    fi
    if [[ $wanted == *" ndimage "* ]]; then
        timeout 600 python3 scripts/bench/peer_ndimage.py gpu 2>&1 | tee -a "$peers"
    fi
    if [[ $wanted == *" fft "* ]] && [ -n "$peerbench" ]; then
        timeout 200 python3 "$peerbench/peer_fft.py" 2>&1 | tee -a "$peers"
    fi
else
    # shellcheck disable=SC2086
    "$bench" suite --quick ${SUITE_ARGS:-} --json "$prefix.json" 2>&1 | tee "$prefix-suite.txt"
    suite_rc=${PIPESTATUS[0]}
    # The kit's clblast_bench times 4096³ products, which take CLBlast a quarter of an hour on two cores.
    mkdir -p target
    if cc -O2 scripts/bench/clblast_quick.c -o target/clblast_quick -l:libclblast.so.1 -l:libOpenCL.so.1 2>/dev/null; then
        PLATFORM=Portable timeout 900 target/clblast_quick 2>&1 | tee -a "$peers"
    else
        echo "CLBlast comparison skipped: install libclblast1 and opencl-c-headers to include it" | tee -a "$peers"
    fi
    "$python" scripts/bench/peer_numpy.py 2>&1 | tee -a "$peers"
    "$python" scripts/bench/peer_ndimage.py cpu 2>&1 | tee -a "$peers"
fi
"$bench" report "$prefix.json" --peers "$peers" --markdown "$prefix.md" --plots "$prefix-plots"
exit "$suite_rc"
