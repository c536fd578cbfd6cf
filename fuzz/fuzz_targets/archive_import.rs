//! Import of arbitrary bytes as an archive file of whatever format they are told
//! to be by their content (`barecat-from-archive`): tar, zip, and the formats read
//! through libarchive (7z, rar, cpio, ISO 9660, ar, xar, cab, lha, rpm), into a
//! fresh archive, which must then be consistent. The importer's rules (hard links
//! held back, names decoded, data lengths checked) are what is fuzzed here; any
//! error is fine.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input");
    std::fs::write(&input, data).unwrap();
    let _ = barecat::ingest::formats::detect(&input);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut w = common::fresh_writer(&out);
    let mut opts = common::ingest_options();
    opts.name_encoding = barecat::ingest::formats::names::parse_encoding("cp866");
    let _ = barecat::ingest::formats::import_path(&mut w, &input, &opts, &mut |_| {});
    common::check_imported(&out, w);
});
