//! Shared by the fuzz targets: exercise every read path of an archive. Any error is
//! fine; a panic, a hang or wrong bytes returned without an error is a finding.
#![allow(dead_code)]

use barecat::core::archive::WalkOptions;
use barecat::core::glob::GlobOptions;
use barecat::{Archive, FileOrder};

pub fn exercise(path: &std::path::Path) {
    let Ok(a) = Archive::open(path) else { return };
    let _ = a.root();
    let _ = a.count_files();
    for order in [FileOrder::Path, FileOrder::Address] {
        for f in a.files(order, "").take(200) {
            let Ok(f) = f else { break };
            if let Ok(data) = a.read_file(&f) {
                assert_eq!(data.len() as u64, f.size, "short read returned as success");
                if let Some(crc) = f.crc32c {
                    assert_eq!(
                        barecat::core::crc::crc32c(&data),
                        crc,
                        "wrong bytes without error"
                    );
                }
            }
            let _ = a.read_range(&f, 1, 10);
            let _ = a.map_verified(&f);
            let _ = a.stat(&f.path);
        }
    }
    if let Ok(walk) = a.walk("", WalkOptions::default()) {
        for w in walk.take(100) {
            if w.is_err() {
                break;
            }
        }
    }
    let _ = a.glob(
        "**/*",
        GlobOptions {
            recursive: true,
            include_hidden: true,
        },
    );
    let _ = a.dirs("");
    let _ = a.with_index(|i| i.stats_mismatches());
    let _ = a.with_index(|i| i.shard_usage());
    commands(path, &a);
}

/// What the commands run on top of the library: verify, extract, to-zip, to-tar,
/// du, ncdu and csv. Whatever extract writes must match its row's CRC.
fn commands(path: &std::path::Path, a: &Archive) {
    use barecat::core::progress::Progress;
    use barecat::export::{self, ExportFormat, ExportOptions, ExtractOptions, Selection};
    let hidden = Progress::hidden();
    let opts = barecat::maint::verify::VerifyOptions {
        quick: false,
        workers: 1,
        index_mode: Default::default(),
    };
    let _ = barecat::maint::verify::verify(path, &opts, &hidden);
    let report = |_: &barecat::Error| {};
    let dest = tempfile::tempdir().unwrap();
    let xo = ExtractOptions {
        workers: 1,
        ..Default::default()
    };
    if export::extract(a, &Selection::all(), dest.path(), &xo, &hidden, &report).is_ok() {
        for f in a.files(FileOrder::Path, "").take(200) {
            let Ok(f) = f else { break };
            let Ok(data) = std::fs::read(dest.path().join(&f.path)) else {
                continue;
            };
            if let Some(crc) = f.crc32c {
                assert_eq!(
                    barecat::core::crc::crc32c(&data),
                    crc,
                    "extract wrote wrong bytes"
                );
            }
        }
    }
    for format in [
        ExportFormat::Zip { deflate: None },
        ExportFormat::Tar {
            compression: Default::default(),
            level: None,
        },
    ] {
        let eo = ExportOptions {
            format,
            workers: 1,
            root_dir: None,
        };
        let _ = export::export(a, &Selection::all(), std::io::sink(), &eo, &hidden, &report);
    }
    let du = barecat::maint::du::DuOptions {
        all: true,
        ..Default::default()
    };
    let _ = barecat::maint::du::du(a, "", &du, &mut std::io::sink());
    let _ = barecat::maint::ncdu::write_ncdu(a, &mut std::io::sink());
    let _ = barecat::maint::csv::write_csv(a, &mut std::io::sink());
}

/// After an import that may have failed part way: the archive holds only what was
/// committed, and that must be a consistent archive. Every stored path is safe,
/// every file reads back with its CRC, and the directory statistics add up.
pub fn check_imported(dir: &std::path::Path, w: barecat::ArchiveWriter) {
    if w.finish().is_err() {
        return;
    }
    let a = Archive::open(dir.join("out.barecat")).expect("imported archive opens");
    for f in a.files(FileOrder::Address, "") {
        let f = f.expect("imported rows iterate");
        assert!(
            barecat::core::path::is_safe_stored(&f.path),
            "unsafe path stored: {:?}",
            f.path
        );
        let data = a.read_file(&f).expect("imported file reads back");
        assert_eq!(data.len() as u64, f.size);
    }
    for d in a.dirs("").expect("imported dirs list") {
        assert!(
            barecat::core::path::is_safe_stored(&d.path) || d.path.is_empty(),
            "unsafe dir: {:?}",
            d.path
        );
    }
    let bad = a
        .with_index(|i| i.stats_mismatches())
        .expect("statistics computed");
    assert!(bad.is_empty(), "statistics wrong after import: {bad:?}");
}

/// A writer on a fresh empty archive `out.barecat` in `dir`: a copy of one made once
/// (creating the schema costs more than most imports).
pub fn fresh_writer(dir: &std::path::Path) -> barecat::ArchiveWriter {
    static EMPTY: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let empty = EMPTY.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let w =
            barecat::ArchiveWriter::open(d.path().join("out.barecat"), Default::default()).unwrap();
        w.finish().unwrap();
        d
    });
    for entry in std::fs::read_dir(empty.path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let opts = barecat::WriterOptions::with_mode(barecat::CreateMode::Append);
    barecat::ArchiveWriter::open(dir.join("out.barecat"), opts).unwrap()
}

pub fn ingest_options() -> barecat::ingest::IngestOptions {
    barecat::ingest::IngestOptions {
        workers: 2,
        buffer_size: 256 << 10,
        ..Default::default()
    }
}
