//! A hostile record dataset or record table: the input is split into the files of a
//! dataset (`meta.json`, `offset`, `crc`, `chunk/0.zr`, `chunk/1.zr`), each preceded
//! by its length as a little-endian u32, or (first byte odd) into the record table
//! of a small real archive. Every read path is exercised, then a writer opens the
//! dataset (finishing its redo and retire lists) and appends. Any error is fine; a
//! panic, a hang, a crash or wrong bytes returned without an error is a finding.
#![no_main]

use barecat::records::{GatherOptions, RecordWriter, Records};
use libfuzzer_sys::fuzz_target;

fn parts(mut data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    for _ in 0..n {
        if data.len() < 4 {
            out.push(&data[..0]);
            continue;
        }
        let len = (u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize)
            .min(data.len() - 4);
        out.push(&data[4..4 + len]);
        data = &data[4 + len..];
    }
    out
}

fn exercise(path: &std::path::Path) {
    let Ok(r) = Records::open(path) else { return };
    let n = r.len();
    let probe: Vec<u64> = (0..n.min(64)).chain(n.saturating_sub(8)..n).collect();
    for &i in &probe {
        let _ = r.entry(i);
        if let Ok(rec) = r.get_checked(i) {
            if r.compress() == barecat::records::Compress::None {
                if let Ok(Some(crc)) = r.stored_crc(i) {
                    assert_eq!(barecat::core::crc::crc32c(&rec), crc, "wrong bytes without error");
                }
            }
        }
        let _ = r.get(i).map(|x| x.typed::<f32>().map(|s| s.len()));
    }
    let _ = r.get(n);
    let opts = GatherOptions {
        threads: 1,
        prefetch: true,
        verify_crc: true,
    };
    let _ = r.gather_with(&probe, &opts).map(|b| b.iter().map(|x| x.len()).sum::<usize>());
    let _ = barecat::records::verify::verify(path, &barecat::core::progress::Progress::hidden());
    let _ = barecat::records::verify::info(&r);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let dir = tempfile::tempdir().unwrap();
    if mode & 1 == 1 {
        let a = dir.path().join("a.barecat");
        let mut w = barecat::ArchiveWriter::open(
            &a,
            barecat::WriterOptions::with_mode(barecat::CreateMode::New),
        )
        .unwrap();
        for (p, d) in [("a", &b"hello"[..]), ("b/c", b"world!"), ("e", b"")] {
            w.add_file(p, barecat::Meta::default(), d, None).unwrap();
        }
        w.finish().unwrap();
        std::fs::write(dir.path().join("a.barecat-records"), rest).unwrap();
        exercise(&a);
        return;
    }
    let p = parts(rest, 5);
    let ds = dir.path().join("ds");
    std::fs::create_dir_all(ds.join("chunk")).unwrap();
    for (name, bytes) in ["meta.json", "offset", "crc", "chunk/0.zr", "chunk/1.zr"]
        .iter()
        .zip(&p)
    {
        std::fs::write(ds.join(name), bytes).unwrap();
    }
    exercise(&ds);
    if let Ok(mut w) = RecordWriter::open(&ds, 2) {
        let _ = w.append(b"fuzz");
        let _ = w.delete(0);
        let _ = w.finish();
        exercise(&ds);
    }
});
