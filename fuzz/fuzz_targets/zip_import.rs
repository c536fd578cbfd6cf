//! Zip import of an arbitrary file into a fresh archive, which must then be
//! consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.zip");
    std::fs::write(&input, data).unwrap();
    let mut w = common::fresh_writer(dir.path());
    let opts = common::ingest_options();
    let _ = barecat::ingest::import_zip(&mut w, &input, &opts, &mut |_| {});
    common::check_imported(dir.path(), w);
});
