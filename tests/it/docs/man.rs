//! The committed man pages and shell completions match the clap definitions, and
//! every listed command has them and a section in docs/GUIDE.md (whose command
//! reference is generated from them too).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn files_below(root: &Path, sub: &str) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.join(sub)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out
}

#[test]
fn man_pages_and_completions_are_up_to_date() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("docs")).unwrap();
    fs::copy(repo.join("docs/GUIDE.md"), tmp.path().join("docs/GUIDE.md")).unwrap();
    crate::support::run_ok(
        crate::support::bin("barecat"),
        [
            std::ffi::OsStr::new("--generate-docs"),
            tmp.path().as_os_str(),
        ],
    );
    for sub in ["man", "completions"] {
        let want = files_below(tmp.path(), sub);
        let have = files_below(repo, sub);
        assert_eq!(
            have, want,
            "{sub}/ differs from the clap definitions: run scripts/gen-docs.sh"
        );
        for f in &want {
            assert!(
                fs::read(tmp.path().join(f)).unwrap() == fs::read(repo.join(f)).unwrap(),
                "{} is out of date: run scripts/gen-docs.sh",
                f.display()
            );
        }
    }
    assert!(
        fs::read(tmp.path().join("docs/GUIDE.md")).unwrap()
            == fs::read(repo.join("docs/GUIDE.md")).unwrap(),
        "the command reference of docs/GUIDE.md is out of date: run scripts/gen-docs.sh"
    );
}

#[test]
fn every_command_has_a_man_page_completions_and_help() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let list = crate::support::run_ok(crate::support::bin("barecat"), ["--list"]);
    let names: Vec<&str> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 2, "{list}");
    for name in names {
        let bin = format!("barecat-{name}");
        assert!(
            repo.join(format!("man/{bin}.1")).is_file(),
            "man page of {bin}"
        );
        assert!(repo.join(format!("completions/bash/{bin}")).is_file());
        assert!(repo.join(format!("completions/zsh/_{bin}")).is_file());
        assert!(repo.join(format!("completions/fish/{bin}.fish")).is_file());
        let help = crate::support::run_ok(crate::support::bin(&bin), ["--help"]);
        assert!(help.contains("Usage:"), "{bin} --help: {help}");
        assert!(
            help.contains("Examples:"),
            "{bin} --help has no examples: {help}"
        );
        let sub = crate::support::run_ok(crate::support::bin("barecat"), [name, "--help"]);
        assert!(sub.contains("Usage:"), "barecat {name} --help: {sub}");
    }
    let guide = fs::read_to_string(repo.join("docs/GUIDE.md")).unwrap();
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        assert!(
            guide.contains(&format!("\n### barecat-{name}\n")),
            "docs/GUIDE.md has no section \"### barecat-{name}\""
        );
    }
    for f in [
        "man/barecat.1",
        "completions/bash/barecat",
        "completions/zsh/_barecat",
    ] {
        assert!(repo.join(f).is_file(), "{f}");
    }
}
