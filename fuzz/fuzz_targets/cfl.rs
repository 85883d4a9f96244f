//! libFuzzer target: `cargo +nightly fuzz run cfl` (see docs/reliability.md); what it does is harness::cfl.
#![no_main]

#[allow(dead_code)]
#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::cfl(data);
});
