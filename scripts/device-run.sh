#!/usr/bin/env bash
# Runs on the lent NVIDIA machine (see ../shared/device/README.md): sets up OpenCL, runs the test binaries on the
# GPU, the demo, the benchmark sweeps and the peers in one call. Expects the binaries in .device-bin/ (built
# here with `scripts/device-pack.sh`) and the set-up kit in .device-kit/. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
bash .device-kit/setup-opencl.sh > "$OUT/setup.log" 2>&1
tail -5 "$OUT/setup.log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 | tail -2
bin=.device-bin
chmod +x $bin/* .device-kit/peerbench/clblast_bench 2>/dev/null

echo "== devices (no CLIPER_DEVICE: the default choice)"
$bin/cliper devices 2>&1 | tee "$OUT/devices.txt"
export CLIPER_DEVICE=gpu

if [ "${RUN_TESTS:-1}" = 1 ]; then
    echo "== tests on the GPU"
    for t in $bin/test-*; do
        # test-cli starts the CLI from the build path of the machine that built it: the CLI runs below instead
        [ "$(basename "$t")" = test-cli ] && continue
        # tests that start the CLI look for it at the build path of the machine that built them; the CLI is
        # exercised above and below instead
        "$t" --test-threads 4 --skip the_cli --skip the_demo --skip bad_cliper_device --skip no_opencl_platform 2>&1 | grep -E "test result|FAILED|panicked" | sed "s|^|$(basename "$t"): |"
    done 2>&1 | tee "$OUT/tests.txt"
fi

if [ "${RUN_DEMO:-1}" = 1 ]; then
    echo "== demo"
    $bin/cliper demo --out "$OUT/demo" > "$OUT/demo.txt" 2>&1; echo "demo exit $?"
    sed -n 1,25p "$OUT/demo.txt"
    echo "== CLI on the GPU"
    {
        $bin/cliper info data/kspace.mat
        $bin/cliper matmul data/matrices.mat:A data/matrices.mat:B "$OUT/c.npy" && $bin/cliper power "$OUT/c.npy" 8 "$OUT/c8.npy"
        $bin/cliper norm "$OUT/c8.npy" --json
        $bin/cliper convolve data/phantom_256.png "$OUT/log.tif" --kernel log:1.5 --output full --profile
        $bin/cliper dot data/kspace.mat:kspace data/kspace.mat:kspace --conj
        mkdir -p "$OUT/batch" && $bin/cliper run pipelines/demo.toml --input image='data/*.tif' --output edges="$OUT/batch/{stem}.png" --output smooth="$OUT/batch/" --output column_energy="$OUT/batch/{stem}_ce.npy"; echo "batch exit $?"
    } > "$OUT/cli.txt" 2>&1
    cat "$OUT/cli.txt"
fi

# BENCH_CASES: a file of cliper-bench argument lines (# comments allowed); default: the transpose case.
echo "== cliper-bench"
if [ -n "${BENCH_CASES:-}" ]; then
    grep -v '^\s*#' "$BENCH_CASES" | grep -v '^\s*$' | while read -r args; do
        echo "-- $args"
        timeout 120 $bin/cliper-bench $args 2>&1 | grep -v '^\[' | grep -v '^device:'
    done 2>&1 | tee "$OUT/bench.txt"
else
    eval "$bin/cliper-bench transpose ${TRANSPOSE_ARGS:---rows 16384 --check}" 2>&1 | tee "$OUT/bench.txt"
fi

if [ "${RUN_PEERS:-1}" = 1 ]; then
    echo "== CLBlast"
    PLATFORM=NVIDIA .device-kit/peerbench/clblast_bench 1 2>&1 | tee "$OUT/clblast.txt"
fi

if [ "${RUN_TORCH:-0}" = 1 ]; then
    echo "== PyTorch / CuPy"
    timeout 300 python3 .device-kit/peerbench/peer_torch.py 2>&1 | tee "$OUT/torch.txt"
fi
