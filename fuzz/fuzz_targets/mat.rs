//! libFuzzer target: `cargo +nightly fuzz run mat` (see docs/reliability.md); what it does is harness::mat.
#![no_main]

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::mat(data);
});
