//! libFuzzer target: `cargo +nightly fuzz run png` (see docs/reliability.md); what it does is harness::png.
#![no_main]

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::png(data);
});
