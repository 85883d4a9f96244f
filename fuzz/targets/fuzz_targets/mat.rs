//! libFuzzer target: `scripts/fuzz.sh mat` (see docs/reliability.md); what it does is `cliper_fuzz::mat`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::mat(data);
});
