//! The layers of docs/ARCHITECTURE.md hold: no two modules of the library import
//! each other, directly or through others (scripts/module-cycles.py reads the
//! `use` and `crate::`/`super::` paths of src/). A cycle would mean the core
//! depends on a feature or a feature on the command line, and the diagram lies.

use std::path::Path;
use std::process::{Command, Output};

/// Run the script on `src`, or `None` (after one line saying so) when there is
/// no python3 to run it.
fn module_cycles(src: &Path) -> Option<Output> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/module-cycles.py");
    match Command::new("python3")
        .arg(&script)
        .arg("--src")
        .arg(src)
        .output()
    {
        Ok(out) => Some(out),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("skipped: python3 is not installed (needed to run {script:?})");
            None
        }
        Err(e) => panic!("python3 {script:?}: {e}"),
    }
}

#[test]
fn no_import_cycles_between_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let Some(out) = module_cycles(&src) else {
        return;
    };
    assert!(
        out.status.success(),
        "module import cycles (see docs/ARCHITECTURE.md, The layers):\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The check itself finds a cycle, through a re-export and a `super::` path.
#[test]
fn module_cycles_script_reports_a_cycle() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod core;\npub mod ingest;\npub use crate::ingest::Thing;\n",
    );
    write("core/mod.rs", "pub mod index;\npub mod shards;\n");
    write("core/index/mod.rs", "mod scan;\npub struct Index;\n");
    write(
        "core/index/scan.rs",
        "// crate::ingest in a comment does not count\nfn f() -> super::super::shards::Shard { todo!() }\n",
    );
    write(
        "core/shards.rs",
        "pub struct Shard;\nfn g(_: crate::Thing) {}\n",
    );
    write(
        "ingest/mod.rs",
        "pub struct Thing;\nuse crate::core::{index::Index, shards};\n",
    );
    let Some(out) = module_cycles(src) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("core::index -> core::shards -> ingest -> core::index"),
        "{stdout}"
    );
}
