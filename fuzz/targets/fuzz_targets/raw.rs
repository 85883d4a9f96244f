//! libFuzzer target: `scripts/fuzz.sh raw` (see docs/reliability.md); what it does is `cliper_fuzz::raw`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::raw(data);
});
