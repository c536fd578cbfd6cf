//! `barecat list` (`l`, `t`), `find` and `tree` against Python barecat 0.3.1's
//! `barecat` command: the same archives, the same arguments, byte-identical output
//! (docs/FORMAT.md §8.4); and the bugs of Python's (docs/FORMAT.md §11) that we do not copy, each
//! named. `du`, `index-to-csv` and `to-ncdu-json` are compared on the same archives
//! too (maint/reports.rs covers their formats).
//!
//! Python's side runs the `barecat` console script's entry point with each argument
//! list in a child forked from one interpreter (tests/py/cli_many.py), so that a
//! hundred cases cost seconds; one case runs the installed `bin/barecat` itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::*;
use barecat::{ArchiveWriter, Meta, WriterOptions};

/// One run: exit status, stdout, stderr.
#[derive(Debug, Clone)]
struct Run {
    code: i32,
    out: Vec<u8>,
    err: String,
}

/// Python barecat's CLI on every argument list (see tests/py/cli_many.py).
fn python_many(cases: &[Vec<String>]) -> Vec<Run> {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(python())
        .arg(py_script("cli_many.py"))
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let json = serde_json::to_vec(cases).unwrap();
        child.stdin.take().unwrap().write_all(&json).unwrap();
    }
    let o = child.output_bounded().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let codes: Vec<i32> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(codes.len(), cases.len());
    codes
        .into_iter()
        .enumerate()
        .map(|(n, code)| Run {
            code,
            out: fs::read(dir.path().join(format!("{n}.out"))).unwrap(),
            err: fs::read_to_string(dir.path().join(format!("{n}.err"))).unwrap(),
        })
        .collect()
}

fn ours(args: &[String]) -> Run {
    let o: Output = Command::new(bin("barecat"))
        .args(args)
        .output_bounded()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        out: o.stdout,
        err: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Argument lists from lines: `ARCH` stands for the archive; words are separated by
/// spaces (a `\s` inside a word is a space).
fn cases(archive: &Path, lines: &str) -> Vec<Vec<String>> {
    lines
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.split(' ')
                .map(|w| {
                    w.replace("ARCH", archive.to_str().unwrap())
                        .replace("\\s", " ")
                })
                .collect()
        })
        .collect()
}

/// Run every case both ways; return a description of each difference.
fn compare(archive: &Path, lines: &str) -> Vec<String> {
    let cases = cases(archive, lines);
    let theirs = python_many(&cases);
    let mut diffs = Vec::new();
    for (args, py) in cases.iter().zip(theirs) {
        let us = ours(args);
        assert!(
            !us.err.contains("panicked") && !us.err.contains("internal error"),
            "{args:?}: {}",
            us.err
        );
        assert_eq!(py.code, 0, "{args:?}: Python failed: {}", py.err);
        if us.out != py.out || us.code != 0 {
            diffs.push(format!(
                "{args:?} (exit {}):\n--- python\n{}--- ours\n{}{}",
                us.code,
                String::from_utf8_lossy(&py.out),
                String::from_utf8_lossy(&us.out),
                us.err
            ));
        }
    }
    diffs
}

fn meta(mode: Option<u32>, uid: Option<u32>, mtime_ns: Option<i64>) -> Meta {
    Meta {
        mode,
        uid,
        gid: uid,
        mtime_ns,
    }
}

/// An archive written by our library with the awkward cases of a listing: entries
/// added in no particular order (row order is not path order), hidden names, names
/// with spaces, brackets, quotes and non-ASCII characters, a name that sorts before
/// `/` next to a directory (`train.old`), empty directories, every kind of mode
/// (type bits or not, setuid, NULL), owners known, unknown and NULL, times of this
/// year, of another, NULL, and one a float rounding carries into the next minute.
fn rich_archive(dir: &Path) -> PathBuf {
    let p = dir.join("rich.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    let now = barecat::core::index::now_ns();
    // 0.3 µs before a whole minute of an hour ago: Python's float seconds round up.
    let minute = (now / 60_000_000_000) * 60_000_000_000 - 3_600_000_000_000;
    let metas = [
        meta(Some(0o100644), Some(0), Some(minute - 300)),
        meta(Some(0o104755), Some(12345), Some(1_577_880_000_000_000_000)),
        meta(Some(0o644), Some(1), Some(1_600_000_019_999_999_700)),
        meta(None, None, None),
        meta(Some(0o120777), Some(0), Some(now)),
    ];
    let names = [
        "train/cls1/img1.jpg",
        "val/b/.hidden.jpg",
        "train/cls2/img2.JPG",
        "train.old/x.txt",
        "top.txt",
        "a b/with space.txt",
        "x[1]/br[a]ck.png",
        "\u{fc}n\u{ef}/\u{65e5}\u{672c}.txt",
        "train/cls1/.cache/c.bin",
        "train/direct.jpg",
        "val/a/img3.jpg",
        "train/cls2/deep/er/img4.jpg",
        ".hidden_top",
        "Train/Upper.jpg",
        "quote\"s/back\\slash.txt",
        "train/cls1/img0.jpg",
        "val/a/z.png",
        "train/sub/deep/img5.jpg",
        "zz/only",
        "train/cls1/img9.txt",
    ];
    for (i, name) in names.iter().enumerate() {
        let data = pseudo_random(i as u64, 100 * i);
        w.add_file(name, metas[i % metas.len()], &data, None)
            .unwrap();
    }
    w.add_dir("emptydir", meta(Some(0o40755), Some(0), Some(now)))
        .unwrap();
    w.add_dir("train/empty", meta(Some(0o755), Some(1), None))
        .unwrap();
    w.finish().unwrap();
    p
}

/// An archive written by Python barecat itself (so its `sqlite_stat1` is Python's),
/// with mostly the same names as [`rich_archive`].
fn python_archive(dir: &Path) -> PathBuf {
    let p = dir.join("py.barecat");
    let script = r#"
import sys, random, barecat
rng = random.Random(3)
paths = [f"{d}/{s}/{n}{i}.{e}" for d in ["train", "val", "train.old", "x[1]"]
         for s in ["cls1", "cls2", ".cache", "sub/deep"]
         for i in range(3) for n, e in [("img", "jpg"), (".dot", "txt"), ("Z", "png"), ("b", "JPG")]]
paths += ["top.txt", "train/direct.jpg", "train/cls1/img1.jpg", "a b/with space.txt",
          ".hidden_top", "emptydir/x", "train/cls2/deep/er/img4.jpg"]
paths = sorted(set(paths))
rng.shuffle(paths)
with barecat.Barecat(sys.argv[1], readonly=False) as bc:
    for p in paths:
        bc[p] = bytes(rng.randrange(256) for _ in range(rng.randrange(2000)))
"#;
    run_ok(
        python(),
        [std::ffi::OsStr::new("-c"), script.as_ref(), p.as_os_str()],
    );
    p
}

/// Three files: small enough that SQLite scans the tables instead of reading index
/// ranges (Python's order is then row order).
fn tiny_archive(dir: &Path) -> PathBuf {
    let p = dir.join("tiny.barecat");
    let mut w = ArchiveWriter::open(&p, WriterOptions::default()).unwrap();
    for name in ["t/b/z.jpg", "t/a.jpg", "t/b/a.jpg"] {
        w.add_file(name, Meta::default(), b"xy", None).unwrap();
    }
    w.finish().unwrap();
    p
}

const LIST_CASES: &str = r"
list ARCH
list -l ARCH
list --jsonl ARCH
list -R ARCH
list -R -l ARCH
list -R --jsonl ARCH
list ARCH train
list -l ARCH train
list -l ARCH emptydir
list --jsonl ARCH val
list ARCH train/cls1/img1.jpg
list -l ARCH train/cls1/img1.jpg
list -R ARCH train
list -R ARCH top.txt
list ARCH train/
list -l ARCH train/**
list ARCH train/*
list ARCH */cls1/*
list ARCH train/*/*.jpg
list ARCH **
list -l ARCH **
list --jsonl ARCH **
list ARCH **/*
list ARCH **/*.jpg
list ARCH **/*.JPG
list ARCH train/**/*.jpg
list ARCH **/cls1/*
list ARCH **/cls1/**
list ARCH train/**/deep/*
list ARCH x[[]1]/*
list ARCH x?1?/**
list ARCH [tv]*/cls?/img*
list ARCH train/cls[12]/*
list ARCH train/cls[!1]/*
list ARCH train/*/[!.]*
list ARCH a\sb/*
list ARCH train*
list ARCH *.txt
list ARCH .*
list ARCH train/cls1/.cache/*
list ARCH ./train/*
list ARCH ./train
list ARCH train val emptydir
list -l ARCH train val
list ARCH train/**/
list ARCH **/
list ARCH /
";

const FIND_CASES: &str = r"
find ARCH
find ARCH train
find ARCH train/
find ARCH train/cls1
find ARCH train/cls1/img1.jpg
find ARCH -name *.jpg
find ARCH -name .*
find ARCH -name img?.*
find ARCH -name [!i]*
find ARCH -type f
find ARCH -type d
find ARCH -path train/*
find ARCH -path */cls1/*
find ARCH -path *.jpg
find ARCH -path train/
find ARCH -wholename train/cls?/*.jpg
find ARCH -size +1000
find ARCH -size -5
find ARCH -size 0
find ARCH -size +1k
find ARCH -size +1.5K
find ARCH -size +1M
find ARCH -size +10k -type d
find ARCH -maxdepth 1
find ARCH -maxdepth 2 -type d
find ARCH train -maxdepth 1
find ARCH train -maxdepth 0
find ARCH train -type f -name *.jpg -size +100
find ARCH train -path train/cls1/* -type f
find ARCH -print0
find ARCH train -print0 -type d
";

const TREE_CASES: &str = r"
tree ARCH
tree ARCH train
tree ARCH train/
tree ARCH train/cls2
tree ARCH -L 1
tree ARCH -L 2
tree ARCH --level 0
tree ARCH -d
tree ARCH train -d -L 1
tree ARCH val --dirs-only
";

const REPORT_CASES: &str = r"
du ARCH
du -a ARCH
du -a ARCH train
du -s -H ARCH
index-to-csv ARCH
";

/// Python prints counts without singular forms (`1 directories, 1 files`); we do
/// not copy that (docs/FORMAT.md §11.20). With the plurals put back, the rest is identical.
fn python_plurals(text: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(text)
        .replace(" 1 directory", " 1 directories")
        .replace("\n1 directory", "\n1 directories")
        .replace(" 1 file\n", " 1 files\n")
        .into_bytes()
}

#[test]
fn list_is_python_barecats_byte_for_byte() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    for archive in [rich_archive(dir.path()), python_archive(dir.path())] {
        let diffs = compare(&archive, LIST_CASES);
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }
}

#[test]
fn find_is_python_barecats_byte_for_byte() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    for archive in [rich_archive(dir.path()), python_archive(dir.path())] {
        let diffs = compare(&archive, FIND_CASES);
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    }
}

#[test]
fn tree_is_python_barecats_apart_from_plurals() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    for archive in [rich_archive(dir.path()), python_archive(dir.path())] {
        let cases = cases(&archive, TREE_CASES);
        let theirs = python_many(&cases);
        for (args, py) in cases.iter().zip(theirs) {
            let us = ours(args);
            assert_eq!(us.code, 0, "{args:?}: {}", us.err);
            assert_eq!(
                String::from_utf8_lossy(&python_plurals(&us.out)),
                String::from_utf8_lossy(&py.out),
                "{args:?}"
            );
        }
    }
}

#[test]
fn du_csv_and_ncdu_are_python_barecats() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    for archive in [rich_archive(dir.path()), python_archive(dir.path())] {
        let diffs = compare(&archive, REPORT_CASES);
        assert!(diffs.is_empty(), "{}", diffs.join("\n"));
        // The export's first line has a version and a time stamp.
        let c = cases(&archive, "to-ncdu-json ARCH");
        let py = &python_many(&c)[0];
        let us = ours(&c[0]);
        let body = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .split_once('\n')
                .unwrap()
                .1
                .to_string()
        };
        assert_eq!(body(&us.out), body(&py.out));
    }
}

#[test]
fn small_tables_are_scanned_in_row_order_as_sqlite_does() {
    // Below a few rows SQLite reads a whole table rather than an index range, so
    // Python's order is then row order: `t/b/z.jpg` before `t/a.jpg`.
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let archive = tiny_archive(dir.path());
    let lines = r"
        find ARCH t
        find ARCH -path t/*
        find ARCH t -name *.jpg
        list ARCH t/**/*.jpg
        list ARCH **/*.jpg
        list ARCH t/**
        list ARCH t/*/z*
        list -R ARCH
    ";
    let diffs = compare(&archive, lines);
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    let o = ours(&cases(&archive, "find ARCH t -type f")[0]);
    assert_eq!(o.out, b"t/b/z.jpg\nt/a.jpg\nt/b/a.jpg\n");
    // With many rows the same query reads the range of the path index: path order.
    let big = dir.path().join("big.barecat");
    let mut w = ArchiveWriter::open(&big, WriterOptions::default()).unwrap();
    for i in (0..20).rev() {
        w.add_file(&format!("t/f{i:02}"), Meta::default(), b"x", None)
            .unwrap();
    }
    w.finish().unwrap();
    let diffs = compare(&big, "find ARCH t -type f\nlist ARCH t/**");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
    let o = ours(&cases(&big, "find ARCH t -type f")[0]);
    assert!(String::from_utf8_lossy(&o.out).starts_with("t/f00\nt/f01\n"));
}

#[test]
fn the_real_python_program_agrees_with_the_forked_runner() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let archive = rich_archive(dir.path());
    let args = cases(&archive, "list -l ARCH train")[0].clone();
    let real = run(py_barecat(), &args);
    assert!(real.status.success());
    assert_eq!(real.stdout, python_many(std::slice::from_ref(&args))[0].out);
    assert_eq!(real.stdout, ours(&args).out);
}

#[test]
fn python_bugs_we_do_not_copy() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let archive = rich_archive(dir.path());
    // Owner and group 65534 ("nobody", whose group has its own name on Debian).
    rusqlite::Connection::open(&archive)
        .unwrap()
        .execute_batch(
            "UPDATE files SET uid = 65534, gid = 65534 WHERE path LIKE 'train/%';
             UPDATE dirs SET uid = 65534, gid = 65534 WHERE path LIKE 'train/%';",
        )
        .unwrap();
    let c = cases(
        &archive,
        r"
        list ARCH nope
        list ARCH train nope val
        list -R ARCH nope
        find ARCH nope
        tree ARCH nope
        tree ARCH top.txt
        tree ARCH train/cls2/deep
        find ARCH -size=-1k
        list -l ARCH train
    ",
    );
    let py = python_many(&c);
    let us: Vec<Run> = c.iter().map(|a| ours(a)).collect();

    // docs/FORMAT.md §11.20: `ls` of a missing path exits 0. The line on stdout stays (scripts read
    // it); the exit status says that something was missing.
    assert_eq!((py[0].code, us[0].code), (0, 1));
    assert_eq!(us[0].out, py[0].out);
    assert_eq!(us[0].out, b"ls: nope: No such file or directory\n");
    assert_eq!((py[1].code, us[1].code), (0, 1));
    assert_eq!(us[1].out, py[1].out, "the other paths are listed");
    // With -R Python prints nothing at all for a missing path.
    assert_eq!((py[2].code, py[2].out.len()), (0, 0));
    assert_eq!(us[2].code, 1);
    assert_eq!(us[2].out, b"ls: nope: No such file or directory\n");
    // A missing start path of find: nothing found, and an error saying why.
    assert_eq!((py[3].code, us[3].code), (0, 1));
    assert!(us[3].out.is_empty() && py[3].out.is_empty());
    assert!(us[3].err.contains("nope"), "{}", us[3].err);
    // tree of a missing path or of a file: Python draws an empty directory.
    assert_eq!(py[4].out, b"nope\n\n1 directories, 0 files\n");
    assert_eq!(py[5].out, b"top.txt\n\n1 directories, 0 files\n");
    for r in &us[4..6] {
        assert_eq!(r.code, 1);
        assert!(r.out.is_empty());
        assert_eq!(r.err.lines().count(), 1, "{}", r.err);
    }
    // docs/FORMAT.md §11.20: `tree` says "1 files".
    assert!(String::from_utf8_lossy(&py[6].out).ends_with("\n2 directories, 1 files\n"));
    assert!(String::from_utf8_lossy(&us[6].out).ends_with("\n2 directories, 1 file\n"));
    // Python's -size cannot take a negative number with a suffix as a separate
    // argument (argparse takes "-1k" for an option); both take `-size=-1k`, and we
    // take `-size -1k` too.
    assert_eq!(us[7].out, py[7].out);
    let sep = ours(&cases(&archive, "find ARCH -size -1k")[0]);
    assert_eq!(sep.out, us[7].out);
    // Python looks user and group names up in one table keyed by number: a group
    // whose number is a user's number shows that user's name. Here uid = gid =
    // 65534 ("nobody"); the group of that number has its own name.
    let group = run_ok(
        python(),
        ["-c", "import grp; print(grp.getgrgid(65534).gr_name)"],
    );
    let user = run_ok(
        python(),
        ["-c", "import pwd; print(pwd.getpwuid(65534).pw_name)"],
    );
    let (py_line, our_line) = (
        String::from_utf8_lossy(&py[8].out).into_owned(),
        String::from_utf8_lossy(&us[8].out).into_owned(),
    );
    if group.trim() != user.trim() {
        assert!(py_line.contains(&format!(" {:<8} {:<8} ", user.trim(), user.trim())));
        assert!(our_line.contains(&format!(" {:<8} {:<8} ", user.trim(), group.trim())));
    }
    assert_eq!(
        py_line.replace(
            &format!(" {:<8} ", group.trim()),
            &format!(" {:<8} ", user.trim())
        ),
        our_line.replace(
            &format!(" {:<8} ", group.trim()),
            &format!(" {:<8} ", user.trim())
        )
    );
}

#[test]
fn aliases_and_programs() {
    let dir = tempfile::tempdir().unwrap();
    let archive = rich_archive(dir.path());
    let a = archive.to_str().unwrap();
    let list = run_ok(bin("barecat"), ["list", a, "train"]);
    for alias in ["l", "t"] {
        assert_eq!(run_ok(bin("barecat"), [alias, a, "train"]), list);
    }
    assert_eq!(run_ok(bin("barecat-list"), [a, "train"]), list);
    let find = run_ok(bin("barecat"), ["find", a, "train", "-name", "*.jpg"]);
    assert!(find.contains("train/cls1/img1.jpg\n"), "{find}");
    assert_eq!(
        run_ok(bin("barecat-find"), [a, "train", "-name", "*.jpg"]),
        find
    );
    assert_eq!(
        run_ok(bin("barecat-find"), [a, "train", "--name", "*.jpg"]),
        find
    );
    let tree = run_ok(bin("barecat"), ["tree", a, "-L", "1"]);
    assert_eq!(run_ok(bin("barecat-tree"), [a, "-L", "1"]), tree);
    // `barecat ls` stays ours: a header per directory when there are several; its
    // `--jsonl` writes Python's lines.
    let ls = run_ok(bin("barecat"), ["ls", a, "train", "val"]);
    assert!(ls.starts_with("train:\n"), "{ls}");
    assert_eq!(
        run_ok(bin("barecat"), ["ls", "--jsonl", a, "train"]),
        run_ok(bin("barecat"), ["list", "--jsonl", a, "train"])
    );
    // Usage errors.
    for args in [
        vec!["find", a, "-type", "x"],
        vec!["find", a, "-size", "12Q"],
        vec!["find", a, "-maxdepth", "deep"],
        vec!["tree", a, "-L", "-1"],
        vec!["list", a, "--frobnicate"],
    ] {
        let o = run(bin("barecat"), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // Failures: one line, exit 1.
    for args in [
        vec!["find", "/nonexistent.barecat"],
        vec!["tree", "/nonexistent.barecat"],
        vec!["list", "/nonexistent.barecat"],
    ] {
        let o = run(bin("barecat"), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_clean_error(&o);
    }
    let help = run_ok(bin("barecat"), ["find", "--help"]);
    assert!(
        help.contains("-name") && help.contains("Examples:"),
        "{help}"
    );
}

#[test]
fn listings_stream_into_a_closed_pipe_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let archive = rich_archive(dir.path());
    for sub in ["list", "find", "tree"] {
        let mut child = Command::new(bin("barecat"))
            .args([sub, archive.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.output_bounded().unwrap();
        assert!(o.status.code() == Some(0), "{sub}: {:?}", o.status);
        assert!(
            o.stderr.is_empty(),
            "{sub}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
