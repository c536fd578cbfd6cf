//! Shared by the fuzz targets: exercise every read path of an archive. Any error is
//! fine; a panic, a hang or wrong bytes returned without an error is a finding.

use barecat::glob::GlobOptions;
use barecat::{Archive, Order};

pub fn exercise(path: &std::path::Path) {
    let Ok(a) = Archive::open(path) else { return };
    let _ = a.root();
    let _ = a.count_files();
    for order in [Order::Path, Order::Address] {
        for f in a.files(order, "").take(200) {
            let Ok(f) = f else { break };
            if let Ok(data) = a.read_file(&f) {
                assert_eq!(data.len() as u64, f.size, "short read returned as success");
                if let Some(crc) = f.crc32c {
                    assert_eq!(barecat::crc::crc32c(&data), crc, "wrong bytes without error");
                }
            }
            let _ = a.read_range(&f, 1, 10);
            let _ = a.map_verified(&f);
            let _ = a.stat(&f.path);
        }
    }
    for w in a.walk("").take(100) {
        if w.is_err() {
            break;
        }
    }
    let _ = a.glob("**/*", GlobOptions { recursive: true, include_hidden: true });
    let _ = a.dirs("");
    let _ = a.with_index(|i| i.stats_mismatches());
    let _ = a.with_index(|i| i.shard_usage());
}
