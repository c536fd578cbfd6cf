//! `barecat rsync` against Python barecat 0.3.1's `barecat rsync`, run on the same
//! trees and archives: the same lines (Python's output is the contract: compared
//! as sets, since Python walks directories in file-system order), the same
//! resulting archives (files, content, metadata, directory statistics) or local
//! trees, in all three directions, with --delete, -n, -c, -u, --include and
//! --exclude. Where Python is wrong, the test says which bug is not copied.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::support::maint::*;
use crate::support::*;
use serde_json::Value;

fn set_mtime(p: &Path, secs: u64) {
    fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

/// A tree with nested directories, an empty file, a hidden file, a .tmp file.
fn tree(root: &Path) {
    write_tree(
        root,
        &[
            ("a/x.txt", b"hello\n"),
            ("a/b/y.bin", &pseudo_random(1, 5000)),
            ("a/b/empty", b""),
            ("c/z.tmp", b"temporary"),
            ("c/keep.tmp", b"kept"),
            ("top.txt", b"top\n"),
            (".hidden", b"h"),
        ],
    );
    for (i, p) in [
        "a/x.txt",
        "a/b/y.bin",
        "a/b/empty",
        "c/z.tmp",
        "c/keep.tmp",
        "top.txt",
        ".hidden",
    ]
    .iter()
    .enumerate()
    {
        set_mtime(&root.join(p), 1_600_000_000 + i as u64 * 1000);
    }
}

/// Run ours (`rs`) or Python's (`py`) `barecat rsync ARGS`: sorted stdout lines.
fn rsync(which: &str, args: &[&OsStr]) -> Vec<String> {
    let prog = if which == "py" {
        py_barecat()
    } else {
        bin("barecat")
    };
    let mut all = vec![OsStr::new("rsync")];
    all.extend_from_slice(args);
    let o = run_t(&prog, &all);
    assert!(
        o.status.success(),
        "{which} rsync {args:?}: {}\n{}",
        stdout(&o),
        stderr(&o)
    );
    let mut lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// Both sides with the same arguments, where `{}` in an argument stands for the
/// side's own archive or directory (below `dir`) and `./P` for `dir/P`: the lines
/// must be the same once the names are put back.
fn both(dir: &Path, args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for which in ["rs", "py"] {
        let side = format!("{which}_side");
        let argv: Vec<std::ffi::OsString> = args
            .iter()
            .map(|a| {
                if a.contains("{}") {
                    dir.join(a.replace("{}", &side)).into_os_string()
                } else if let Some(rel) = a.strip_prefix("./") {
                    dir.join(rel).into_os_string()
                } else {
                    a.into()
                }
            })
            .collect();
        let argv: Vec<&OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
        let lines: Vec<String> = rsync(which, &argv)
            .into_iter()
            .map(|l| {
                l.replace(&dir.display().to_string(), "")
                    .replace(&side, "{}")
            })
            .collect();
        out.push(lines);
    }
    assert_eq!(out[0], out[1], "lines differ from Python's for {args:?}");
    out.pop().unwrap()
}

/// Python's view of an archive: files with content and metadata, directory
/// statistics.
fn view(archive: &Path) -> (Value, Value) {
    let d = py_dump(archive);
    assert_eq!(d["integrity_ok"], true, "{}", archive.display());
    (d["files"].clone(), d["dirs"].clone())
}

fn same_archives(dir: &Path, name: &str) {
    let ours = dir.join(name.replace("{}", "rs_side"));
    let theirs = dir.join(name.replace("{}", "py_side"));
    assert_eq!(view(&ours), view(&theirs), "{name}: the archives differ");
    py_verify(&ours);
    let (c, v) = verify_json(&ours, false);
    assert_eq!(c, 0, "{v}");
}

/// Every file below `root`: content and modification time.
fn local(root: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let md = fs::metadata(&p).unwrap();
                out.insert(rel, (fs::read(&p).unwrap(), md.modified().unwrap()));
            }
        }
    }
    out
}

fn lines(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn local_to_archive_is_what_python_makes() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    let out = both(d, &["-v", "./src/", "{}.barecat::"]);
    assert_eq!(out.len(), 7);
    assert!(out.contains(&"add: a/b/y.bin".to_string()), "{out:?}");
    same_archives(d, "{}.barecat");
    // Again: nothing to do.
    let out = both(d, &["-v", "./src/", "{}.barecat::"]);
    assert!(
        out.iter().all(|l| l.starts_with("skip (unchanged): ")),
        "{out:?}"
    );
    // Changed content, a new time only, a new file, a deleted file.
    fs::write(d.join("src/a/x.txt"), b"hello again\n").unwrap();
    set_mtime(&d.join("src/top.txt"), 1_700_000_000);
    fs::write(d.join("src/new.txt"), b"new").unwrap();
    fs::remove_file(d.join("src/c/z.tmp")).unwrap();
    let dry = both(d, &["-n", "--delete", "./src/", "{}.barecat::"]);
    assert_eq!(
        dry,
        lines(&[
            "would add: new.txt",
            "would delete: c/z.tmp",
            "would update: a/x.txt",
            "would update: top.txt"
        ])
    );
    same_archives(d, "{}.barecat");
    let out = both(d, &["-v", "--delete", "./src/", "{}.barecat::"]);
    assert_eq!(out.len(), 8, "{out:?}");
    assert!(out.contains(&"delete: c/z.tmp".to_string()));
    same_archives(d, "{}.barecat");
    // Into a directory of the archive, named after the source.
    let out = both(d, &["-v", "./src/a", "{}.barecat::sub"]);
    assert_eq!(
        out,
        lines(&[
            "add: sub/a/b/empty",
            "add: sub/a/b/y.bin",
            "add: sub/a/x.txt"
        ])
    );
    same_archives(d, "{}.barecat");
    // -u keeps a copy that is as new or newer.
    set_mtime(&d.join("src/new.txt"), 1_000_000_000);
    fs::write(d.join("src/new.txt"), b"older but different").unwrap();
    set_mtime(&d.join("src/new.txt"), 1_000_000_000);
    let out = both(d, &["-v", "-u", "./src/new.txt", "{}.barecat::"]);
    assert_eq!(out, ["skip (newer): new.txt"]);
    // Patterns match names; an include overrides an exclude.
    let out = both(
        d,
        &[
            "-v",
            "--exclude",
            "*.tmp",
            "--exclude",
            ".*",
            "--include",
            "keep.tmp",
            "./src/",
            "{}-f.barecat::",
        ],
    );
    assert_eq!(
        out,
        lines(&[
            "add: a/b/empty",
            "add: a/b/y.bin",
            "add: a/x.txt",
            "add: c/keep.tmp",
            "add: new.txt",
            "add: top.txt"
        ])
    );
    same_archives(d, "{}-f.barecat");
}

#[test]
fn archive_to_local_is_what_python_extracts() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    rsync(
        "rs",
        &[
            d.join("src/").as_os_str(),
            d.join("src.barecat::data").as_os_str(),
        ],
    );
    let arch = d.join("src.barecat::data/");
    let arch = arch.as_os_str().to_str().unwrap();
    let out = both(d, &["-v", arch, "{}-out"]);
    assert_eq!(out.len(), 7);
    assert!(
        out.contains(&"extract: /{}-out/a/b/y.bin".to_string()),
        "{out:?}"
    );
    assert_eq!(local(&d.join("rs_side-out")), local(&d.join("py_side-out")));
    assert_eq!(
        local(&d.join("rs_side-out")),
        local(&d.join("src")),
        "the times are kept"
    );
    let out = both(d, &["-v", arch, "{}-out"]);
    assert!(
        out.iter().all(|l| l.starts_with("skip (unchanged): ")),
        "{out:?}"
    );
    // A local file that is not in the archive goes with --delete; a changed one
    // is extracted again; -n first.
    for side in ["rs_side", "py_side"] {
        fs::write(d.join(format!("{side}-out/junk")), b"junk").unwrap();
        fs::write(d.join(format!("{side}-out/top.txt")), b"changed").unwrap();
    }
    let dry = both(d, &["-n", "--delete", arch, "{}-out"]);
    assert_eq!(
        dry,
        lines(&[
            "would delete: /{}-out/junk",
            "would extract: /{}-out/top.txt"
        ])
    );
    let out = both(d, &["-v", "--delete", arch, "{}-out"]);
    assert!(out.contains(&"delete: /{}-out/junk".to_string()), "{out:?}");
    assert_eq!(local(&d.join("rs_side-out")), local(&d.join("src")));
    assert_eq!(local(&d.join("py_side-out")), local(&d.join("src")));
    // Without the trailing '/', a directory named after the source (or the archive).
    let whole = d.join("src.barecat::");
    let out = both(d, &[whole.to_str().unwrap(), "{}-whole"]);
    assert!(out.is_empty());
    assert_eq!(
        local(&d.join("rs_side-whole/src")),
        local(&d.join("py_side-whole/src"))
    );
    assert!(d.join("rs_side-whole/src/data/a/x.txt").is_file());
}

#[test]
fn archive_to_archive_is_what_python_copies() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    rsync(
        "rs",
        &[
            d.join("src/").as_os_str(),
            d.join("a.barecat::").as_os_str(),
        ],
    );
    let a = d.join("a.barecat::/");
    let a = a.to_str().unwrap();
    let out = both(d, &["-v", a, "{}.barecat::copy"]);
    assert_eq!(out.len(), 7);
    assert!(out.contains(&"copy: copy/a/x.txt".to_string()), "{out:?}");
    same_archives(d, "{}.barecat");
    let dry = both(d, &["-n", a, "{}.barecat::other"]);
    assert!(
        dry.contains(&"would copy: a/x.txt -> other/a/x.txt".to_string()),
        "{dry:?}"
    );
    // -c: the stored checksums decide.
    let out = both(d, &["-v", "-c", a, "{}.barecat::copy"]);
    assert!(
        out.iter().all(|l| l.starts_with("skip (checksum match): ")),
        "{out:?}"
    );
    // A changed source file is an update.
    fs::write(d.join("src/top.txt"), b"changed top\n").unwrap();
    rsync(
        "rs",
        &[
            d.join("src/top.txt").as_os_str(),
            d.join("a.barecat::").as_os_str(),
        ],
    );
    let out = both(d, &["-v", "-c", a, "{}.barecat::copy"]);
    assert!(out.contains(&"update: copy/top.txt".to_string()), "{out:?}");
    same_archives(d, "{}.barecat");
}

#[test]
fn delete_stays_within_the_synced_directory_unlike_python() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("photos"));
    write_tree(&d.join("other"), &[("keep.txt", b"keep me")]);
    for side in ["rs", "py"] {
        rsync(
            "rs",
            &[
                d.join("other").as_os_str(),
                d.join(format!("{side}.barecat::")).as_os_str(),
            ],
        );
    }
    // Python barecat 0.3.1 deletes every file of DEST that is not in a source,
    // also outside DEST/photos, where this source goes (other/keep.txt). Not
    // copied: rsync deletes only within the synced directory.
    let py = rsync(
        "py",
        &[
            OsStr::new("--delete"),
            d.join("photos").as_os_str(),
            d.join("py.barecat::").as_os_str(),
        ],
    );
    let _ = py;
    assert!(!contents(&d.join("py.barecat")).contains_key("other/keep.txt"));
    let ours = rsync(
        "rs",
        &[
            OsStr::new("-v"),
            OsStr::new("--delete"),
            d.join("photos").as_os_str(),
            d.join("rs.barecat::").as_os_str(),
        ],
    );
    assert!(
        ours.iter().all(|l| l.starts_with("add: photos/")),
        "{ours:?}"
    );
    assert!(contents(&d.join("rs.barecat")).contains_key("other/keep.txt"));
    // Excluded names are kept at the destination too (Python deletes them).
    fs::remove_file(d.join("photos/c/z.tmp")).unwrap();
    let ours = rsync(
        "rs",
        &[
            OsStr::new("-n"),
            OsStr::new("--delete"),
            OsStr::new("--exclude"),
            OsStr::new("*.tmp"),
            d.join("photos/").as_os_str(),
            d.join("rs.barecat::photos").as_os_str(),
        ],
    );
    assert!(ours.is_empty(), "{ours:?}");
    let theirs = rsync(
        "py",
        &[
            OsStr::new("-n"),
            OsStr::new("--delete"),
            OsStr::new("--exclude"),
            OsStr::new("*.tmp"),
            d.join("photos/").as_os_str(),
            d.join("py.barecat::photos").as_os_str(),
        ],
    );
    assert!(
        theirs
            .iter()
            .any(|l| l.contains("would delete: photos/c/z.tmp")),
        "{theirs:?}"
    );
}

#[test]
fn checksum_compares_local_files_unlike_python() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    let archive = |s: &str| d.join(format!("{s}.barecat::"));
    for side in ["rs", "py"] {
        rsync(
            side,
            &[d.join("src/").as_os_str(), archive(side).as_os_str()],
        );
    }
    // Same content, another time: -c skips it (Python's -c copies every local file
    // again, whatever its content).
    set_mtime(&d.join("src/top.txt"), 1_800_000_000);
    let ours = rsync(
        "rs",
        &[
            OsStr::new("-v"),
            OsStr::new("-c"),
            d.join("src/").as_os_str(),
            archive("rs").as_os_str(),
        ],
    );
    assert!(
        ours.iter()
            .all(|l| l.starts_with("skip (checksum match): ")),
        "{ours:?}"
    );
    let theirs = rsync(
        "py",
        &[
            OsStr::new("-v"),
            OsStr::new("-c"),
            d.join("src/").as_os_str(),
            archive("py").as_os_str(),
        ],
    );
    assert!(
        theirs.iter().all(|l| l.starts_with("update: ")),
        "{theirs:?}"
    );
    // Different content of the same size: updated.
    fs::write(d.join("src/top.txt"), b"TOP\n").unwrap();
    let ours = rsync(
        "rs",
        &[
            OsStr::new("-v"),
            OsStr::new("-c"),
            d.join("src/").as_os_str(),
            archive("rs").as_os_str(),
        ],
    );
    assert!(ours.contains(&"update: top.txt".to_string()), "{ours:?}");
    assert_eq!(contents(&d.join("rs.barecat"))["top.txt"], b"TOP\n");
    py_verify(&d.join("rs.barecat"));
}

#[test]
fn bad_arguments_are_one_line_errors() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    let bc = bin("barecat");
    let a = d.join("a.barecat::");
    for (args, want, needle) in [
        (
            vec![
                d.join("src").into_os_string(),
                d.join("out").into_os_string(),
            ],
            2,
            "no ARCHIVE::PATH",
        ),
        (
            vec![d.join("nope").into_os_string(), a.clone().into_os_string()],
            1,
            "nope",
        ),
        (
            vec![
                d.join("x.tar.gz::").into_os_string(),
                d.join("out").into_os_string(),
            ],
            2,
            "files as rsync locations",
        ),
        (
            vec!["host:/data/x".into(), a.clone().into_os_string()],
            2,
            "remote paths",
        ),
        (
            vec![
                d.join("missing.barecat::").into_os_string(),
                d.join("out").into_os_string(),
            ],
            1,
            "missing.barecat",
        ),
        (
            vec![
                d.join("src").into_os_string(),
                a.clone().into_os_string(),
                d.join("out").into_os_string(),
            ],
            2,
            "local SOURCE",
        ),
    ] {
        let mut argv = vec![std::ffi::OsString::from("rsync")];
        argv.extend(args.clone());
        let o = run_t(&bc, &argv);
        assert_eq!(code(&o), want, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        if want == 1 {
            assert_clean_error(&o);
        }
    }
    rsync("rs", &[d.join("src/").as_os_str(), a.as_os_str()]);
    let o = run_t(
        &bc,
        [
            OsStr::new("rsync"),
            a.as_os_str(),
            d.join("a.barecat::copy").as_os_str(),
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("the same archive"), "{}", stderr(&o));
    let o = run_t(
        &bc,
        [
            OsStr::new("rsync"),
            d.join("a.barecat::nope").as_os_str(),
            d.join("out").as_os_str(),
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("a.barecat::nope: no such file or directory"),
        "{}",
        stderr(&o)
    );
    // A file that cannot be read is reported; the others are synced.
    let fifo = d.join("src/fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status_bounded()
        .unwrap()
        .success());
    let o = run_t(
        &bc,
        [
            OsStr::new("rsync"),
            d.join("src/").as_os_str(),
            d.join("b.barecat::").as_os_str(),
        ],
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fifo: not a regular file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(contents(&d.join("b.barecat")).len(), 7);
}

#[test]
fn links_to_files_are_followed_links_to_directories_are_not() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("src"));
    write_tree(&d.join("elsewhere"), &[("deep/file.txt", b"elsewhere")]);
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("src/dirlink")).unwrap();
    std::os::unix::fs::symlink(d.join("src/top.txt"), d.join("src/filelink")).unwrap();
    let out = both(d, &["-v", "./src/", "{}.barecat::"]);
    assert!(out.contains(&"add: filelink".to_string()), "{out:?}");
    assert!(!out.iter().any(|l| l.contains("dirlink")), "{out:?}");
    same_archives(d, "{}.barecat");
    assert_eq!(contents(&d.join("rs_side.barecat"))["filelink"], b"top\n");
}
