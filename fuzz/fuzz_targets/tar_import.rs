//! Tar import of arbitrary bytes (plain, or compressed: the first bytes decide), into
//! a fresh archive, which must then be consistent. The bytes also go through the
//! tar reader alone, read and skipped (`TarReader::new`) and sought over
//! (`TarReader::new_seekable`): both must see the same members at the same
//! offsets, and a member's content must have the length its record says.
#![no_main]

use std::io::Read;

use barecat::ingest::tar_reader::{Record, TarReader};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// What a record says, for comparing two readers.
fn describe(r: &Record) -> String {
    match r {
        Record::Member(m) => format!(
            "{:?} {:?} {} {} {} {} {:?}",
            m.name, m.kind, m.size, m.header_offset, m.data_offset, m.data_len, m.problem
        ),
        Record::Damaged(d) => format!("damaged {} {}", d.at, d.resumed_at),
    }
}

fn reader_checks(data: &[u8]) {
    let mut plain = TarReader::new(data);
    let mut sought = TarReader::new_seekable(std::io::Cursor::new(data));
    let mut last_end = 0u64;
    for _ in 0..10_000 {
        let (a, b) = (plain.next(), sought.next());
        let (Ok(Some(a)), Ok(Some(b))) = (&a, &b) else {
            // A clean end is the same for both.
            assert_eq!(
                matches!(a, Ok(None)),
                matches!(b, Ok(None)),
                "one reader ended cleanly, the other did not"
            );
            return;
        };
        assert_eq!(describe(a), describe(b), "the readers disagree");
        if let Record::Member(m) = a {
            assert!(m.header_offset >= last_end, "members overlap");
            assert!(m.data_offset >= m.header_offset + 512, "data before the header ends");
            assert_eq!(m.data_offset % 512, 0, "data not at a block boundary");
            last_end = m.data_offset + m.data_len;
            if m.size <= 1 << 20 {
                let mut content = Vec::new();
                if plain.content().read_to_end(&mut content).is_ok() {
                    assert_eq!(content.len() as u64, m.size, "content of the wrong length");
                    let mut other = Vec::new();
                    if sought.content().read_to_end(&mut other).is_ok() {
                        assert_eq!(content, other, "the readers read different content");
                    }
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    reader_checks(data);
    let dir = tempfile::tempdir().unwrap();
    let mut w = common::fresh_writer(dir.path());
    let opts = common::ingest_options();
    let _ = barecat::ingest::import_tar(&mut w, data, "fuzz.tar", &opts, &mut |_| {});
    common::check_imported(dir.path(), w);
});
