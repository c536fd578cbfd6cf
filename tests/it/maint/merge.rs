//! `barecat-merge` and `barecat-merge-symlink`: duplicates, shared directories,
//! several shards, bad inputs, and outputs that Python barecat accepts.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::maint::*;
use crate::support::*;
use barecat::core::progress::Progress;
use barecat::maint::merge::{MergeOptions, MergeReport, OutputMode};
use barecat::{Archive, ArchiveWriter, CreateMode, Error, Layout, Meta, WriterOptions};

/// An archive with files in `shared/` (a directory every fixture has), in a
/// directory of its own and at the top, over several shards, with holes.
fn input(dir: &Path, name: &str, seed: u64, dir_mode: u32) -> PathBuf {
    let p = dir.join(format!("{name}.barecat"));
    let mut files = sample_files(&format!("only_{name}"), 25, 4000, seed);
    for i in 0..8 {
        files.push((
            format!("shared/{name}_{i}.bin"),
            pseudo_random(seed * 31 + i, 1500 + i as usize * 100),
        ));
    }
    files.push((format!("top_{name}.txt"), format!("{name}\n").into_bytes()));
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            shard_size_limit: Some(25_000),
            ..WriterOptions::default()
        },
    )
    .unwrap();
    w.add_dir(
        "shared",
        Meta {
            mode: Some(dir_mode),
            uid: Some(seed as u32),
            gid: Some(7),
            mtime_ns: Some(1_600_000_000_000_000_000 + seed as i64),
        },
    )
    .unwrap();
    w.add_dir("shared/empty", meta()).unwrap();
    for (path, data) in &files {
        w.add_file(path, meta(), data, None).unwrap();
    }
    w.finish().unwrap();
    let mut w = open_append(&p);
    for (path, _) in files.iter().step_by(4) {
        w.remove_file(path).unwrap();
    }
    w.finish().unwrap();
    assert!(shard_count(&p) >= 3);
    p
}

fn union(parts: &[&Path]) -> BTreeMap<String, Vec<u8>> {
    let mut all = BTreeMap::new();
    for p in parts {
        for (k, v) in contents(p) {
            all.entry(k).or_insert(v);
        }
    }
    all
}

fn args<'a>(list: &'a [&'a dyn AsRef<std::ffi::OsStr>]) -> Vec<&'a std::ffi::OsStr> {
    list.iter().map(|a| a.as_ref()).collect()
}

fn dir_meta(p: &Path, d: &str) -> Meta {
    Archive::open(p).unwrap().stat(d).unwrap().meta().to_owned()
}

#[test]
fn merge_copies_live_bytes_only_and_keeps_everything() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40750);
    let b = input(dir.path(), "b", 2, 0o40700);
    let out = dir.path().join("out.barecat");
    let o = run_t(
        bin("barecat-merge"),
        args(&[&"-s", &"30K", &"-o", &out, &a, &b]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("merged"), "{}", stdout(&o));
    let want = union(&[&a, &b]);
    assert_eq!(contents(&out), want);
    // No hole of the inputs was copied.
    let live: u64 = want.values().map(|v| v.len() as u64).sum();
    assert_eq!(physical(&out), live);
    let (c, v) = verify_json(&out, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(v["space"]["reclaimable_bytes"], 0);
    for s in Layout::current(&out).shard_files().unwrap() {
        assert!(fs::metadata(&s.path).unwrap().len() <= 30 << 10);
    }
    // The first input gives a shared directory its metadata; empty directories
    // come along.
    assert_eq!(dir_meta(&out, "shared"), dir_meta(&a, "shared"));
    assert!(Archive::open(&out).unwrap().exists("shared/empty").unwrap());
    py_verify(&out);
    let dump = py_dump(&out);
    assert_eq!(dump["num_files"].as_u64().unwrap(), want.len() as u64);
    // Nothing else was left in the directory.
    let left: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn duplicates_fail_before_anything_is_written_unless_ignored() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let b = dir.path().join("b.barecat");
    let dup_path = contents(&a).keys().nth(3).unwrap().clone();
    build(
        &b,
        Some(10_000),
        &[
            (dup_path.clone(), b"second version".to_vec()),
            ("b_only/x".into(), vec![9u8; 5000]),
        ],
    );
    let out = dir.path().join("out.barecat");
    let before = names(dir.path());
    let o = run_t(bin("barecat-merge"), args(&[&"-o", &out, &a, &b]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    let err = stderr(&o);
    assert!(err.contains(&dup_path), "{err}");
    assert!(
        err.contains("a.barecat") && err.contains("b.barecat"),
        "{err}"
    );
    assert!(err.contains("--ignore-duplicates"), "{err}");
    assert_eq!(names(dir.path()), before);
    let o = run_t(
        bin("barecat-merge"),
        args(&[&"--ignore-duplicates", &"-o", &out, &a, &b]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 duplicate(s) left out"),
        "{}",
        stdout(&o)
    );
    let got = contents(&out);
    assert_eq!(got[&dup_path], contents(&a)[&dup_path]);
    assert_eq!(got["b_only/x"], vec![9u8; 5000]);
    // The left-out duplicate's bytes were not copied.
    let live: u64 = got.values().map(|v| v.len() as u64).sum();
    assert_eq!(physical(&out), live);
    py_verify(&out);
}

#[test]
fn existing_output_needs_force_or_append() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let b = input(dir.path(), "b", 2, 0o40755);
    let out = dir.path().join("out.barecat");
    build(
        &out,
        None,
        &[
            ("old/file".into(), b"old".to_vec()),
            ("top_b.txt".into(), b"output's".to_vec()),
        ],
    );
    let old = contents(&out);
    let o = run_t(bin("barecat-merge"), args(&[&"-o", &out, &a]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(
        stderr(&o).contains("-f") && stderr(&o).contains("-a"),
        "{}",
        stderr(&o)
    );
    assert_eq!(contents(&out), old);
    // -a: the files already in the output win.
    let o = run_t(bin("barecat-merge"), args(&[&"-a", &"-o", &out, &b]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = contents(&out);
    assert_eq!(got["top_b.txt"], b"output's");
    assert_eq!(got["old/file"], b"old");
    assert_eq!(got.len(), old.len() + contents(&b).len() - 1);
    assert_eq!(verify_json(&out, false).0, 0);
    py_verify(&out);
    // -f (legacy spelling --overwrite): replaced.
    let o = run_t(
        bin("barecat-merge"),
        args(&[&a, &"--output", &out, &"--overwrite"]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&out), contents(&a));
    assert_eq!(verify_json(&out, false).0, 0);
    // -f and -a together: a usage error.
    let o = run_t(bin("barecat-merge"), args(&[&"-f", &"-a", &"-o", &out, &a]));
    assert_eq!(code(&o), 2);
}

#[test]
fn an_input_that_is_the_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let b = input(dir.path(), "b", 2, 0o40755);
    let want = contents(&a);
    for flag in ["-f", "-a"] {
        let o = run_t(bin("barecat-merge"), args(&[&flag, &"-o", &a, &b, &a]));
        assert_eq!(code(&o), 1);
        assert_clean_error(&o);
        assert!(stderr(&o).contains("is the output"), "{}", stderr(&o));
        assert_eq!(contents(&a), want);
    }
    // The same archive under another name (a link to its index).
    let alias = dir.path().join("alias.barecat");
    std::os::unix::fs::symlink(&a, &alias).unwrap();
    let o = run_t(
        bin("barecat-merge-symlink"),
        args(&[&"-f", &"-o", &a, &alias]),
    );
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert_eq!(contents(&a), want);
}

#[test]
fn bad_inputs_give_one_line_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let good = input(dir.path(), "g", 3, 0o40755);
    let junk = dir.path().join("junk.barecat");
    fs::write(&junk, vec![1u8; 3000]).unwrap();
    // An input with its middle shard gone, one with a short shard.
    let holed = input(dir.path(), "h", 4, 0o40755);
    fs::remove_file(Layout::current(&holed).shard_path(1)).unwrap();
    let short = input(dir.path(), "s", 5, 0o40755);
    let last = Layout::current(&short).shard_path(shard_count(&short) as u64 - 1);
    let len = fs::metadata(&last).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&last)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let out = dir.path().join("out.barecat");
    let before = names(dir.path());
    for (bad, needle) in [
        (dir.path().join("missing.barecat"), "missing.barecat"),
        (junk.clone(), "junk.barecat"),
        (holed.clone(), "shard"),
        (short.clone(), "shard"),
    ] {
        for tool in ["barecat-merge", "barecat-merge-symlink"] {
            let o = run_t(bin(tool), args(&[&"-o", &out, &good, &bad]));
            assert_eq!(code(&o), 1, "{tool} {bad:?}");
            assert_clean_error(&o);
            assert!(stderr(&o).contains(needle), "{tool}: {}", stderr(&o));
            assert_eq!(names(dir.path()), before, "{tool} {bad:?} left something");
        }
    }
    // A directory where a file is.
    let c = dir.path().join("c.barecat");
    let some_file = contents(&a).keys().next().unwrap().clone();
    build(&c, None, &[(format!("{some_file}/inside"), b"x".to_vec())]);
    let before = names(dir.path());
    for tool in ["barecat-merge", "barecat-merge-symlink"] {
        let o = run_t(
            bin(tool),
            args(&[&"--ignore-duplicates", &"-o", &out, &a, &c]),
        );
        assert_eq!(code(&o), 1, "{tool}");
        assert_clean_error(&o);
        assert!(stderr(&o).contains(&some_file), "{}", stderr(&o));
        assert_eq!(names(dir.path()), before);
    }
}

/// A directory tree on disk, packed as a tar (GNU tar) and a zip (Info-ZIP).
fn tar_and_zip(dir: &Path) -> (PathBuf, PathBuf, BTreeMap<String, Vec<u8>>) {
    let src = dir.join("tree");
    let mut want = BTreeMap::new();
    for i in 0..12u64 {
        let (p, data) = (
            format!("shared/from_tar_{i}.bin"),
            pseudo_random(900 + i, 700 * i as usize),
        );
        write_tree(&src, &[(&p, &data)]);
        want.insert(p, data);
    }
    write_tree(&src, &[("top_a.txt", b"tar's own top_a\n")]);
    want.insert("top_a.txt".into(), b"tar's own top_a\n".to_vec());
    let tarball = dir.join("in.tar.gz");
    run_ok(
        "tar",
        args(&[&"-czf", &tarball, &"-C", &src, &"shared", &"top_a.txt"]),
    );
    let zipfile = dir.join("in.zip");
    let o = std::process::Command::new("zip")
        .args(["-qr", zipfile.to_str().unwrap(), "shared", "top_a.txt"])
        .current_dir(&src)
        .output_bounded()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (tarball, zipfile, want)
}

#[test]
fn tar_and_zip_inputs_are_merged() {
    need!("tar", "zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let (tarball, zipfile, from_tar) = tar_and_zip(dir.path());
    // `top_a.txt` is in `a` and in both the tar and the zip.
    let out = dir.path().join("out.barecat");
    let before = names(dir.path());
    for input in [&tarball, &zipfile] {
        let o = run_t(bin("barecat-merge"), args(&[&"-o", &out, &a, input]));
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        assert_clean_error(&o);
        assert!(stderr(&o).contains("top_a.txt"), "{}", stderr(&o));
        assert!(stderr(&o).contains("--ignore-duplicates"), "{}", stderr(&o));
        assert_eq!(names(dir.path()), before, "nothing is left behind");
        // Symlink merges take barecat inputs only.
        let o = run_t(
            bin("barecat-merge-symlink"),
            args(&[&"-o", &out, &a, input]),
        );
        assert_eq!(code(&o), 1);
        assert_clean_error(&o);
        assert!(stderr(&o).contains("barecat inputs"), "{}", stderr(&o));
        assert_eq!(names(dir.path()), before);
    }
    // With --ignore-duplicates the first input wins, whatever its kind.
    let o = run_t(
        bin("barecat-merge"),
        args(&[&"--ignore-duplicates", &"-o", &out, &a, &tarball, &zipfile]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let mut want = union(&[&a]);
    for (k, v) in &from_tar {
        want.entry(k.clone()).or_insert_with(|| v.clone());
    }
    assert_eq!(contents(&out), want);
    assert_eq!(contents(&out)["top_a.txt"], b"a\n");
    py_verify(&out);
    // A tar first, then a barecat archive that holds one of its paths.
    let out2 = dir.path().join("out2.barecat");
    let o = run_t(bin("barecat-merge"), args(&[&"-o", &out2, &tarball, &a]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("top_a.txt"), "{}", stderr(&o));
    assert!(!Layout::exists(&out2).unwrap());
    let o = run_t(
        bin("barecat-merge"),
        args(&[&"--ignore-duplicates", &"-o", &out2, &tarball, &a]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&out2)["top_a.txt"], b"tar's own top_a\n");
    assert_eq!(contents(&out2).len(), want.len());
    py_verify(&out2);
    // A corrupt tar: one line, nothing left.
    let bad = dir.path().join("bad.tar");
    let mut header = vec![0u8; 1024];
    header[..5].copy_from_slice(b"x.txt");
    header[257..262].copy_from_slice(b"ustar");
    fs::write(&bad, &header).unwrap();
    let out3 = dir.path().join("out3.barecat");
    let o = run_t(bin("barecat-merge"), args(&[&"-o", &out3, &a, &bad]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("bad.tar"), "{}", stderr(&o));
    assert!(!Layout::exists(&out3).unwrap());
}

#[test]
fn merge_of_python_archives_with_gaps() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let mut parts = Vec::new();
    for k in 0..2 {
        let src = dir.path().join(format!("src{k}"));
        let tree: Vec<(String, Vec<u8>)> = (0..20)
            .map(|i| {
                (
                    format!("d{}/f{k}_{i}", i % 3),
                    pseudo_random(k * 100 + i, 300 * i as usize),
                )
            })
            .collect();
        let refs: Vec<(&str, &[u8])> = tree
            .iter()
            .map(|(p, d)| (p.as_str(), d.as_slice()))
            .collect();
        write_tree(&src, &refs);
        let p = dir.path().join(format!("p{k}.barecat"));
        run_ok_in(
            &src,
            py_barecat(),
            [
                "create".as_ref(),
                "-s".as_ref(),
                "16K".as_ref(),
                p.as_os_str(),
                "d0".as_ref(),
                "d1".as_ref(),
                "d2".as_ref(),
            ],
        );
        py(
            "pyfs.py",
            [
                "delete".as_ref(),
                p.as_os_str(),
                format!("d1/f{k}_4").as_ref(),
            ],
        );
        parts.push(p);
    }
    let want = union(&[&parts[0], &parts[1]]);
    let out = dir.path().join("out.barecat");
    run_ok(
        bin("barecat-merge"),
        args(&[&"-o", &out, &parts[0], &parts[1]]),
    );
    assert_eq!(contents(&out), want);
    py_verify(&out);
    let sym = dir.path().join("sym.barecat");
    run_ok(
        bin("barecat-merge-symlink"),
        args(&[&"-o", &sym, &parts[0], &parts[1]]),
    );
    assert_eq!(contents(&sym), want);
    py_verify(&sym);
}

#[test]
fn symlink_merge_links_shards_and_recounts_shared_directories() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40750);
    let b = input(dir.path(), "b", 2, 0o40700);
    let outdir = dir.path().join("merged");
    fs::create_dir(&outdir).unwrap();
    let out = outdir.join("out.barecat");
    let o = run_t(bin("barecat-merge-symlink"), args(&[&"-o", &out, &a, &b]));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let na = shard_count(&a);
    let nb = shard_count(&b);
    let links = Layout::current(&out).shard_files().unwrap();
    assert_eq!(links.len(), na + nb);
    for (i, s) in links.iter().enumerate() {
        assert_eq!(s.number, i as u64);
        assert!(s.is_symlink);
        let target = fs::read_link(&s.path).unwrap();
        assert!(target.is_relative(), "{target:?}");
        let (name, n) = if i < na { ("a", i) } else { ("b", i - na) };
        assert_eq!(
            target,
            PathBuf::from(format!("../{name}.barecat-shard-{n:05}"))
        );
    }
    let want = union(&[&a, &b]);
    assert_eq!(contents(&out), want);
    // "shared" exists in both inputs: counted once, not summed.
    let arch = Archive::open(&out).unwrap();
    let root = arch.root().unwrap();
    assert_eq!(root.num_files_tree as usize, want.len());
    assert_eq!(root.num_subdirs, 3); // only_a, only_b and shared (once)
    let shared = arch.listdir("shared").unwrap();
    assert_eq!(shared.dirs.len(), 1);
    assert_eq!(dir_meta(&out, "shared"), dir_meta(&a, "shared"));
    let (c, v) = verify_json(&out, false);
    assert_eq!(c, 0, "{v:#}");
    py_verify(&out);
    // Moving the whole tree keeps the relative links working.
    let moved = dir.path().parent().unwrap().join(format!(
        "{}-moved",
        dir.path().file_name().unwrap().to_string_lossy()
    ));
    fs::rename(dir.path(), &moved).unwrap();
    let out2 = moved.join("merged/out.barecat");
    assert_eq!(contents(&out2), want);
    fs::rename(&moved, dir.path()).unwrap();
    // Without -f an existing output is kept; with -f its old links are replaced.
    let o = run_t(bin("barecat-merge-symlink"), args(&[&"-o", &out, &b]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    let o = run_t(
        bin("barecat-merge-symlink"),
        args(&[&"-f", &"-o", &out, &b]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(shard_count(&out), nb);
    assert_eq!(contents(&out), contents(&b));
    // The multicall form of merge --symlink, with the legacy spelling.
    let o = run_t(
        bin("barecat-merge"),
        args(&[&"--symlink", &a, &"--output", &out, &"--overwrite"]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(contents(&out), contents(&a));
}

#[test]
fn symlink_merge_duplicates() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let b = dir.path().join("b.barecat");
    let dup = contents(&a).keys().nth(5).unwrap().clone();
    build(
        &b,
        None,
        &[
            (dup.clone(), b"other".to_vec()),
            ("z".into(), b"z".to_vec()),
        ],
    );
    let out = dir.path().join("out.barecat");
    let before = names(dir.path());
    let o = run_t(bin("barecat-merge-symlink"), args(&[&"-o", &out, &a, &b]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains(&dup), "{}", stderr(&o));
    assert!(stderr(&o).contains("a.barecat") && stderr(&o).contains("b.barecat"));
    assert_eq!(names(dir.path()), before);
    let o = run_t(
        bin("barecat-merge-symlink"),
        args(&[&"--ignore-duplicates", &"-o", &out, &a, &b]),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = contents(&out);
    assert_eq!(got[&dup], contents(&a)[&dup]);
    assert_eq!(got["z"], b"z");
    assert_eq!(verify_json(&out, false).0, 0);
    py_verify(&out);
}

#[test]
fn writes_into_symlinked_shards_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = input(dir.path(), "a", 1, 0o40755);
    let b = input(dir.path(), "b", 2, 0o40755);
    let out = dir.path().join("out.barecat");
    run_ok(bin("barecat-merge-symlink"), args(&[&"-o", &out, &a, &b]));
    let before_a = contents(&a);
    let before_b = contents(&b);
    let r = ArchiveWriter::open(&out, WriterOptions::with_mode(CreateMode::Append));
    assert!(
        matches!(r, Err(Error::SymlinkedShard { .. })),
        "{:?}",
        r.err()
    );
    let c = input(dir.path(), "c", 3, 0o40755);
    let o = run_t(bin("barecat-merge"), args(&[&"-a", &"-o", &out, &c]));
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(contents(&a), before_a);
    assert_eq!(contents(&b), before_b);
    // Allowed explicitly, the writer appends through the last link.
    let mut w = ArchiveWriter::open(
        &out,
        WriterOptions {
            mode: CreateMode::Append,
            allow_symlinked_shards: true,
            ..WriterOptions::default()
        },
    )
    .unwrap();
    w.add_file("added/through/link", meta(), b"new", None)
        .unwrap();
    w.finish().unwrap();
    assert_eq!(
        Archive::open(&out)
            .unwrap()
            .read("added/through/link")
            .unwrap(),
        b"new"
    );
    assert_eq!(contents(&a), before_a);
}

/// An archive without holes (its files written once, none removed), over several
/// shards of at most 25,000 bytes, with a directory of its own metadata and an
/// empty one.
fn whole_input(dir: &Path, name: &str, seed: u64) -> PathBuf {
    let p = dir.join(format!("{name}.barecat"));
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            shard_size_limit: Some(25_000),
            ..WriterOptions::default()
        },
    )
    .unwrap();
    w.add_dir(
        "shared",
        Meta {
            mode: Some(0o40751),
            uid: Some(seed as u32),
            gid: Some(9),
            mtime_ns: Some(1_650_000_000_000_000_000),
        },
    )
    .unwrap();
    w.add_dir("shared/empty", meta()).unwrap();
    for (path, data) in sample_files(&format!("whole_{name}"), 30, 4000, seed) {
        w.add_file(&path, meta(), &data, None).unwrap();
    }
    w.finish().unwrap();
    assert!(shard_count(&p) >= 3);
    p
}

fn merge_lib(out: &Path, inputs: &[&Path], mode: OutputMode) -> barecat::Result<MergeReport> {
    let opts = MergeOptions {
        output_mode: mode,
        shard_size_limit: Some(25_000),
        ..MergeOptions::default()
    };
    let inputs: Vec<PathBuf> = inputs.iter().map(|p| p.to_path_buf()).collect();
    barecat::maint::merge::merge(out, &inputs, &opts, &Progress::hidden())
}

fn empty_output(p: &Path) {
    let w = ArchiveWriter::open(
        p,
        WriterOptions {
            shard_size_limit: Some(25_000),
            ..WriterOptions::default()
        },
    )
    .unwrap();
    w.finish().unwrap();
}

/// Rows and directories (with statistics and metadata, the root's aside) of an
/// archive.
fn rows(p: &Path) -> (Vec<barecat::FileInfo>, Vec<barecat::DirInfo>) {
    let a = Archive::open(p).unwrap();
    let files = a
        .files(barecat::FileOrder::Path, "")
        .map(|f| f.unwrap())
        .collect();
    let dirs = a
        .dirs("")
        .unwrap()
        .into_iter()
        .map(|mut d| {
            if d.path.is_empty() {
                d.meta = Meta::default();
            }
            d
        })
        .collect();
    (files, dirs)
}

/// Into a new output, or onto an empty one, a first input without holes is taken
/// over whole: the output has exactly its rows (same shards and offsets), its
/// directories with their metadata and statistics, verifies here and in Python
/// barecat, and takes new files; the inputs after it are merged file by file. An
/// input with holes, or an output with files, goes file by file.
#[test]
fn a_first_input_without_holes_is_copied_whole() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = whole_input(dir.path(), "a", 1);
    let b = input(dir.path(), "b", 2, 0o40700);
    let n = Archive::open(&a).unwrap().count_files().unwrap();

    let out = dir.path().join("out.barecat");
    let r = merge_lib(&out, &[&a, &b], OutputMode::New).unwrap();
    assert_eq!(r.copied_whole, n);
    assert_eq!(contents(&out), union(&[&a, &b]));
    let (fa, da) = rows(&a);
    let (fo, dout) = rows(&out);
    for f in &fa {
        assert!(
            fo.contains(f),
            "{f:?} not in the output as it is in the input"
        );
    }
    for d in da.iter().filter(|d| d.path.starts_with("whole_")) {
        assert!(dout.contains(d), "{d:?}");
    }
    assert_eq!(dir_meta(&out, "shared"), dir_meta(&a, "shared"));
    assert!(Archive::open(&out).unwrap().exists("shared/empty").unwrap());
    let (c, v) = verify_json(&out, false);
    assert_eq!(c, 0, "{v:#}");
    assert_eq!(v["space"]["reclaimable_bytes"], 0);
    py_verify(&out);
    let mut w = open_append(&out);
    w.add_file("after/new.txt", meta(), b"new", None).unwrap();
    w.finish().unwrap();
    py_verify(&out);

    // Onto an empty output: the same rows as the input, the output's own shard
    // limit and root kept.
    let onto = dir.path().join("onto.barecat");
    empty_output(&onto);
    let r = merge_lib(&onto, &[&a], OutputMode::Append).unwrap();
    assert_eq!(r.copied_whole, n);
    assert_eq!(rows(&onto), rows(&a));
    assert_eq!(
        Archive::open(&onto).unwrap().shard_size_limit().unwrap(),
        25_000
    );
    py_verify(&onto);
    // It has files now: the next merge copies file by file.
    let r = merge_lib(&onto, &[&b], OutputMode::Append).unwrap();
    assert_eq!(r.copied_whole, 0);
    assert_eq!(contents(&onto), union(&[&a, &b]));

    // A first input with holes goes file by file.
    let other = dir.path().join("other.barecat");
    let r = merge_lib(&other, &[&b, &a], OutputMode::New).unwrap();
    assert_eq!(r.copied_whole, 0);
    assert_eq!(contents(&other), union(&[&b, &a]));
    let left: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A first input whose bytes do not match their CRC32C fails the merge as the
/// file-by-file copy does, naming the file; an empty output it was to be copied
/// onto is left as it was (no file, its shards empty), a new one is not made.
#[test]
fn a_damaged_input_taken_over_whole_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = whole_input(dir.path(), "a", 3);
    let victim = Archive::open(&a)
        .unwrap()
        .files(barecat::FileOrder::Address, "")
        .map(|f| f.unwrap())
        .find(|f| f.shard == 1 && f.size > 0)
        .unwrap();
    let shard = Layout::current(&a).shard_path(1);
    let mut bytes = fs::read(&shard).unwrap();
    bytes[victim.offset as usize] ^= 0xff;
    fs::write(&shard, bytes).unwrap();

    let onto = dir.path().join("onto.barecat");
    empty_output(&onto);
    let before = names(dir.path());
    match merge_lib(&onto, &[&a], OutputMode::Append) {
        Err(Error::CrcMismatch { member, .. }) => assert!(member.contains(&victim.path)),
        other => panic!("{other:?}"),
    }
    assert_eq!(names(dir.path()), before);
    assert_eq!(Archive::open(&onto).unwrap().count_files().unwrap(), 0);
    for s in Layout::current(&onto).shard_files().unwrap() {
        assert_eq!(
            fs::metadata(&s.path).unwrap().len(),
            0,
            "{}",
            s.path.display()
        );
    }

    let out = dir.path().join("out.barecat");
    assert!(matches!(
        merge_lib(&out, &[&a], OutputMode::New),
        Err(Error::CrcMismatch { .. })
    ));
    assert_eq!(names(dir.path()), before);
}

/// An input in WAL mode (Python barecat's `wal=True`) taken over whole gives an
/// output with the rollback journal, as every archive is written.
#[test]
fn a_first_input_in_wal_mode_gives_an_output_without_wal() {
    let dir = tempfile::tempdir().unwrap();
    let a = whole_input(dir.path(), "a", 5);
    let conn = rusqlite::Connection::open(&a).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(conn);
    let out = dir.path().join("out.barecat");
    let r = merge_lib(&out, &[&a], OutputMode::New).unwrap();
    assert!(r.copied_whole > 0);
    // Bytes 18 and 19 of the header: 1 for the rollback journal, 2 for WAL.
    assert_eq!(&fs::read(&out).unwrap()[18..20], &[1, 1]);
    assert_eq!(contents(&out), contents(&a));
}
