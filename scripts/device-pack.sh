#!/usr/bin/env bash
# Builds the release binaries and test executables and copies them into .device-bin/ for scripts/device-run.sh.
set -euo pipefail
cargo build --release --workspace --bins
rm -rf .device-bin && mkdir -p .device-bin
cp target/release/cliper target/release/cliper-bench .device-bin/
cargo test --release --workspace --all-features --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        shutil.copy(m["executable"], os.path.join(".device-bin", "test-" + m["target"]["name"]))
'
strip .device-bin/* 2>/dev/null || true
du -sh .device-bin
