//! `barecat-verify`: every check triggered by a crafted corruption, with the
//! expected findings and exit codes, and no hang whatever is missing.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::maint::*;
use crate::support::*;
use barecat::{ArchiveWriter, Layout, Meta, WriterOptions};

/// Three shards of files in a few directories, plus an empty directory.
fn fixture(dir: &Path) -> PathBuf {
    let p = dir.join("v.barecat");
    let files = sample_files("data", 30, 3000, 7);
    build(&p, Some(20_000), &files);
    let mut w = open_append(&p);
    w.add_dir("empty", meta()).unwrap();
    w.finish().unwrap();
    assert!(shard_count(&p) >= 3, "fixture needs several shards");
    p
}

/// (path, shard, offset, size) of every file, by address.
fn rows(p: &Path) -> Vec<(String, u64, u64, u64)> {
    let a = barecat::Archive::open_with(p, barecat::OpenOptions::lenient()).unwrap();
    a.files(barecat::FileOrder::Address, "")
        .map(|f| {
            let f = f.unwrap();
            (f.path, f.shard, f.offset, f.size)
        })
        .collect()
}

fn flip_byte(shard: &Path, at: u64) {
    let mut data = fs::read(shard).unwrap();
    data[at as usize] ^= 0x40;
    fs::write(shard, data).unwrap();
}

#[test]
fn clean_archive_passes_in_both_modes_and_as_text() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    for quick in [false, true] {
        let (c, v) = verify_json(&p, quick);
        assert_eq!(c, 0, "{v:#}");
        assert_eq!(v["ok"], true);
        assert_eq!(v["problems"].as_array().unwrap().len(), 0);
        assert_eq!(v["files"], 30);
        assert_eq!(v["mode"], if quick { "quick" } else { "full" });
        assert_eq!(v["space"]["reclaimable_bytes"], 0);
        assert_eq!(v["space"]["utilization"], 1.0);
    }
    let (_, v) = verify_json(&p, false);
    assert_eq!(v["checked_files"], 30);
    let o = run_t(bin("barecat-verify"), [p.as_os_str()]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).starts_with("Verified 30 files ("),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("all checksums OK"));
    // -q prints nothing on success; the multicall form works too.
    let o = run_t(bin("barecat-verify"), ["-q".as_ref(), p.as_os_str()]);
    assert_eq!((code(&o), stdout(&o)), (0, String::new()));
    let o = run_t(
        bin("barecat"),
        ["verify".as_ref(), "--quick".as_ref(), p.as_os_str()],
    );
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("quick check"));
    // Python barecat agrees.
    py_verify(&p);
}

#[test]
fn every_flipped_byte_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let r = rows(&p);
    let victims: Vec<_> = r.iter().filter(|x| x.3 > 10).step_by(7).cloned().collect();
    assert!(victims.len() >= 3);
    let layout = Layout::current(&p);
    for (_, shard, offset, size) in &victims {
        flip_byte(&layout.shard_path(*shard), offset + size / 2);
    }
    for j in ["1", "3"] {
        let o = run_t(
            bin("barecat-verify"),
            ["--json".as_ref(), "-j".as_ref(), j.as_ref(), p.as_os_str()],
        );
        assert_eq!(code(&o), 1);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["ok"], false);
        let mut got: Vec<String> = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                assert_eq!(p["kind"], "crc_mismatch");
                p["path"].as_str().unwrap().to_string()
            })
            .collect();
        got.sort();
        let mut want: Vec<String> = victims.iter().map(|v| v.0.clone()).collect();
        want.sort();
        assert_eq!(got, want);
    }
    // Text output: one line per problem, then the summary.
    let o = run_t(bin("barecat-verify"), [p.as_os_str()]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("CRC32C mismatch"))
            .count(),
        victims.len()
    );
    assert!(out.contains(&format!("{} problem(s) found", victims.len())));
}

#[test]
fn quick_mode_checks_the_last_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let r = rows(&p);
    let layout = Layout::current(&p);
    // A damaged middle file goes unnoticed by the quick check…
    let mid = r.iter().find(|x| x.3 > 0 && x.1 == 0).unwrap().clone();
    flip_byte(&layout.shard_path(mid.1), mid.2);
    let (c, _) = verify_json(&p, true);
    assert_eq!(c, 0);
    // …the last one does not.
    let last = r.iter().rev().find(|x| x.3 > 0).unwrap().clone();
    flip_byte(&layout.shard_path(last.1), last.2 + last.3 - 1);
    let (c, v) = verify_json(&p, true);
    assert_eq!(c, 1);
    assert_eq!(kinds(&v, "problems"), ["crc_mismatch"]);
    assert_eq!(v["problems"][0]["path"], last.0.as_str());
    assert_eq!(v["checked_files"], 1);
}

#[test]
fn truncated_shard_gives_extents_past_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let r = rows(&p);
    let layout = Layout::current(&p);
    let in_shard1: Vec<_> = r.iter().filter(|x| x.1 == 1 && x.3 > 0).collect();
    let cut = in_shard1[in_shard1.len() / 2].2 + 1;
    let f = fs::OpenOptions::new()
        .write(true)
        .open(layout.shard_path(1))
        .unwrap();
    f.set_len(cut).unwrap();
    let expected: Vec<String> = in_shard1
        .iter()
        .filter(|x| x.2 + x.3 > cut)
        .map(|x| x.0.clone())
        .collect();
    for quick in [false, true] {
        let (c, v) = verify_json(&p, quick);
        assert_eq!(c, 1);
        let past: Vec<String> = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "extent_past_end")
            .map(|p| p["path"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(past, expected, "quick={quick}");
        // Files past the end are not also reported as checksum errors.
        assert!(!kinds(&v, "problems").contains(&"crc_mismatch".to_string()));
    }
}

#[test]
fn missing_middle_or_last_shard_is_reported_without_hanging() {
    for victim in ["middle", "last"] {
        let dir = tempfile::tempdir().unwrap();
        let p = fixture(dir.path());
        let layout = Layout::current(&p);
        let n = shard_count(&p) as u64;
        let k = if victim == "middle" { 1 } else { n - 1 };
        let files_in_k = rows(&p).iter().filter(|x| x.1 == k).count();
        fs::remove_file(layout.shard_path(k)).unwrap();
        for quick in [false, true] {
            let (c, v) = verify_json(&p, quick);
            assert_eq!(c, 1, "{victim} quick={quick}: {v:#}");
            let missing: Vec<&serde_json::Value> = v["problems"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["kind"] == "missing_shard")
                .collect();
            assert_eq!(missing.len(), 1, "{v:#}");
            assert_eq!(missing[0]["shard"], k);
            let msg = missing[0]["message"].as_str().unwrap();
            assert!(msg.contains(&format!("{files_in_k} file(s)")), "{msg}");
        }
        // The other shards are still checked in full.
        let (_, v) = verify_json(&p, false);
        assert!(v["checked_files"].as_u64().unwrap() > 0);
    }
}

#[test]
fn shard_numbering_gap_and_dangling_link() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let layout = Layout::current(&p);
    let n = shard_count(&p) as u64;
    // A shard far beyond the others: a gap in the numbering, and an extra shard.
    fs::write(layout.shard_path(n + 2), b"garbage").unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 1);
    let gaps: Vec<u64> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "missing_shard")
        .map(|p| p["shard"].as_u64().unwrap())
        .collect();
    assert_eq!(gaps, vec![n, n + 1]);
    assert!(kinds(&v, "warnings").contains(&"extra_shard".to_string()));
    fs::remove_file(layout.shard_path(n + 2)).unwrap();
    // Shard 0 replaced by a link to nothing.
    fs::remove_file(layout.shard_path(0)).unwrap();
    std::os::unix::fs::symlink("nowhere", layout.shard_path(0)).unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 1);
    let msgs: Vec<String> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "missing_shard")
        .map(|p| p["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(msgs[0].contains("symbolic link"), "{msgs:?}");
}

#[test]
fn extra_shards_holes_and_trailing_bytes_are_information() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let layout = Layout::current(&p);
    let n = shard_count(&p) as u64;
    fs::write(layout.shard_path(n), b"left over").unwrap();
    fs::write(layout.shard_path(n + 1), b"").unwrap();
    let last = layout.shard_path(n - 1);
    let mut data = fs::read(&last).unwrap();
    data.extend_from_slice(&[0u8; 100]);
    fs::write(&last, data).unwrap();
    // A hole: delete a file in the middle of shard 0.
    let victim = rows(&p)
        .into_iter()
        .filter(|x| x.1 == 0 && x.3 > 0)
        .nth(2)
        .unwrap();
    let mut w = open_append(&p);
    w.remove_file(&victim.0).unwrap();
    w.finish().unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(kinds(&v, "warnings"), ["extra_shard", "extra_shard"]);
    let s = &v["space"];
    assert_eq!(s["holes"], 1);
    assert_eq!(s["hole_bytes"], victim.3);
    assert_eq!(s["trailing_bytes"], 100 + 9);
    assert_eq!(s["reclaimable_bytes"], victim.3 + 109);
    assert!(s["utilization"].as_f64().unwrap() < 1.0);
    let o = run_t(bin("barecat-verify"), [p.as_os_str()]);
    assert!(stdout(&o).contains("1 hole(s)"), "{}", stdout(&o));
}

#[test]
fn overlapping_extents_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let r: Vec<_> = rows(&p)
        .into_iter()
        .filter(|x| x.1 == 0 && x.3 > 4)
        .collect();
    let (a, b) = (&r[0], &r[1]);
    // b starts inside a; an empty file inside a is fine.
    raw_sql(
        &p,
        &format!(
            "UPDATE files SET offset = {} WHERE path = '{}';
             UPDATE files SET offset = {}, size = 0, crc32c = 0 WHERE path = '{}';",
            a.2 + 2,
            b.0,
            a.2 + 1,
            r[2].0
        ),
    );
    let (c, v) = verify_json(&p, true);
    assert_eq!(c, 1);
    let overlaps: Vec<&serde_json::Value> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "overlap")
        .collect();
    assert_eq!(overlaps.len(), 1, "{v:#}");
    assert_eq!(overlaps[0]["path"], b.0.as_str());
    assert!(overlaps[0]["message"].as_str().unwrap().contains(&a.0));
    // The moved file's bytes no longer match its CRC either; the empty file is fine
    // (its stats changed, so that is reported too).
    let (_, v) = verify_json(&p, false);
    let k = kinds(&v, "problems");
    assert!(k.contains(&"crc_mismatch".to_string()));
    assert!(k.contains(&"dir_stats".to_string()));
}

#[test]
fn wrong_statistics_every_directory_listed() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    // 12 wrong rows: more than Python's first ten.
    raw_sql(
        &p,
        "UPDATE config SET value_int = 0 WHERE key = 'use_triggers';
         UPDATE dirs SET num_files = num_files + 1, size_tree = size_tree + 5;
         UPDATE config SET value_int = 1 WHERE key = 'use_triggers';",
    );
    let ndirs = {
        let a = barecat::Archive::open(&p).unwrap();
        a.dirs("").unwrap().len()
    };
    let (c, v) = verify_json(&p, true);
    assert_eq!(c, 1);
    let stats: Vec<&serde_json::Value> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["kind"] == "dir_stats")
        .collect();
    assert_eq!(stats.len(), ndirs);
    let root = stats.iter().find(|p| p["path"] == "").unwrap();
    assert!(
        root["message"].as_str().unwrap().contains("should be"),
        "{root}"
    );
    // barecat-repair makes it clean again.
    run_ok(bin("barecat-repair"), [p.as_os_str()]);
    assert_eq!(verify_json(&p, false).0, 0);
}

#[test]
fn bad_types_foreign_keys_and_paths_in_both_tables() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let r = rows(&p);
    raw_sql(
        &p,
        &format!(
            "UPDATE config SET value_int = 0 WHERE key = 'use_triggers';
             PRAGMA foreign_keys = OFF;
             UPDATE files SET shard = 'zero' WHERE path = '{}';
             UPDATE files SET size = -5 WHERE path = '{}';
             UPDATE files SET crc32c = 'abc' WHERE path = '{}';
             INSERT INTO files (path, shard, offset, size, crc32c) VALUES ('nodir/x', 0, 0, 0, 0);
             INSERT INTO dirs (path) VALUES ('{}');
             UPDATE config SET value_int = 1 WHERE key = 'use_triggers';",
            r[0].0, r[1].0, r[2].0, r[3].0
        ),
    );
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 1, "{v:#}");
    let problems = v["problems"].as_array().unwrap();
    let of = |kind: &str| -> Vec<String> {
        problems
            .iter()
            .filter(|p| p["kind"] == kind)
            .map(|p| p["path"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let mut bad = of("bad_row");
    bad.sort();
    let mut want = vec![r[0].0.clone(), r[1].0.clone(), r[2].0.clone()];
    want.sort();
    assert_eq!(bad, want);
    assert_eq!(of("foreign_key"), ["nodir/x"]);
    assert_eq!(of("file_and_dir"), [r[3].0.clone()]);
    assert!(!of("dir_stats").is_empty());
}

#[test]
fn damaged_index_file_is_found_by_integrity_check() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.barecat");
    // Enough rows for several pages of the path index.
    let files: Vec<(String, Vec<u8>)> = (0..3000)
        .map(|i| {
            (
                format!("d{}/a-long-file-name-{i:06}.txt", i % 3),
                vec![i as u8; 3],
            )
        })
        .collect();
    build(&p, None, &files);
    let mut db = fs::read(&p).unwrap();
    let page = 4096;
    assert!(db.len() > 8 * page);
    // Scribble over the middle of a page deep in the file.
    let at = db.len() - 3 * page + 100;
    for b in &mut db[at..at + 200] {
        *b = 0x5a;
    }
    fs::write(&p, db).unwrap();
    for quick in [false, true] {
        let (c, v) = verify_json(&p, quick);
        assert_eq!(c, 1, "{v:#}");
        assert!(
            kinds(&v, "problems").contains(&"integrity_check".to_string()),
            "{v:#}"
        );
    }
}

#[test]
fn cannot_run_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing.barecat");
    let o = run_t(bin("barecat-verify"), [missing.as_os_str()]);
    assert_eq!(code(&o), 2);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("nothing.barecat"));
    let junk = dir.path().join("junk.barecat");
    fs::write(&junk, vec![7u8; 5000]).unwrap();
    let o = run_t(bin("barecat-verify"), [junk.as_os_str()]);
    assert_eq!(code(&o), 2);
    assert_clean_error(&o);
    // JSON mode still prints one document.
    let (c, v) = verify_json(&junk, false);
    assert_eq!(c, 2);
    assert_eq!(v["ok"], false);
    assert!(v["error"].as_str().unwrap().contains("junk.barecat"));
    // Shards without an index.
    fs::write(dir.path().join("orphan-shard-00000"), b"x").unwrap();
    let o = run_t(
        bin("barecat-verify"),
        [dir.path().join("orphan").as_os_str()],
    );
    assert_eq!(code(&o), 2);
    assert_clean_error(&o);
    // Usage errors are 2 as well.
    let o = run_t(bin("barecat-verify"), ["--no-such-flag"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn legacy_form_and_python_archives() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write_tree(
        &src,
        &[
            ("a.txt", b"hello\n"),
            ("sub/b.bin", &pseudo_random(3, 5000)),
            ("sub/deep/c.dat", &pseudo_random(4, 1000)),
        ],
    );
    let p = dir.path().join("py.barecat");
    run_ok_in(
        dir.path(),
        py_barecat(),
        ["create".as_ref(), p.as_os_str(), "src".as_ref()],
    );
    let o = run_t(bin("barecat-verify"), [p.as_os_str(), "--quick".as_ref()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(v["files"], 3);
    // Legacy index naming.
    fs::rename(&p, dir.path().join("py.barecat-sqlite-index")).unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    // A NULL checksum is counted, not failed.
    raw_sql(
        &dir.path().join("py.barecat-sqlite-index"),
        "UPDATE files SET crc32c = NULL WHERE path = 'src/a.txt'",
    );
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0);
    assert_eq!(v["files_without_crc"], 1);
}

#[test]
fn an_empty_archive_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("e.barecat");
    let w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    w.finish().unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(v["files"], 0);
    assert_eq!(kinds(&v, "warnings").len(), 0);
    // Without any shard file: a warning only.
    fs::remove_file(Layout::current(&p).shard_path(0)).unwrap();
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0);
    assert_eq!(kinds(&v, "warnings"), ["no_shard"]);
    let _ = Meta::default();
}

#[test]
fn large_files_are_checked_across_reads() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("large.barecat");
    let files = vec![
        ("small/a".to_string(), pseudo_random(1, 1000)),
        ("big/nine_mb".to_string(), pseudo_random(2, 9 << 20)),
        (
            "mid/three_hundred_k".to_string(),
            pseudo_random(3, 300 << 10),
        ),
        ("small/b".to_string(), pseudo_random(4, 10)),
    ];
    build(&p, None, &files);
    assert_eq!(verify_json(&p, false).0, 0);
    let r = rows(&p);
    let shard = Layout::current(&p).shard_path(0);
    let big = r.iter().find(|x| x.0 == "big/nine_mb").unwrap();
    let mid = r.iter().find(|x| x.0 == "mid/three_hundred_k").unwrap();
    flip_byte(&shard, big.2 + big.3 - 3);
    flip_byte(&shard, mid.2 + (280 << 10));
    for j in ["1", "2"] {
        let o = run_t(
            bin("barecat-verify"),
            ["--json".as_ref(), "-j".as_ref(), j.as_ref(), p.as_os_str()],
        );
        assert_eq!(code(&o), 1);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut bad: Vec<&str> = v["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap())
            .collect();
        bad.sort();
        assert_eq!(bad, ["big/nine_mb", "mid/three_hundred_k"]);
        assert_eq!(v["checked_files"], 4);
        assert_eq!(
            v["checked_bytes"],
            files.iter().map(|f| f.1.len()).sum::<usize>()
        );
    }
}

/// An undo journal in the layout of docs/FORMAT.md §7.4, for one file whose row
/// is `row` before the commit.
fn undo_journal(row: &barecat::FileInfo, ranges: &[(u64, &[u8])]) -> Vec<u8> {
    let mut b = b"BCUNDO1\n".to_vec();
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&(row.path.len() as u32).to_le_bytes());
    b.extend_from_slice(row.path.as_bytes());
    b.extend_from_slice(&row.shard.to_le_bytes());
    b.extend_from_slice(&row.offset.to_le_bytes());
    b.extend_from_slice(&row.size.to_le_bytes());
    b.extend_from_slice(&row.crc32c.unwrap().to_le_bytes());
    b.extend_from_slice(&(ranges.len() as u32).to_le_bytes());
    for (at, bytes) in ranges {
        b.extend_from_slice(&at.to_le_bytes());
        b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        b.extend_from_slice(bytes);
    }
    let sum = crc32c::crc32c(&b);
    b.extend_from_slice(&sum.to_le_bytes());
    b
}

#[test]
fn an_interrupted_rewrite_in_place_is_named_by_verify_and_undone_by_repair() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path());
    let a = barecat::Archive::open(&p).unwrap();
    let row = a.file_info("data/d3/f0003.bin").unwrap();
    let old = a.read_file(&row).unwrap();
    drop(a);
    assert!(row.size >= 8, "fixture file too small");
    // A killed rewrite: the journal is on disk, the shard half written, the row old.
    fs::write(
        Layout::current(&p).undo_journal(),
        undo_journal(&row, &[(2, &old[2..6])]),
    )
    .unwrap();
    let shard = Layout::current(&p).shard_path(row.shard);
    flip_byte(&shard, row.offset + 3);
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 1, "{v:#}");
    assert_eq!(kinds(&v, "problems"), ["crc_mismatch"]);
    assert!(
        kinds(&v, "warnings").contains(&"interrupted_rewrite".to_string()),
        "{v:#}"
    );
    let o = run_t(bin("barecat-repair"), [p.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!Layout::current(&p).undo_journal().exists());
    let (c, v) = verify_json(&p, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(contents(&p)["data/d3/f0003.bin"], old);
}
