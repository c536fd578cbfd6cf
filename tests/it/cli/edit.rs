//! `barecat rm`, `mv`, `chmod`, `touch` (editing in place) and `barecat-cat` of a
//! list. Python barecat has the edits only in its API: the results are compared
//! with what its API makes of the same archive (tests/py/edit_api.py), and its
//! verify must pass on ours. Where its API is wrong (a rename into a missing
//! directory, docs/FORMAT.md §11.9), the test says so and checks that ours is right.

use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::maint::*;
use crate::support::*;
use barecat::{Archive, ArchiveWriter, Entry, Layout, Meta, WriterOptions};
use serde_json::{json, Value};

fn barecat() -> PathBuf {
    bin("barecat")
}

/// An archive over several 8 KiB shards: train/cls_a, train/cls_b, val, an empty
/// directory, a file at the top; directories with metadata.
fn sample(dir: &Path) -> PathBuf {
    let p = dir.join("s.barecat");
    let mut w = ArchiveWriter::open(
        &p,
        WriterOptions {
            shard_size_limit: Some(8192),
            ..WriterOptions::default()
        },
    )
    .unwrap();
    let dmeta = Meta {
        mode: Some(0o40755),
        uid: Some(1000),
        gid: Some(1000),
        mtime_ns: Some(1_600_000_000_000_000_000),
    };
    for d in ["train", "train/cls_a", "train/cls_b", "val", "empty"] {
        w.add_dir(d, dmeta).unwrap();
    }
    for (i, (path, size)) in [
        ("train/cls_a/a0.bin", 3000),
        ("train/cls_a/a1.bin", 2500),
        ("train/cls_a/sub/a2.bin", 100),
        ("train/cls_b/b0.bin", 4000),
        ("train/cls_b/b1.txt", 10),
        ("val/v0.bin", 1200),
        ("val/v1.bin", 0),
        ("val/.hidden.bin", 7),
        ("val/deep/v2.bin", 900),
        ("top.txt", 5),
    ]
    .into_iter()
    .enumerate()
    {
        w.add_file(path, meta(), &pseudo_random(i as u64 + 1, size), None)
            .unwrap();
    }
    w.finish().unwrap();
    p
}

fn copy_to(from: &Path, to: &Path) -> PathBuf {
    for (a, b) in [(from.to_path_buf(), to.to_path_buf())].into_iter().chain(
        Layout::current(from)
            .shard_files()
            .unwrap()
            .into_iter()
            .map(|s| {
                let name = s.path.file_name().unwrap().to_string_lossy().replace(
                    &*from.file_name().unwrap().to_string_lossy(),
                    &to.file_name().unwrap().to_string_lossy(),
                );
                (s.path.clone(), to.with_file_name(name))
            }),
    ) {
        fs::copy(a, b).unwrap();
    }
    to.to_path_buf()
}

/// Apply `ops` with Python barecat's API (tests/py/edit_api.py).
fn py_edit(archive: &Path, ops: Value) {
    let f = archive.with_extension("ops.json");
    fs::write(&f, ops.to_string()).unwrap();
    py("edit_api.py", [archive.as_os_str(), f.as_os_str()]);
}

/// The files (content and metadata) and directory statistics as Python sees them.
fn view(archive: &Path) -> (Value, Value) {
    let d = py_dump(archive);
    assert_eq!(
        d["integrity_ok"],
        true,
        "{}: Python's integrity check",
        archive.display()
    );
    (d["files"].clone(), d["dirs"].clone())
}

fn ours<S: AsRef<OsStr>>(args: &[S]) -> std::process::Output {
    run_t(barecat(), args)
}

fn ok<S: AsRef<OsStr>>(args: &[S]) -> String {
    let o = ours(args);
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    stdout(&o)
}

fn assert_clean(archive: &Path) {
    let (c, v) = verify_json(archive, false);
    assert_eq!(c, 0, "verify: {v}");
    py_verify(archive);
}

fn file_paths(archive: &Path) -> Vec<String> {
    contents(archive).into_keys().collect()
}

#[test]
fn rm_removes_what_pythons_api_removes_with_right_statistics() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let b = copy_to(&a, &dir.path().join("p.barecat"));
    let out = ok(&[
        OsStr::new("rm"),
        OsStr::new("-v"),
        OsStr::new("-r"),
        a.as_os_str(),
        OsStr::new("train/cls_a"),
        OsStr::new("val/*.bin"),
        OsStr::new("top.txt"),
    ]);
    assert_eq!(
        out,
        "removed: train/cls_a/ (3 files, 5.5K)\nremoved: val/v0.bin\nremoved: val/v1.bin\n\
         removed: top.txt\n"
    );
    py_edit(
        &b,
        json!([
            ["rmtree", "train/cls_a"],
            ["remove", "val/v0.bin"],
            ["remove", "val/v1.bin"],
            ["remove", "top.txt"]
        ]),
    );
    assert_eq!(view(&a), view(&b));
    assert_clean(&a);
    // -d removes empty directories, also those emptied by the same command.
    ok(&[
        OsStr::new("rm"),
        OsStr::new("-q"),
        OsStr::new("-d"),
        a.as_os_str(),
        OsStr::new("empty"),
        OsStr::new("val/deep/v2.bin"),
        OsStr::new("val/deep"),
    ]);
    py_edit(
        &b,
        json!([
            ["rmdir", "empty"],
            ["remove", "val/deep/v2.bin"],
            ["rmdir", "val/deep"]
        ]),
    );
    assert_eq!(view(&a), view(&b));
    assert_clean(&a);
}

#[test]
fn rm_dry_run_changes_nothing() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let before: Vec<Vec<u8>> = std::iter::once(fs::read(&a).unwrap())
        .chain(
            Layout::current(&a)
                .shard_files()
                .unwrap()
                .iter()
                .map(|s| fs::read(&s.path).unwrap()),
        )
        .collect();
    let o = ours(&[
        OsStr::new("rm"),
        OsStr::new("-n"),
        OsStr::new("-r"),
        a.as_os_str(),
        OsStr::new("train"),
        OsStr::new("train/cls_b/b0.bin"),
        OsStr::new("**/v1.bin"),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "would remove: train/ (5 files, 9.4K)\nwould remove: val/v1.bin\n"
    );
    assert!(
        stderr(&o).contains("would remove 6 files"),
        "{}",
        stderr(&o)
    );
    let after: Vec<Vec<u8>> = std::iter::once(fs::read(&a).unwrap())
        .chain(
            Layout::current(&a)
                .shard_files()
                .unwrap()
                .iter()
                .map(|s| fs::read(&s.path).unwrap()),
        )
        .collect();
    assert!(before == after, "a dry run changed the archive");
}

#[test]
fn rm_gives_back_the_end_of_the_last_shard() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let before = physical(&a);
    let o = ours(&[
        OsStr::new("rm"),
        a.as_os_str(),
        OsStr::new("top.txt"),
        OsStr::new("train/cls_b/b1.txt"),
    ]);
    assert_eq!(code(&o), 0);
    // top.txt was the last file written: its 5 bytes go; b1.txt's 10 stay a hole.
    assert_eq!(physical(&a), before - 5);
    assert!(stderr(&o).contains("10 left as holes"), "{}", stderr(&o));
    assert_clean(&a);
}

#[test]
fn rm_reports_each_operand_it_cannot_remove() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let o = ours(&[
        OsStr::new("rm"),
        a.as_os_str(),
        OsStr::new("nope.txt"),
        OsStr::new("train"),
        OsStr::new("top.txt"),
    ]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(
        err.contains("nope.txt: no such file or directory in archive"),
        "{err}"
    );
    assert!(
        err.contains("train: is a directory (-r removes it"),
        "{err}"
    );
    assert!(
        !file_paths(&a).contains(&"top.txt".to_string()),
        "the others are removed"
    );
    // -f: a missing path is no error.
    let o = ours(&[
        OsStr::new("rm"),
        OsStr::new("-f"),
        a.as_os_str(),
        OsStr::new("nope"),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = ours(&[
        OsStr::new("rm"),
        OsStr::new("-d"),
        a.as_os_str(),
        OsStr::new("train"),
    ]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("train: directory not empty"),
        "{}",
        stderr(&o)
    );
    let o = ours(&[
        OsStr::new("rm"),
        OsStr::new("-r"),
        a.as_os_str(),
        OsStr::new("/"),
    ]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("cannot remove the root directory"));
    // Usage errors and a missing archive.
    let o = ours(&[OsStr::new("rm"), a.as_os_str()]);
    assert_eq!(code(&o), 2, "no PATH");
    let missing = dir.path().join("missing.barecat");
    let o = ours(&[OsStr::new("rm"), missing.as_os_str(), OsStr::new("x")]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(stderr(&o).contains("missing.barecat"), "{}", stderr(&o));
    assert_clean(&a);
}

#[test]
fn rm_reads_paths_from_a_list() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let list = dir.path().join("list");
    fs::write(&list, b"val/v0.bin\0train/cls_b/b0.bin\0\0top.txt").unwrap();
    ok(&[
        OsStr::new("rm"),
        OsStr::new("-0"),
        OsStr::new("-T"),
        list.as_os_str(),
        a.as_os_str(),
    ]);
    let left = file_paths(&a);
    for gone in ["val/v0.bin", "train/cls_b/b0.bin", "top.txt"] {
        assert!(!left.contains(&gone.to_string()), "{gone} is still there");
    }
    assert_eq!(left.len(), 7);
    assert_clean(&a);
}

#[test]
fn mv_moves_what_pythons_rename_moves() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let b = copy_to(&a, &dir.path().join("p.barecat"));
    let out = ok(&[
        OsStr::new("mv"),
        OsStr::new("-v"),
        a.as_os_str(),
        OsStr::new("train/cls_b"),
        OsStr::new("val/renamed_b"),
    ]);
    assert_eq!(out, "moved: train/cls_b/ -> val/renamed_b\n");
    // Into an existing directory, keeping the names (a glob and a plain path).
    ok(&[
        OsStr::new("mv"),
        OsStr::new("-q"),
        a.as_os_str(),
        OsStr::new("top.txt"),
        OsStr::new("train/cls_a/a*.bin"),
        OsStr::new("val"),
    ]);
    py_edit(
        &b,
        json!([
            ["rename", "train/cls_b", "val/renamed_b"],
            ["rename", "top.txt", "val/top.txt"],
            ["rename", "train/cls_a/a0.bin", "val/a0.bin"],
            ["rename", "train/cls_a/a1.bin", "val/a1.bin"]
        ]),
    );
    assert_eq!(view(&a), view(&b));
    assert_clean(&a);
}

#[test]
fn mv_into_a_missing_directory_keeps_the_statistics_right_unlike_python() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let b = copy_to(&a, &dir.path().join("p.barecat"));
    ok(&[
        OsStr::new("mv"),
        a.as_os_str(),
        OsStr::new("train/cls_a"),
        OsStr::new("new/deeper/cls"),
    ]);
    assert_clean(&a);
    let (files, dirs) = view(&a);
    assert!(files.get("new/deeper/cls/sub/a2.bin").is_some());
    assert_eq!(dirs["new"], json!([1, 0, 3, 5600]));
    assert_eq!(dirs[""][2], 10, "the root still counts every file");
    // Python barecat 0.3.1's rename_dir does not make the missing parents (spec
    // docs/FORMAT.md §11.9): its own integrity check then fails. Not copied.
    py_edit(&b, json!([["rename", "train/cls_a", "new/deeper/cls"]]));
    assert_eq!(py_dump(&b)["integrity_ok"], false);
}

#[test]
fn mv_refuses_what_cannot_be_done() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let before = contents(&a);
    for (args, needle) in [
        (
            vec!["top.txt", "val/v0.bin", "train/cls_b/b1.txt"],
            "not a directory",
        ),
        (
            vec!["top.txt", "val/v0.bin"],
            "already exists (-f replaces it)",
        ),
        (vec!["train", "train/cls_a/inside"], "into itself"),
        (vec!["nope", "x"], "nope: no such file or directory"),
        (vec!["val", "top.txt/x"], "top.txt is a file"),
    ] {
        let mut argv = vec![OsStr::new("mv"), a.as_os_str()];
        argv.extend(args.iter().map(OsStr::new));
        let o = ours(&argv);
        assert_eq!(code(&o), 1, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    assert!(contents(&a) == before, "a refused move changed something");
    let o = ours(&[OsStr::new("mv"), a.as_os_str(), OsStr::new("x")]);
    assert_eq!(code(&o), 2, "one path is a usage error");
    // -f replaces a file; -n only says what would move.
    let o = ours(&[
        OsStr::new("mv"),
        OsStr::new("-n"),
        OsStr::new("-f"),
        a.as_os_str(),
        OsStr::new("top.txt"),
        OsStr::new("val/v0.bin"),
    ]);
    assert_eq!(stdout(&o), "would move: top.txt -> val/v0.bin\n");
    assert!(contents(&a) == before);
    ok(&[
        OsStr::new("mv"),
        OsStr::new("-f"),
        a.as_os_str(),
        OsStr::new("top.txt"),
        OsStr::new("val/v0.bin"),
    ]);
    let now = contents(&a);
    assert_eq!(now["val/v0.bin"], before["top.txt"]);
    assert_clean(&a);
}

#[test]
fn chmod_and_touch_set_what_pythons_api_sets() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let a = sample(dir.path());
    let b = copy_to(&a, &dir.path().join("p.barecat"));
    ok(&[
        OsStr::new("chmod"),
        OsStr::new("-q"),
        a.as_os_str(),
        OsStr::new("600"),
        OsStr::new("top.txt"),
    ]);
    ok(&[
        OsStr::new("chmod"),
        OsStr::new("-q"),
        OsStr::new("-R"),
        a.as_os_str(),
        OsStr::new("u=rwx,go="),
        OsStr::new("train/cls_a"),
    ]);
    ok(&[
        OsStr::new("touch"),
        OsStr::new("-q"),
        OsStr::new("-d"),
        OsStr::new("@1500000000.25"),
        a.as_os_str(),
        OsStr::new("val/*.bin"),
    ]);
    let t = 1_500_000_000_250_000_000i64;
    py_edit(
        &b,
        json!([
            ["chmod", "top.txt", 0o100600],
            ["chmod", "train/cls_a", 0o40700],
            ["chmod", "train/cls_a/sub", 0o700],
            ["chmod", "train/cls_a/a0.bin", 0o100700],
            ["chmod", "train/cls_a/a1.bin", 0o100700],
            ["chmod", "train/cls_a/sub/a2.bin", 0o100700],
            ["mtime", "val/v0.bin", t],
            ["mtime", "val/v1.bin", t]
        ]),
    );
    assert_eq!(view(&a), view(&b));
    let arch = Archive::open(&a).unwrap();
    assert_eq!(arch.stat("train/cls_a").unwrap().meta().mode, Some(0o40700));
    // A directory made by the writer has no mode: only permission bits are set.
    assert_eq!(
        arch.stat("train/cls_a/sub").unwrap().meta().mode,
        Some(0o700)
    );
    drop(arch);
    // touch makes an empty file for a missing path, not with -c.
    ok(&[
        OsStr::new("touch"),
        OsStr::new("-q"),
        a.as_os_str(),
        OsStr::new("new/dir/.done"),
    ]);
    ok(&[
        OsStr::new("touch"),
        OsStr::new("-q"),
        OsStr::new("-c"),
        a.as_os_str(),
        OsStr::new("not/made"),
    ]);
    let arch = Archive::open(&a).unwrap();
    match arch.stat("new/dir/.done").unwrap() {
        Entry::File(f) => {
            assert_eq!(f.size, 0);
            assert_eq!(f.meta.mode.unwrap() & 0o170000, 0o100000);
        }
        e => panic!("{e:?}"),
    }
    assert!(!arch.exists("not/made").unwrap());
    drop(arch);
    assert_clean(&a);
    // Bad modes and dates are usage errors.
    for args in [
        vec!["chmod", "a.barecat", "u+q", "x"],
        vec!["chmod", "a.barecat", "9", "x"],
        vec!["touch", "-d", "yesterday", "a.barecat", "x"],
    ] {
        let o = ours(&args);
        assert_eq!(code(&o), 2, "{args:?}");
    }
}

#[test]
fn cat_writes_the_files_a_list_names() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.barecat");
    let files: Vec<(String, Vec<u8>)> = (0..300)
        .map(|i| {
            (
                format!("d{}/f{i:03}.bin", i % 7),
                pseudo_random(i, (i % 50) as usize),
            )
        })
        .collect();
    build(&p, None, &files);
    let want: Vec<u8> = files.iter().flat_map(|(_, d)| d.clone()).collect();
    let list: String = files.iter().map(|(p, _)| format!("{p}\n")).collect();
    let lf = dir.path().join("list.txt");
    fs::write(&lf, &list).unwrap();
    let cat = bin("barecat-cat");
    // -T FILE
    let o = run_t(&cat, [p.as_os_str(), OsStr::new("-T"), lf.as_os_str()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout == want);
    // stdin, newline- and NUL-separated, after PATH arguments.
    for (input, extra) in [
        (list.clone().into_bytes(), None),
        (list.replace('\n', "\0").into_bytes(), Some("-0")),
    ] {
        let mut args = vec![p.as_os_str().to_owned()];
        args.extend(extra.map(Into::into));
        args.push("d0/f000.bin".into());
        args.extend(["-T".into(), "-".into()]);
        let mut child = Command::new(&cat)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
        let o = child.output_bounded().unwrap();
        writer.join().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let mut expected = files[0].1.clone();
        expected.extend(&want);
        assert!(o.stdout == expected, "{extra:?}");
    }
    // A missing path or a directory is reported; the others are written.
    fs::write(&lf, "d0/f000.bin\nnope\nd1\nd1/f001.bin\n").unwrap();
    let o = run_t(&cat, [p.as_os_str(), OsStr::new("-T"), lf.as_os_str()]);
    assert_eq!(code(&o), 1);
    assert_eq!(stderr(&o).lines().count(), 2, "{}", stderr(&o));
    let mut expected = files[0].1.clone();
    expected.extend(&files[1].1);
    assert!(o.stdout == expected);
    // One path as before: a missing one is one line and exit status 1.
    let o = run_t(&cat, [p.as_os_str(), OsStr::new("nope")]);
    assert_eq!(code(&o), 1);
    assert_clean_error(&o);
    assert!(o.stdout.is_empty());
}
