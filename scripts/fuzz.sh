#!/usr/bin/env bash
# Fuzzes every loader with libFuzzer through cargo fuzz (nightly toolchain; `cargo install cargo-fuzz`), each for
# RUNS executions (default 1,000,000), growing fuzz/corpus/TARGET from fuzz/seeds/TARGET, then minimises each
# corpus (cargo fuzz cmin) so the committed replay (fuzz/tests/replay.rs) stays small. A crash, a hang (over
# TIMEOUT seconds) or an allocation past RSS_MB stops the run with the input under fuzz/targets/artifacts/TARGET/.
# The cargo-fuzz project is fuzz/targets (its own workspace); what each target does is the harness in fuzz/src.
#   scripts/fuzz.sh                 # every target
#   RUNS=200000 scripts/fuzz.sh png # one target, fewer runs
# Writes each target's libFuzzer log to out/fuzz/TARGET.log; the last `#N DONE` line has the execution count.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-1000000}
TIMEOUT=${TIMEOUT:-10}
RSS_MB=${RSS_MB:-2048}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(png tiff mat cfl npy raw pipeline nifti dicom nrrd metaimage)
mkdir -p out/fuzz
cargo +nightly fuzz build --fuzz-dir fuzz/targets -O
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    start=$(date +%s)
    cargo +nightly fuzz run --fuzz-dir fuzz/targets -O "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -runs="$RUNS" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB" \
        -max_len=65536 -print_final_stats=1 >"out/fuzz/$t.log" 2>&1 ||
        echo "$t: FAILED: $(grep -m1 -E 'panicked at|ERROR:' "out/fuzz/$t.log") (input under fuzz/targets/artifacts/$t)"
    echo "$t: $(grep -E '^#[0-9]+\s+DONE' "out/fuzz/$t.log" | tail -1) in $(( $(date +%s) - start )) s"
    cargo +nightly fuzz cmin --fuzz-dir fuzz/targets -O "$t" "fuzz/corpus/$t" >"out/fuzz/$t.cmin.log" 2>&1
    echo "$t: corpus $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sh "fuzz/corpus/$t" | cut -f1)"
done
