#![no_main]
//! An arbitrary URI template with arbitrary variables through expansion and resolution.

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::template(data));
