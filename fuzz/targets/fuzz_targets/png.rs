//! libFuzzer target: `scripts/fuzz.sh png` (see docs/reliability.md); what it does is `cliper_fuzz::png`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::png(data);
});
