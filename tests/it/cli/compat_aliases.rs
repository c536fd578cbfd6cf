//! Python barecat's spellings of our commands: `c`, `add`/`a` (with `-c`), `x`
//! (with `--pattern` and `-i/-x` rules in command-line order), `merge
//! --as-subdirs/--prefix/--pattern/-i/-x`, `completion-script`. Python barecat
//! 0.3.1's CLI and ours run on the same trees and archives and must make the same
//! archives (files, content, metadata, directory statistics) or extract the same
//! files. Where Python is wrong (docs/FORMAT.md §11), the test says which bug is not copied.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::support::maint::*;
use crate::support::*;
use serde_json::Value;

fn tree(root: &Path) {
    write_tree(
        root,
        &[
            ("src/a/x.txt", b"hello\n"),
            ("src/a/b/y.bin", &pseudo_random(1, 3000)),
            ("src/a/z.tmp", b"tmp"),
            ("src/c/w.txt", b"w"),
            ("src/.hidden.txt", b"h"),
            ("more/m.txt", b"more"),
        ],
    );
    for (i, p) in [
        "src/a/x.txt",
        "src/a/b/y.bin",
        "src/a/z.tmp",
        "src/c/w.txt",
        "src/.hidden.txt",
        "more/m.txt",
    ]
    .iter()
    .enumerate()
    {
        fs::File::options()
            .write(true)
            .open(root.join(p))
            .unwrap()
            .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + i as u64))
            .unwrap();
    }
}

/// Run `barecat ARGS`, ours or Python's.
fn run_side(py: bool, args: &[OsString]) -> std::process::Output {
    let prog = if py { py_barecat() } else { bin("barecat") };
    run_t(prog, args)
}

fn ok_side(py: bool, args: &[OsString]) -> String {
    let o = run_side(py, args);
    assert!(
        o.status.success(),
        "{} {args:?}: {}",
        if py { "python" } else { "ours" },
        stderr(&o)
    );
    stdout(&o)
}

fn argv(parts: &[&dyn AsRef<OsStr>]) -> Vec<OsString> {
    parts.iter().map(|p| p.as_ref().to_owned()).collect()
}

/// Files (content, size, CRC, metadata) and directory statistics, as Python sees them.
fn view(archive: &Path) -> (Value, Value) {
    let d = py_dump(archive);
    assert_eq!(d["integrity_ok"], true, "{}", archive.display());
    (d["files"].clone(), d["dirs"].clone())
}

fn files_below(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn c_and_add_make_what_python_makes() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("root"));
    let root = d.join("root");
    let (ours, theirs) = (d.join("ours.barecat"), d.join("py.barecat"));
    // ARCHIVE is absolute: Python resolves a relative one inside -C DIR (docs/FORMAT.md §11.17).
    for (py, a) in [(false, &ours), (true, &theirs)] {
        ok_side(py, &argv(&[&"c", a, &"-C", &root, &"src"]));
    }
    assert_eq!(view(&ours), view(&theirs));
    for (py, a) in [(false, &ours), (true, &theirs)] {
        ok_side(py, &argv(&[&"add", a, &"-C", &root, &"more/m.txt"]));
    }
    assert_eq!(view(&ours), view(&theirs));
    py_verify(&ours);
    // add to a missing archive: Python's message; `a -c` creates it.
    let missing = d.join("missing.barecat");
    for py in [false, true] {
        let o = run_side(py, &argv(&[&"add", &missing, &"-C", &root, &"src"]));
        assert_eq!(code(&o), 1);
        assert!(
            stderr(&o).contains(&format!(
                "Archive '{}' does not exist. Use 'barecat create' or 'barecat add -c'.",
                missing.display()
            )),
            "{}",
            stderr(&o)
        );
        assert!(!missing.exists());
    }
    let (ours2, theirs2) = (d.join("ours2.barecat"), d.join("py2.barecat"));
    for (py, a) in [(false, &ours2), (true, &theirs2)] {
        ok_side(py, &argv(&[&"a", &"-c", a, &"-C", &root, &"src", &"more"]));
    }
    assert_eq!(view(&ours2), view(&theirs2));
    // Python's options are accepted, --physical-order too; an existing path is
    // reported and skipped (Python: a traceback), the others are added.
    let o = run_side(
        false,
        &argv(&[
            &"a",
            &"--physical-order",
            &"-j",
            &"2",
            &ours2,
            &"-C",
            &root,
            &"more",
            &"src/a",
        ]),
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

#[test]
fn add_keeps_the_shard_size_limit_unlike_python() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("root"));
    let root = d.join("root");
    let (ours, theirs) = (d.join("ours.barecat"), d.join("py.barecat"));
    for (py, a) in [(false, &ours), (true, &theirs)] {
        ok_side(py, &argv(&[&"c", &"-s", &"1M", a, &"-C", &root, &"src"]));
        ok_side(py, &argv(&[&"add", a, &"-C", &root, &"more"]));
    }
    assert_eq!(py_dump(&ours)["shard_size_limit"], 1 << 20);
    // Python barecat 0.3.1's add without -s sets the limit to unlimited (docs/FORMAT.md §11.4).
    assert_ne!(py_dump(&theirs)["shard_size_limit"], 1 << 20);
}

#[test]
fn x_extracts_what_python_extracts() {
    need!("barecat");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("root"));
    let a = d.join("a.barecat");
    ok_side(
        false,
        &argv(&[&"c", &"-q", &a, &"-C", &d.join("root"), &"src", &"more"]),
    );
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("all", vec![]),
        ("pattern", vec!["--pattern", "src/**/*.txt"]),
        ("dir-pattern", vec!["--pattern", "src/a/"]),
        (
            "rules",
            vec!["-x", "**/*.tmp", "-i", "src/a/**", "-x", "**"],
        ),
        (
            "rules-eq",
            vec!["--exclude=**/b/**", "--include=src/**", "-x", "*/*.txt"],
        ),
        ("dir", vec!["src/a"]),
    ];
    for (name, extra) in cases {
        let mut got = Vec::new();
        for py in [false, true] {
            let out = d.join(format!("{name}-{py}"));
            let mut args = argv(&[&"x", &a, &"-C", &out]);
            args.extend(extra.iter().map(OsString::from));
            ok_side(py, &args);
            got.push(files_below(&out));
        }
        assert!(!got[0].is_empty(), "{name}: nothing extracted");
        assert_eq!(got[0], got[1], "{name}: {extra:?}");
    }
    // A file named as PATH: Python writes it to stdout instead of into DIR (docs/FORMAT.md §11.16).
    // Not copied: it goes into DIR, like any other member (barecat-cat writes to
    // stdout).
    let (ours_dir, py_dir) = (d.join("one-ours"), d.join("one-py"));
    let theirs = ok_side(true, &argv(&[&"x", &a, &"-C", &py_dir, &"src/a/x.txt"]));
    assert_eq!(theirs, "hello\n");
    assert!(files_below(&py_dir).is_empty());
    let ours = ok_side(
        false,
        &argv(&[&"x", &"-q", &a, &"-C", &ours_dir, &"src/a/x.txt"]),
    );
    assert_eq!(ours, "");
    assert_eq!(files_below(&ours_dir)["src/a/x.txt"], b"hello\n");
    // --pattern with rules: a usage error here (Python: exit 1).
    let o = run_side(false, &argv(&[&"x", &a, &"--pattern", &"*", &"-i", &"x"]));
    assert_eq!(code(&o), 2);
}

#[test]
fn merge_options_place_files_as_python_does() {
    need!("barecat", "tar");
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    tree(&d.join("root"));
    let part1 = d.join("part1.barecat");
    let part2 = d.join("part2.barecat");
    ok_side(
        false,
        &argv(&[&"c", &"-q", &part1, &"-C", &d.join("root"), &"src"]),
    );
    ok_side(
        false,
        &argv(&[&"c", &"-q", &part2, &"-C", &d.join("root"), &"more"]),
    );
    // Python's filtered merge of a second barecat input fails (update_treestats
    // runs twice on one connection, docs/FORMAT.md §11.10): filters are compared with one input.
    let cases: Vec<(&str, Vec<&str>, bool)> = vec![
        ("subdirs", vec!["--as-subdirs"], true),
        ("prefix", vec!["--prefix", "data/v2"], true),
        ("both", vec!["--prefix", "data", "--as-subdirs"], true),
        ("pattern", vec!["--pattern", "**/*.txt"], false),
        (
            "rules",
            vec!["-x", "**/*.tmp", "-i", "src/a/**", "-x", "**"],
            false,
        ),
        ("all", vec!["--prefix", "p", "-x", "**/b/**"], false),
    ];
    for (name, extra, two) in cases {
        let mut views = Vec::new();
        for py in [false, true] {
            let out = d.join(format!("{name}-{py}.barecat"));
            let mut args = argv(&[&"merge", &"-o", &out, &part1]);
            if two {
                args.push(part2.clone().into());
            }
            args.extend(extra.iter().map(OsString::from));
            ok_side(py, &args);
            views.push(view(&out));
        }
        assert!(
            !views[0].0.as_object().unwrap().is_empty(),
            "{name}: nothing merged"
        );
        assert_eq!(views[0], views[1], "{name}: {extra:?}");
        py_verify(&d.join(format!("{name}-false.barecat")));
    }
    let two = d.join("two.barecat");
    ok_side(
        false,
        &argv(&[
            &"merge",
            &"-q",
            &"-o",
            &two,
            &part1,
            &part2,
            &"--pattern",
            &"**/*.txt",
        ]),
    );
    assert_eq!(
        contents(&two).into_keys().collect::<Vec<_>>(),
        [
            "more/m.txt",
            "src/.hidden.txt",
            "src/a/x.txt",
            "src/c/w.txt"
        ]
    );
    let o = run_side(
        true,
        &argv(&[
            &"merge",
            &"-o",
            &d.join("two-py.barecat"),
            &part1,
            &part2,
            &"--pattern",
            &"**/*.txt",
        ]),
    );
    assert_ne!(
        code(&o),
        0,
        "Python's filtered merge of two inputs works now?"
    );
    // A tar input is placed and selected the same way.
    let tar = d.join("t.tar");
    assert!(std::process::Command::new("tar")
        .arg("-cf")
        .arg(&tar)
        .arg("-C")
        .arg(d.join("root"))
        .arg("src")
        .status_bounded()
        .unwrap()
        .success());
    let mut paths = Vec::new();
    for py in [false, true] {
        let out = d.join(format!("tar-{py}.barecat"));
        ok_side(
            py,
            &argv(&[
                &"merge",
                &"-o",
                &out,
                &tar,
                &"--as-subdirs",
                &"--pattern",
                &"src/a/**",
            ]),
        );
        paths.push(contents(&out));
    }
    assert_eq!(paths[0], paths[1]);
    assert!(
        paths[0].contains_key("t/src/a/b/y.bin"),
        "{:?}",
        paths[0].keys()
    );
    // Python lower-cases the whole name when it strips the extension (Part1 →
    // part1): not copied, the name keeps its case.
    let upper = d.join("Part1.barecat");
    fs::rename(&part1, &upper).unwrap();
    fs::rename(
        d.join("part1.barecat-shard-00000"),
        d.join("Part1.barecat-shard-00000"),
    )
    .unwrap();
    for py in [false, true] {
        let out = d.join(format!("case-{py}.barecat"));
        ok_side(py, &argv(&[&"merge", &"-o", &out, &upper, &"--as-subdirs"]));
    }
    assert!(contents(&d.join("case-false.barecat")).contains_key("Part1/src/a/x.txt"));
    assert!(contents(&d.join("case-true.barecat")).contains_key("part1/src/a/x.txt"));
    // --symlink with --as-subdirs: the same paths; with a pattern: refused.
    for py in [false, true] {
        let out = d.join(format!("link-{py}.barecat"));
        ok_side(
            py,
            &argv(&[
                &"merge",
                &"--symlink",
                &"--prefix",
                &"l",
                &"-o",
                &out,
                &upper,
                &part2,
            ]),
        );
    }
    let (a, b) = (
        contents(&d.join("link-false.barecat")),
        contents(&d.join("link-true.barecat")),
    );
    assert_eq!(a, b);
    py_verify(&d.join("link-false.barecat"));
    let o = run_side(
        false,
        &argv(&[
            &"merge",
            &"--symlink",
            &"--pattern",
            &"*",
            &"-o",
            &d.join("no.barecat"),
            &part2,
        ]),
    );
    assert_eq!(code(&o), 2);
}

#[test]
fn completion_script_prints_the_committed_scripts() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (shell, file) in [
        ("bash", "completions/bash/barecat"),
        ("zsh", "completions/zsh/_barecat"),
        ("fish", "completions/fish/barecat.fish"),
    ] {
        let o = run_t(bin("barecat"), ["completion-script", shell]);
        assert_eq!(code(&o), 0);
        assert!(o.stdout == fs::read(repo.join(file)).unwrap(), "{shell}");
    }
    let o = run_t(bin("barecat"), ["completion-script", "bash", "barecat-rm"]);
    assert!(o.stdout == fs::read(repo.join("completions/bash/barecat-rm")).unwrap());
    assert_eq!(
        code(&run_t(bin("barecat"), ["completion-script", "tcsh"])),
        2
    );
    assert_eq!(
        code(&run_t(bin("barecat"), ["completion-script", "bash", "ls"])),
        2
    );
    // The aliases are subcommands too.
    let help = stdout(&run_t(bin("barecat"), ["--help"]));
    for alias in ["[alias: c]", "[alias: a]", "[alias: x]"] {
        assert!(help.contains(alias), "{alias}: {help}");
    }
}
