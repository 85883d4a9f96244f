//! libFuzzer target: `scripts/fuzz.sh npy` (see docs/reliability.md); what it does is `cliper_fuzz::npy`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::npy(data);
});
