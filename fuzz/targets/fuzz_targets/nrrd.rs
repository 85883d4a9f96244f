//! libFuzzer target: `scripts/fuzz.sh nrrd` (see docs/reliability.md); what it does is `cliper_fuzz::nrrd`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::nrrd(data);
});
