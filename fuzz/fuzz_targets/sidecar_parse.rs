//! B-tree sidecar bytes, as a reader of a remote index gets them. The input is a
//! mode byte, a 4-byte little-endian index length, a 2-byte length and that many
//! bytes of the index's page 1, then the rest: with an even mode byte the sidecar
//! file as is (header and zstd frame, for the header and decompression checks);
//! with an odd one a decompressed body, which is compressed and wrapped in a v3
//! header first (so that mutations reach the page-table checks instead of dying in
//! zstd). Oracles: no panic, hang or allocation beyond the bound the index length
//! gives; a map that parses holds pages of its page size, finds each of them by
//! number, is fresh against its own page 1, and re-encodes to a sidecar that parses
//! to the same pages.
#![no_main]

use barecat::core::format::sidecar::{encode, max_body_len, parse, FORMAT_VERSION, MAGIC};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 7 {
        return;
    }
    let body_mode = data[0] & 1 == 1;
    // At most 16 MiB of index: the decompression bound stays small.
    let index_len = u32::from_le_bytes([data[1], data[2], data[3], data[4]]) as u64 & 0xff_ffff;
    let p1_len = (u16::from_le_bytes([data[5], data[6]]) as usize).min(data.len() - 7);
    let (page1, rest) = data[7..].split_at(p1_len);
    let wrapped;
    let sidecar = if body_mode {
        let mut w = MAGIC.to_vec();
        w.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        w.extend_from_slice(&zstd::bulk::compress(rest, 1).expect("compresses"));
        wrapped = w;
        &wrapped[..]
    } else {
        rest
    };
    let Ok(map) = parse(sidecar, index_len) else {
        return;
    };
    let _ = map.check_fresh(page1);
    let ps = map.page_size() as usize;
    assert!(map.memory_bytes() as u64 <= max_body_len(index_len) + 8 * map.len() as u64);
    let mut last = 0;
    for (n, page) in map.pages() {
        assert!(n > last, "page numbers not ascending");
        assert_eq!(page.len(), ps);
        assert_eq!(map.get(n), Some(page));
        last = n;
    }
    assert_eq!(map.page_numbers().next(), Some(1));
    map.check_fresh(map.page1())
        .expect("fresh against its own page 1");
    let pages: Vec<(u32, &[u8])> = map.pages().collect();
    let again = encode(map.page_size(), &pages, 1).expect("re-encodes");
    // Pages never overlap, so the canonical body is no larger than the original.
    let back = parse(&again, index_len).expect("the re-encoded sidecar parses");
    assert!(back.pages().eq(map.pages()), "re-encoded pages differ");
});
