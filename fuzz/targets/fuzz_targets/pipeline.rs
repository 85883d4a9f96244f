//! libFuzzer target: `scripts/fuzz.sh pipeline` (see docs/reliability.md); what it does is `cliper_fuzz::pipeline`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::pipeline(data);
});
