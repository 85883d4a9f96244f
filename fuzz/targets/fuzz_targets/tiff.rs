//! libFuzzer target: `scripts/fuzz.sh tiff` (see docs/reliability.md); what it does is `cliper_fuzz::tiff`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::tiff(data);
});
