//! Raw bytes: the input is split into an index file and one shard file.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let split =
        (u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize).min(data.len() - 4);
    let (index, shard) = data[4..].split_at(split);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.barecat");
    std::fs::write(&p, index).unwrap();
    std::fs::write(dir.path().join("f.barecat-shard-00000"), shard).unwrap();
    common::exercise(&p);
});
