//! libFuzzer target: `scripts/fuzz.sh dicom` (see docs/reliability.md); what it does is `cliper_fuzz::dicom`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    cliper_fuzz::dicom(data);
});
