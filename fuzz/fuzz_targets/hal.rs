#![no_main]
//! Arbitrary bytes as a response body through the HAL parser and the relation index.

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::hal(data));
