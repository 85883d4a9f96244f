//! libFuzzer target: `cargo +nightly fuzz run tiff` (see docs/reliability.md); what it does is harness::tiff.
#![no_main]

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::tiff(data);
});
