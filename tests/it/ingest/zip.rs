//! `barecat-from-zip` on zip files made at test time by Info-ZIP and Python's zipfile.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};

use crate::support::ingest::*;
use crate::support::*;
use barecat::{Archive, Entry};

fn from_zip() -> PathBuf {
    bin("barecat-from-zip")
}

fn convert(input: &Path, arch: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = extra.iter().map(|s| s.as_ref()).collect();
    args.push(input.as_os_str());
    args.push(arch.as_os_str());
    run(from_zip(), args)
}

fn zip_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let files: Vec<(String, Vec<u8>)> = vec![
        ("z/empty".into(), vec![]),
        ("z/text.txt".into(), b"compressible text ".repeat(500)),
        ("z/ünï/файл.bin".into(), pseudo_random(3, 40_000)),
        ("z/sub/deeper/r.bin".into(), pseudo_random(4, 120_000)),
    ];
    for (p, d) in &files {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, d).unwrap();
    }
    fs::create_dir_all(root.join("z/empty_dir")).unwrap();
    files.into_iter().collect()
}

/// Write the tree's files with Python's zipfile and the given method constant.
fn python_zip(root: &Path, out: &Path, method: &str) {
    python3(
        root,
        &format!(
            r#"
import os, zipfile
with zipfile.ZipFile("{}", "w", compression=zipfile.{method}) as z:
    for d, dirs, files in sorted(os.walk("z")):
        dirs.sort()
        z.write(d)
        for f in sorted(files):
            z.write(os.path.join(d, f))
"#,
            out.display()
        ),
    );
}

#[test]
fn every_compression_method_info_zip_and_python() {
    need!("zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = zip_tree(root);
    let mut inputs = Vec::new();
    for (name, flags) in [
        ("izip-store", "-0"),
        ("izip-deflate", "-9"),
        ("izip-bzip2", "-Z bzip2"),
    ] {
        let out = root.join(format!("{name}.zip"));
        sh(root, &format!("zip -qr {flags} {} z", out.display()));
        inputs.push(out);
    }
    for method in ["ZIP_STORED", "ZIP_DEFLATED", "ZIP_BZIP2", "ZIP_LZMA"] {
        let out = root.join(format!("py-{method}.zip"));
        python_zip(root, &out, method);
        inputs.push(out);
    }
    for input in &inputs {
        let arch = input.with_extension("barecat");
        let o = convert(input, &arch, &[]);
        assert_eq!(code(&o), 0, "{}: {}", input.display(), stderr(&o));
        assert_same(&contents(&arch), &want, &format!("{}", input.display()));
        assert!(
            dir_paths(&arch).contains("z/empty_dir"),
            "{}",
            input.display()
        );
        check(&arch);
    }
}

#[test]
fn unix_modes_owners_and_times() {
    need!("zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    zip_tree(root);
    fs::set_permissions(
        root.join("z/text.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    // Info-ZIP stores the unix mode, the owner ("ux") and a UTC time ("UT").
    sh(root, "zip -qr iz.zip z");
    let arch = root.join("iz.barecat");
    let o = convert(&root.join("iz.zip"), &arch, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let a = Archive::open(&arch).unwrap();
    let fi = a.file_info("z/text.txt").unwrap();
    let md = fs::metadata(root.join("z/text.txt")).unwrap();
    assert_eq!(fi.meta.mode, Some(md.mode()));
    assert_eq!((fi.meta.uid, fi.meta.gid), (Some(md.uid()), Some(md.gid())));
    assert_eq!(fi.meta.mtime_ns, Some(md.mtime() * 1_000_000_000));
    let Some(Entry::Dir(d)) = a.lookup("z/sub").unwrap() else {
        panic!()
    };
    assert_eq!(
        d.meta.mode,
        Some(fs::metadata(root.join("z/sub")).unwrap().mode())
    );
    drop(a);

    // Python writes only the DOS time: read in the local time zone (TZ).
    python3(
        root,
        r#"
import zipfile
with zipfile.ZipFile("dos.zip", "w") as z:
    i = zipfile.ZipInfo("f.txt", date_time=(2020, 1, 2, 3, 4, 6))
    z.writestr(i, b"dos")
"#,
    );
    for (tz, offset_h) in [("UTC", 0i64), ("UTC-2", 2)] {
        let arch = root.join(format!("dos-{tz}.barecat"));
        let o = std::process::Command::new(from_zip())
            .arg(root.join("dos.zip"))
            .arg(&arch)
            .env("TZ", tz)
            .output_bounded()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let a = Archive::open(&arch).unwrap();
        let fi = a.file_info("f.txt").unwrap();
        // 2020-01-02 03:04:06 UTC
        let utc = 1_577_934_246i64;
        assert_eq!(
            fi.meta.mtime_ns,
            Some((utc - offset_h * 3600) * 1_000_000_000),
            "{tz}"
        );
        // zipfile.writestr gives entries 0o600, without type bits: S_IFREG is added.
        assert_eq!(fi.meta.mode, Some(0o100600));
        check(&arch);
    }
}

#[test]
fn symlinks_encrypted_and_hostile_entries() {
    need!("zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = zip_tree(root);
    symlink("text.txt", root.join("z/link")).unwrap();
    sh(
        root,
        "zip -qry links.zip z && zip -qr -P secret enc.zip z/text.txt",
    );
    let arch = root.join("links.barecat");
    let o = convert(&root.join("links.zip"), &arch, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("1 symbolic link"), "{}", stderr(&o));
    assert_same(&contents(&arch), &want, "contents");
    check(&arch);
    let o = convert(
        &root.join("links.zip"),
        &root.join("le.barecat"),
        &["--symlinks", "error"],
    );
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("z/link: symbolic link"),
        "{}",
        stderr(&o)
    );
    let o = convert(&root.join("enc.zip"), &root.join("enc.barecat"), &[]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("z/text.txt: encrypted"),
        "{}",
        stderr(&o)
    );

    python3(
        root,
        r#"
import zipfile
with zipfile.ZipFile("evil.zip", "w") as z:
    z.writestr("../evil.txt", b"x")
    z.writestr("/abs/evil.txt", b"x")
    z.writestr("ok/../../escape.txt", b"x")
    z.writestr("ok/file.txt", b"fine")
    z.writestr("ok/dir/", b"")
"#,
    );
    let arch = root.join("evil.barecat");
    let o = convert(&root.join("evil.zip"), &arch, &[]);
    let err = stderr(&o);
    assert_eq!(code(&o), 1, "{err}");
    for needle in [
        "../evil.txt: '..' would point outside",
        "/abs/evil.txt: absolute paths are not stored",
        "ok/../../escape.txt: '..' would point outside",
    ] {
        assert!(err.contains(needle), "missing {needle:?}:\n{err}");
    }
    assert_eq!(contents(&arch).keys().collect::<Vec<_>>(), ["ok/file.txt"]);
    assert!(dir_paths(&arch).contains("ok/dir"));
    check(&arch);
}

#[test]
fn damaged_zips() {
    need!("zip", "barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let want = zip_tree(root);
    sh(root, "zip -qr0 good.zip z");
    let good = fs::read(root.join("good.zip")).unwrap();
    // Without its central directory a zip cannot be read: an error, nothing written.
    for (name, bytes) in [
        ("truncated", good[..good.len() - 300].to_vec()),
        ("garbage", pseudo_random(2, 4000)),
        ("empty", Vec::new()),
    ] {
        let input = root.join(format!("{name}.zip"));
        fs::write(&input, bytes).unwrap();
        let arch = root.join(format!("{name}.barecat"));
        let o = convert(&input, &arch, &[]);
        assert_eq!(code(&o), 1, "{name}");
        assert_clean_error(&o);
        assert!(!arch.exists(), "{name}: nothing may be written");
    }
    // A damaged entry (its stored bytes changed): reported, the others stored.
    let needle = &want["z/sub/deeper/r.bin"][1000..1032];
    let at = good.windows(32).position(|w| w == needle).unwrap();
    let mut bad = good.clone();
    bad[at] ^= 0xff;
    fs::write(root.join("crc.zip"), bad).unwrap();
    let arch = root.join("crc.barecat");
    let o = convert(&root.join("crc.zip"), &arch, &[]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("z/sub/deeper/r.bin: cannot read"),
        "{}",
        stderr(&o)
    );
    let mut w2 = want.clone();
    w2.remove("z/sub/deeper/r.bin");
    assert_same(&contents(&arch), &w2, "contents");
    check(&arch);
}

#[test]
fn output_is_identical_whatever_the_number_of_threads() {
    need!("barecat");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for i in 0..200u64 {
        let size = match i % 9 {
            0 => 0,
            1 => 150_000,
            _ => (i * 131 % 7000) as usize,
        };
        write_tree(
            root,
            &[(&format!("z/d{}/f{i:03}", i % 4), &pseudo_random(i, size))],
        );
    }
    python_zip(root, &root.join("many.zip"), "ZIP_DEFLATED");
    let mut outs = Vec::new();
    for j in ["1", "4"] {
        let arch = root.join(format!("j{j}.barecat"));
        let o = convert(
            &root.join("many.zip"),
            &arch,
            &["-j", j, "--buffer-size", "256K", "-s", "2M"],
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        outs.push((shard_bytes(&arch), rows(&arch)));
        if j == "4" {
            assert_same(
                &contents(&arch),
                &prefixed("z", &tree_files(&root.join("z"))),
                "contents",
            );
            check(&arch);
        }
    }
    assert!(outs[0].0 == outs[1].0, "shards differ");
    assert_eq!(outs[0].1, outs[1].1);
}

#[test]
fn zstd_and_xz_entries_written_by_the_zip_crate() {
    need!("barecat");
    use std::io::Write;
    use zip::write::SimpleFileOptions;
    use zip::CompressionMethod;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let input = root.join("methods.zip");
    let mut want = BTreeMap::new();
    {
        let mut z = zip::ZipWriter::new(fs::File::create(&input).unwrap());
        for (i, method) in [
            CompressionMethod::Zstd,
            CompressionMethod::Xz,
            CompressionMethod::Stored,
        ]
        .into_iter()
        .enumerate()
        {
            let name = format!("m/{method:?}.bin");
            let mut data = pseudo_random(i as u64, 20_000);
            data.extend(b"repetitive ".repeat(2000));
            let opts = SimpleFileOptions::default()
                .compression_method(method)
                .unix_permissions(0o644);
            z.start_file(name.as_str(), opts).unwrap();
            z.write_all(&data).unwrap();
            want.insert(name, data);
        }
        z.finish().unwrap();
    }
    let arch = root.join("methods.barecat");
    let o = convert(&input, &arch, &[]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_same(&contents(&arch), &want, "contents");
    check(&arch);
}
