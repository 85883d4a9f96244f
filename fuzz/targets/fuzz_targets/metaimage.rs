//! libFuzzer target: `scripts/fuzz.sh metaimage` (see docs/reliability.md); what it does is `cliper_fuzz::metaimage`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::metaimage(data);
});
