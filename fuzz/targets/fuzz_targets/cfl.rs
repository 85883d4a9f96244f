//! libFuzzer target: `scripts/fuzz.sh cfl` (see docs/reliability.md); what it does is `cliper_fuzz::cfl`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::cfl(data);
});
