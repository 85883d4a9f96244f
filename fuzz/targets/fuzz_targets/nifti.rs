//! libFuzzer target: `scripts/fuzz.sh nifti` (see docs/reliability.md); what it does is `cliper_fuzz::nifti`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::nifti(data);
});
