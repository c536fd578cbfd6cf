//! The records library: datasets (append, modify, delete, gather, rebalance,
//! verify, chunk rotation, table growth, writer lock, redo after a kill, hostile
//! datasets) and record tables over barecat archives (build, staleness).

use std::path::Path;

use barecat::records::{
    Compress, DatasetOptions, Dtype, GatherOptions, RecordWriter, Records, TableOrder,
};
use barecat::{ArchiveWriter, CreateMode, Meta, WriterOptions};

use crate::support::pseudo_random;

fn rec(i: u64) -> Vec<u8> {
    let len = (i * 37 % 300) as usize + (i % 3) as usize;
    pseudo_random(i + 1, len)
}

fn opts(compress: Compress) -> DatasetOptions {
    DatasetOptions {
        compress,
        chunk_records: 50,
        chunk_bytes: 8 << 10,
        chunk_grow: 4096,
        table_grow: 64,
        ..Default::default()
    }
}

fn make(dir: &Path, n: u64, o: &DatasetOptions) -> Vec<Vec<u8>> {
    let mut w = RecordWriter::create(dir, o, false).unwrap();
    let mut want = Vec::new();
    for i in 0..n {
        let d = rec(i);
        assert_eq!(w.append(&d).unwrap(), i);
        want.push(d);
    }
    w.finish().unwrap();
    want
}

fn check_all(dir: &Path, want: &[Vec<u8>]) {
    let r = Records::open(dir).unwrap();
    assert_eq!(r.len(), want.len() as u64);
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&*r.get_checked(i as u64).unwrap(), &w[..], "record {i}");
    }
    let rep = barecat::records::verify::verify(dir, &barecat::core::progress::Progress::hidden())
        .unwrap();
    assert!(rep.ok, "{:?}", rep.problems);
}

#[test]
fn append_gather_in_request_order_with_duplicates() {
    for c in [Compress::None, Compress::Zstd, Compress::Flate] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("ds");
        let want = make(&dir, 500, &opts(c));
        check_all(&dir, &want);
        let r = Records::open(&dir).unwrap();
        assert_eq!(r.compress(), c);
        let idx = [499u64, 3, 3, 0, 250, 499, 1];
        let b = r.gather(&idx).unwrap();
        assert_eq!(b.len(), idx.len());
        for (k, &i) in idx.iter().enumerate() {
            assert_eq!(b.get(k), &want[i as usize][..]);
            assert_eq!(
                b.is_zero_copy(k),
                c == Compress::None && !want[i as usize].is_empty()
            );
        }
        // A large gather runs on the pool, with prefetch and CRC checks.
        let big: Vec<u64> = (0..5000u64).map(|k| (k * 7919) % 500).collect();
        let g = GatherOptions {
            threads: 2,
            prefetch: true,
            verify_crc: true,
        };
        let b = r.gather_with(&big, &g).unwrap();
        for (k, &i) in big.iter().enumerate() {
            assert_eq!(b.get(k), &want[i as usize][..]);
        }
        // Every record is a slice of one of the batch's few backings.
        let backings = b.backings();
        let maps = if c == Compress::None { m_count(&b) } else { 0 };
        assert!(c != Compress::None || backings.len() == maps);
        for (k, &i) in big.iter().enumerate() {
            match b.location(k) {
                Some((n, start, len)) => {
                    assert_eq!(&backings[n][start..start + len], &want[i as usize][..])
                }
                None => assert!(want[i as usize].is_empty()),
            }
        }
        // Chunk rotation: 50 records per chunk, 8 KiB at most.
        let m = r.meta().unwrap();
        assert!(m.chunks.num >= 10, "{}", m.chunks.num);
        let err = r.get(500).unwrap_err().to_string();
        assert!(
            err.contains("record 500 out of range") && err.contains("500 records"),
            "{err}"
        );
        assert!(r.gather(&[1, 900]).is_err());
    }
}

/// The number of distinct chunk maps a batch's zero-copy records point into.
fn m_count(b: &barecat::records::Batch) -> usize {
    (0..b.len())
        .filter_map(|k| b.location(k).map(|l| l.0))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

#[test]
fn delete_swaps_with_last_and_modify_then_rebalance_reclaims() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ds");
    let mut want = make(&dir, 300, &opts(Compress::None));
    let mut w = RecordWriter::open(&dir, 2).unwrap();
    // Delete 10: the last record (299) takes index 10.
    w.delete(10).unwrap();
    want.swap_remove(10);
    w.delete(want.len() as u64 - 1).unwrap();
    want.pop();
    for i in (0..100).step_by(3) {
        let d = pseudo_random(1000 + i, 700);
        w.modify(i, &d).unwrap();
        want[i as usize] = d;
    }
    // Deleting a record modified in the same batch, and appending after a delete.
    w.delete(3).unwrap();
    want.swap_remove(3);
    w.append(b"tail").unwrap();
    want.push(b"tail".to_vec());
    assert!(w.delete(10_000).is_err());
    w.finish().unwrap();
    check_all(&dir, &want);
    let r = Records::open(&dir).unwrap();
    assert_eq!(&*r.get(10).unwrap(), &rec(299)[..]);
    let before = barecat::records::verify::utilization(&r).unwrap();
    drop(r);
    let w = RecordWriter::open(&dir, 1).unwrap();
    let rep = w
        .rebalance(&barecat::core::progress::Progress::hidden())
        .unwrap();
    assert!(rep.before.ratio < 0.95, "{:?}", rep.before);
    assert!((rep.after.ratio - 1.0).abs() < 1e-9, "{:?}", rep.after);
    assert_eq!(rep.before.chunk_bytes, before.chunk_bytes);
    check_all(&dir, &want);
    // Appending after a rebalance continues the last chunk.
    let mut w = RecordWriter::open(&dir, 1).unwrap();
    w.append(b"after").unwrap();
    want.push(b"after".to_vec());
    w.finish().unwrap();
    check_all(&dir, &want);
}

#[test]
fn typed_records_are_aligned() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("f32");
    for c in [Compress::None, Compress::Zstd] {
        let o = DatasetOptions {
            dtype: Dtype::F32,
            compress: c,
            ..Default::default()
        };
        let mut w = RecordWriter::create(&dir, &o, true).unwrap();
        w.append(&[1u8]).unwrap(); // misaligns the next record unless padded
        let vals: Vec<f32> = (0..10).map(|v| v as f32 * 0.5).collect();
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        w.append(&bytes).unwrap();
        w.finish().unwrap();
        let r = Records::open(&dir).unwrap();
        assert_eq!(r.dtype(), Dtype::F32);
        let b = r.gather(&[1]).unwrap();
        assert_eq!(b.typed::<f32>(0).unwrap(), &vals[..]);
        assert_eq!(r.get(1).unwrap().typed::<f32>().unwrap(), &vals[..]);
        assert!(r.get(0).unwrap().typed::<f32>().is_err());
    }
}

#[test]
fn a_second_writer_is_refused_readers_are_not() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ds");
    make(&dir, 5, &opts(Compress::None));
    let mut w = RecordWriter::open(&dir, 1).unwrap();
    let err = RecordWriter::open(&dir, 1).err().unwrap().to_string();
    assert!(err.contains("being written by another process"), "{err}");
    w.append(b"x").unwrap();
    w.commit().unwrap();
    let r = Records::open(&dir).unwrap();
    assert_eq!(r.len(), 6);
    assert_eq!(&*r.get(5).unwrap(), b"x");
    w.finish().unwrap();
    RecordWriter::open(&dir, 1).unwrap();
}

#[test]
fn the_table_grows_past_a_million_entries() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("big");
    let o = DatasetOptions {
        chunk_records: 1 << 20,
        ..Default::default()
    };
    let mut w = RecordWriter::create(&dir, &o, false).unwrap();
    let n = (1u64 << 20) + 1000;
    for i in 0..n {
        w.append(&(i as u32).to_le_bytes()).unwrap();
        if i == 1000 {
            w.commit().unwrap();
            let len = std::fs::metadata(dir.join("offset")).unwrap().len();
            assert_eq!(len, 16 << 20, "the table grows by 1M entries at a time");
        }
    }
    w.commit().unwrap();
    let len = std::fs::metadata(dir.join("offset")).unwrap().len();
    assert_eq!(len, 32 << 20);
    w.finish().unwrap();
    // A finished dataset is trimmed to its logical size.
    assert_eq!(std::fs::metadata(dir.join("offset")).unwrap().len(), n * 16);
    let r = Records::open(&dir).unwrap();
    assert_eq!(r.len(), n);
    for i in [0, 1 << 20, n - 1] {
        assert_eq!(&*r.get(i).unwrap(), &(i as u32).to_le_bytes());
    }
}

#[test]
fn committed_redo_is_applied_by_readers_and_the_next_writer() {
    use barecat::records::format::{Meta, Redo};
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ds");
    let want = make(&dir, 20, &opts(Compress::None));
    // As a writer killed after committing meta.json with a delete of record 2 in
    // redo, before writing the table: entry 2 must read as the old record 19.
    let text = std::fs::read(dir.join("meta.json")).unwrap();
    let mut m = Meta::parse(&text, &dir).unwrap();
    let r = Records::open(&dir).unwrap();
    let e = r.entry(19).unwrap();
    let crc = r.stored_crc(19).unwrap().unwrap();
    drop(r);
    m.length = 19;
    m.redo = vec![Redo(2, e.chunk, e.offset, e.length, crc)];
    std::fs::write(dir.join("meta.json"), m.to_json()).unwrap();
    let mut expect = want.clone();
    expect.swap_remove(2);
    check_all(&dir, &expect);
    RecordWriter::open(&dir, 1).unwrap().finish().unwrap();
    let m = Meta::parse(&std::fs::read(dir.join("meta.json")).unwrap(), &dir).unwrap();
    assert!(m.redo.is_empty());
    check_all(&dir, &expect);
}

#[test]
fn hostile_datasets_give_one_line_errors() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ds");
    make(&dir, 20, &opts(Compress::None));
    let reset = |d: &Path| {
        let _ = std::fs::remove_dir_all(d);
        make(d, 20, &opts(Compress::None));
    };
    let expect_err = |d: &Path, needle: &str| {
        let r = Records::open(d).and_then(|r| {
            for i in 0..r.len() {
                r.get_checked(i)?;
            }
            Ok(())
        });
        let e = r
            .err()
            .unwrap_or_else(|| panic!("no error for {needle}"))
            .to_string();
        assert!(e.contains(needle), "{e} lacks {needle}");
        assert!(!e.contains('\n'));
    };
    std::fs::write(dir.join("meta.json"), b"{\"length\": 1").unwrap();
    expect_err(&dir, "meta.json");
    reset(&dir);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("offset"))
        .unwrap();
    f.set_len(100).unwrap();
    expect_err(&dir, "offset: too short");
    reset(&dir);
    // An entry past the end of its chunk.
    let mut tbl = std::fs::read(dir.join("offset")).unwrap();
    tbl[16 * 5 + 4..16 * 5 + 12].copy_from_slice(&(1u64 << 40).to_le_bytes());
    std::fs::write(dir.join("offset"), &tbl).unwrap();
    expect_err(&dir, ".zr: an entry ends at byte");
    reset(&dir);
    std::fs::remove_file(dir.join("chunk/0.zr")).unwrap();
    expect_err(&dir, "chunk 0 is missing");
    reset(&dir);
    std::fs::remove_file(dir.join("chunk/0.zr")).unwrap();
    std::fs::create_dir(dir.join("chunk/0.zr")).unwrap();
    expect_err(&dir, "is a directory");
    reset(&dir);
    let mut c = std::fs::read(dir.join("chunk/0.zr")).unwrap();
    c[0] ^= 1;
    std::fs::write(dir.join("chunk/0.zr"), &c).unwrap();
    expect_err(&dir, "CRC32C mismatch");
}

fn archive(path: &Path, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut w = ArchiveWriter::open(path, WriterOptions::with_mode(CreateMode::New)).unwrap();
    let mut files = Vec::new();
    for i in 0..n {
        // Insertion order differs from path order.
        let name = format!("d{}/f{:03}", i % 3, n - i);
        let data = pseudo_random(i as u64 + 7, 10 + i * 13 % 200);
        w.add_file(&name, Meta::default(), &data, None).unwrap();
        files.push((name, data));
    }
    w.finish().unwrap();
    files
}

#[test]
fn archive_tables_read_in_path_address_and_list_order_and_go_stale() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a.barecat");
    let mut files = archive(&a, 60);
    let p = barecat::core::progress::Progress::hidden();
    for order in [TableOrder::Path, TableOrder::Address, TableOrder::List] {
        let list: Vec<String> = files.iter().rev().map(|f| f.0.clone()).collect();
        let rep = barecat::records::table::build(
            &a,
            &barecat::records::BuildOptions {
                order,
                list: list.clone(),
            },
            &p,
        )
        .unwrap();
        assert_eq!(rep.records, 60);
        assert_eq!(rep.table, t.path().join("a.barecat-records"));
        let mut want = files.clone();
        match order {
            TableOrder::Path => want.sort(),
            TableOrder::Address => {}
            TableOrder::List => want.reverse(),
        }
        for name in [a.clone(), t.path().join("a.barecat-records")] {
            let r = Records::open(&name).unwrap();
            assert!(r.warnings().is_empty());
            assert_eq!(r.len(), 60);
            let b = r.gather(&(0..60).rev().collect::<Vec<_>>()).unwrap();
            for k in 0..60 {
                assert_eq!(b.get(k), &want[59 - k].1[..], "{order:?} {k}");
                assert!(b.is_zero_copy(k));
            }
            assert_eq!(&*r.get_checked(0).unwrap(), &want[0].1[..]);
        }
    }
    // Rebuilt in path order; then a file is added: stale and refused.
    let po = barecat::records::BuildOptions {
        order: TableOrder::Path,
        list: vec![],
    };
    barecat::records::table::build(&a, &po, &p).unwrap();
    let mut w = ArchiveWriter::open(&a, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    w.add_file("zz/new", Meta::default(), b"new", None).unwrap();
    w.finish().unwrap();
    let e = Records::open(&a).unwrap_err().to_string();
    assert!(e.contains("record table is out of date"), "{e}");
    assert!(e.contains("barecat-records build"), "{e}");
    files.push(("zz/new".into(), b"new".to_vec()));
    // A write that changes no file row: the stamp differs but every record matches.
    barecat::records::table::build(&a, &po, &p).unwrap();
    let w = ArchiveWriter::open(&a, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    w.index()
        .conn()
        .execute("UPDATE dirs SET mtime_ns = 12345 WHERE path = ''", [])
        .unwrap();
    drop(w);
    let r = Records::open(&a).unwrap();
    assert_eq!(r.warnings().len(), 1, "{:?}", r.warnings());
    barecat::records::table::restamp(&a).unwrap();
    assert!(Records::open(&a).unwrap().warnings().is_empty());
    // Deleted: stale.
    let mut w = ArchiveWriter::open(&a, WriterOptions::with_mode(CreateMode::Append)).unwrap();
    w.remove_file("zz/new").unwrap();
    w.finish().unwrap();
    assert!(Records::open(&a).is_err());
}

#[test]
fn conversions_copy_between_the_forms() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a.barecat");
    let mut files = archive(&a, 30);
    files.sort();
    let dir = t.path().join("ds");
    let mut w = RecordWriter::create(&dir, &opts(Compress::Zstd), false).unwrap();
    let n = barecat::records::convert::append_archive(
        &mut w,
        &a,
        TableOrder::Path,
        &[],
        &barecat::core::progress::Progress::hidden(),
    )
    .unwrap();
    assert_eq!(n, 30);
    w.finish().unwrap();
    let want: Vec<Vec<u8>> = files.iter().map(|f| f.1.clone()).collect();
    check_all(&dir, &want);
    let out = t.path().join("back.barecat");
    let r = Records::open(&dir).unwrap();
    let rep = barecat::records::convert::to_archive(
        &r,
        &out,
        "",
        false,
        &barecat::core::progress::Progress::hidden(),
    )
    .unwrap();
    assert_eq!((rep.files, rep.width), (30, 2));
    let b = barecat::Archive::open(&out).unwrap();
    assert_eq!(b.read("07").unwrap(), want[7]);
}

/// Found by the records_open fuzz target: an empty record whose stored CRC is not 0
/// (a damaged crc file) was returned by get_checked without an error.
#[test]
fn an_empty_record_with_a_nonzero_crc_is_a_crc_error() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ds");
    let mut w = RecordWriter::create(&dir, &DatasetOptions::default(), false).unwrap();
    w.append(b"").unwrap();
    w.append(b"x").unwrap();
    w.finish().unwrap();
    let mut crc = std::fs::read(dir.join("crc")).unwrap();
    crc[0] = 7;
    std::fs::write(dir.join("crc"), &crc).unwrap();
    let r = Records::open(&dir).unwrap();
    assert!(r.get(0).unwrap().is_empty());
    let e = r.get_checked(0).unwrap_err().to_string();
    assert!(
        e.contains("record 0") && e.contains("CRC32C mismatch"),
        "{e}"
    );
    let g = GatherOptions {
        verify_crc: true,
        ..Default::default()
    };
    assert!(r.gather_with(&[1, 0], &g).is_err());
    let rep = barecat::records::verify::verify(&dir, &barecat::core::progress::Progress::hidden())
        .unwrap();
    assert!(!rep.ok && rep.problems[0].contains("record 0"), "{rep:?}");
}

#[test]
fn append_with_reads_into_the_writer_and_a_failed_fill_appends_nothing() {
    for c in [Compress::None, Compress::Zstd] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("ds");
        let mut w = RecordWriter::create(&dir, &opts(c), false).unwrap();
        let mut want = Vec::new();
        for i in 0..400u64 {
            let d = rec(i);
            let got = w
                .append_with(d.len(), |v: &mut Vec<u8>| -> Result<(), barecat::Error> {
                    v.extend_from_slice(&d);
                    Ok(())
                })
                .unwrap();
            assert_eq!(got, i);
            want.push(d);
            // A fill that fails, and one that gives too few bytes: no record, the
            // writer goes on.
            let e = w.append_with(10, |v: &mut Vec<u8>| -> anyhow::Result<()> {
                v.extend_from_slice(b"abc");
                anyhow::bail!("input ended")
            });
            assert_eq!(e.unwrap_err().to_string(), "input ended");
            let e = w.append_with(10, |v: &mut Vec<u8>| -> Result<(), barecat::Error> {
                v.extend_from_slice(b"abc");
                Ok(())
            });
            assert!(e.unwrap_err().to_string().contains("given 3 bytes"));
        }
        w.finish().unwrap();
        // 400 records of up to 300 bytes over chunks of 50 records / 8 KiB: runs
        // written straight from the buffer are cut at every chunk change.
        check_all(&dir, &want);
    }
}

/// Writes large enough for everything the writer does in the background: several
/// flushes handed to the slots while the next records are buffered, direct I/O
/// stages spilled across chunk rotations (on disk, where the file system has it;
/// the temporary directory may be a tmpfs), the dtype's alignment padding of
/// compressed records, a resumed unfull chunk, and deletes and modifies of records
/// whose flush is still running. Every record must read back exactly.
#[test]
fn big_appends_in_the_background_rotate_pad_resume_and_edit_exactly() {
    let t = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (k, compress) in [Compress::None, Compress::Zstd].into_iter().enumerate() {
        let dir = t.path().join(format!("ds{k}"));
        let o = DatasetOptions {
            compress,
            dtype: if compress == Compress::None {
                Dtype::Bytes
            } else {
                Dtype::F32
            },
            chunk_bytes: 5 << 20,
            chunk_grow: 1 << 20,
            writers: 2,
            commit_bytes: 24 << 20,
            ..Default::default()
        };
        let size = |i: u64| (i * 7919 % 60_000) as usize / 4 * 4 + 4;
        let mut want: Vec<Vec<u8>> = Vec::new();
        let mut w = RecordWriter::create(&dir, &o, false).unwrap();
        for i in 0..1500 {
            let d = pseudo_random(i + 7, size(i));
            w.append(&d).unwrap();
            want.push(d);
        }
        // The last records are still being written: delete and modify them.
        w.delete(1499).unwrap();
        want.pop();
        w.delete(5).unwrap();
        want.swap_remove(5);
        let d = pseudo_random(99, 12_345 * 4);
        w.modify(1497, &d).unwrap();
        want[1497] = d;
        w.commit().unwrap();
        drop(w);
        // A second writer resumes the unfull chunks.
        let mut w = RecordWriter::open(&dir, 1).unwrap();
        for i in 0..700 {
            let d = pseudo_random(i + 50_000, size(i + 3));
            w.append(&d).unwrap();
            want.push(d);
        }
        w.finish().unwrap();
        check_all(&dir, &want);
        let r = Records::open(&dir).unwrap();
        assert!(r.len() > 2000);
    }
}
