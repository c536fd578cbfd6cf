//! The examples of README.md and docs/GUIDE.md run as written: every ```sh block of
//! each, in order, in one scratch directory per document holding a copy of
//! `examples/`, with the freshly built programs first on PATH (`bash -euo pipefail`,
//! so any failing command fails the test).

use std::path::Path;
use std::process::Command;

use crate::support::CommandExt;

fn sh_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut cur: Option<String> = None;
    for line in readme.lines() {
        match &mut cur {
            None if line.trim_start() == "```sh" => cur = Some(String::new()),
            Some(_) if line.trim_start() == "```" => blocks.push(cur.take().unwrap()),
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
            None => {}
        }
    }
    assert!(cur.is_none(), "unclosed code block");
    blocks
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

#[test]
fn readme_examples_run_as_written() {
    need!("tar", "zip", "zstd", "barecat");
    for (doc, min_blocks) in [("README.md", 8), ("docs/GUIDE.md", 12)] {
        run_examples(doc, min_blocks);
    }
}

fn run_examples(doc: &str, min_blocks: usize) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(repo.join(doc)).unwrap();
    let blocks = sh_blocks(&readme);
    assert!(
        blocks.len() >= min_blocks,
        "{doc} has {} sh blocks",
        blocks.len()
    );
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        &repo.join("examples/sample"),
        &dir.path().join("examples/sample"),
    );
    let bins = crate::support::bin("barecat")
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bins.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (n, block) in blocks.iter().enumerate() {
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", block])
            .current_dir(dir.path())
            .env("PATH", &path)
            .output_bounded()
            .unwrap();
        assert!(
            out.status.success(),
            "{doc} block {} failed ({}):\n{block}\nstdout: {}\nstderr: {}",
            n + 1,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // What the blocks made is what they say.
    let unpacked = dir.path().join("unpacked/sample/labels.csv");
    assert_eq!(
        std::fs::read(unpacked).unwrap(),
        std::fs::read(repo.join("examples/sample/labels.csv")).unwrap()
    );
    crate::support::py_verify(&dir.path().join("data.barecat"));
}
