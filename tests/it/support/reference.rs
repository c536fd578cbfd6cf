//! The reference readers of tar and zip files (GNU tar, bsdtar, Python's tarfile and
//! zipfile) and the promise every import keeps against them: each regular file or
//! hard link they see is stored with identical bytes or named on a line of its own
//! with the reason, and an import that left one out never exits 0. Also tar blocks
//! built byte by byte (checksums included), for crafted fixtures.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use barecat::core::path::{normalize, printable, unsafe_reason};

use crate::support::ingest::{contents, dir_paths};
use crate::support::{bin, code, python, stderr, CommandExt};

// ------------------------------------------------------------------ tar blocks

/// The magic and version of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// POSIX ustar (`ustar\0` `00`).
    Ustar,
    /// GNU (`ustar  \0`).
    Gnu,
    /// Seventh Edition: no magic.
    V7,
}

/// How the checksum field is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// The sum of the bytes as unsigned (POSIX).
    Unsigned,
    /// The sum of the bytes as signed (old HP-UX and V7 tars).
    Signed,
    /// A wrong value.
    Wrong,
}

/// A header to build.
#[derive(Debug, Clone)]
pub struct Hdr<'a> {
    pub name: &'a [u8],
    pub typeflag: u8,
    pub size: u64,
    pub link: &'a [u8],
    pub format: Format,
    pub mode: u32,
    pub mtime: u64,
    pub uname: &'a [u8],
    pub checksum: Checksum,
}

impl Default for Hdr<'_> {
    fn default() -> Self {
        Hdr {
            name: b"",
            typeflag: b'0',
            size: 0,
            link: b"",
            format: Format::Ustar,
            mode: 0o644,
            mtime: 1_700_000_000,
            uname: b"root",
            checksum: Checksum::Unsigned,
        }
    }
}

fn octal(field: &mut [u8], v: u64) {
    let s = format!("{:0w$o}", v, w = field.len() - 1);
    field[..s.len()].copy_from_slice(s.as_bytes());
    field[s.len()] = 0;
}

/// One 512-byte header block.
pub fn header(h: &Hdr) -> Vec<u8> {
    let mut b = vec![0u8; 512];
    b[..h.name.len()].copy_from_slice(h.name);
    octal(&mut b[100..108], h.mode as u64);
    octal(&mut b[108..116], 0);
    octal(&mut b[116..124], 0);
    octal(&mut b[124..136], h.size);
    octal(&mut b[136..148], h.mtime);
    b[156] = h.typeflag;
    b[157..157 + h.link.len()].copy_from_slice(h.link);
    match h.format {
        Format::Ustar => b[257..265].copy_from_slice(b"ustar\x0000"),
        Format::Gnu => b[257..265].copy_from_slice(b"ustar  \x00"),
        Format::V7 => {}
    }
    if h.format != Format::V7 {
        b[265..265 + h.uname.len()].copy_from_slice(h.uname);
        b[297..301].copy_from_slice(b"root");
    }
    b[148..156].copy_from_slice(b"        ");
    let sum: i64 = match h.checksum {
        Checksum::Unsigned => b.iter().map(|&x| x as i64).sum(),
        Checksum::Signed => b.iter().map(|&x| x as i8 as i64).sum(),
        Checksum::Wrong => b.iter().map(|&x| x as i64).sum::<i64>() + 1,
    };
    let s = format!("{sum:06o}\0 ");
    b[148..156].copy_from_slice(s.as_bytes());
    b
}

/// Data padded to whole blocks.
pub fn data(d: &[u8]) -> Vec<u8> {
    let mut v = d.to_vec();
    v.resize(d.len().div_ceil(512) * 512, 0);
    v
}

/// A regular file member: header and data.
pub fn file(name: &[u8], content: &[u8]) -> Vec<u8> {
    let mut v = header(&Hdr {
        name,
        size: content.len() as u64,
        ..Hdr::default()
    });
    v.extend(data(content));
    v
}

/// An extended header (`x`, `X`, `g`) holding `records`.
pub fn pax(typeflag: u8, records: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in records {
        let rest = 1 + k.len() + 1 + v.len() + 1;
        let mut n = rest + 1;
        while n.to_string().len() + rest != n {
            n += 1;
        }
        body.extend(format!("{n} {k}=").as_bytes());
        body.extend_from_slice(v);
        body.push(b'\n');
    }
    let mut out = header(&Hdr {
        name: b"PaxHeaders/x",
        typeflag,
        size: body.len() as u64,
        ..Hdr::default()
    });
    out.extend(data(&body));
    out
}

/// The end-of-archive marker.
pub fn end() -> Vec<u8> {
    vec![0u8; 1024]
}

// ------------------------------------------------------------------ readers

/// What a reference reader sees in an archive.
#[derive(Debug, Default)]
pub struct View {
    /// The reader: `tar` (GNU tar), `bsdtar`, `tarfile` or `zipfile`.
    pub reader: &'static str,
    /// Every member's name (`tar -t`, or tarfile/zipfile's list), raw.
    pub names: Vec<Vec<u8>>,
    /// Regular files and hard links with their content, raw names (for GNU tar and
    /// bsdtar: what extraction leaves on disk).
    pub files: Vec<(Vec<u8>, Vec<u8>)>,
    /// What the reader said when it could not read everything.
    pub error: Option<String>,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Files under `dir` (not following links) with their content, relative names.
fn files_on_disk(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(dir).unwrap();
            out.push((
                rel.as_os_str().as_bytes().to_vec(),
                fs::read(e.path()).unwrap(),
            ));
        }
    }
    out
}

/// What `prog` (`"tar"`, GNU tar, or `"bsdtar"`) lists in a tar and leaves on disk
/// when it extracts it. The caller guards with `need!` for `prog`.
pub fn tar_view(prog: &'static str, archive: &Path) -> View {
    let list = Command::new(prog)
        .arg("-tf")
        .arg(archive)
        .output_bounded()
        .unwrap();
    let names = list
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.to_vec())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(prog)
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(dir.path())
        .args(["--no-same-owner", "--no-same-permissions"])
        .output_bounded()
        .unwrap();
    let error =
        (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).trim().to_string());
    // Members extracted without read permission are read as root; as another user,
    // make them readable first.
    let _ = Command::new("chmod")
        .args(["-R", "u+rwX"])
        .arg(dir.path())
        .output_bounded();
    View {
        reader: prog,
        names,
        files: files_on_disk(dir.path()),
        error,
    }
}

/// What Python's `module` (`"tarfile"` or `"zipfile"`, in the test venv) sees in an
/// archive. The caller guards with `need!("barecat")` (the venv).
pub fn py_view(module: &'static str, archive: &Path) -> View {
    let out = Command::new(python())
        .arg(crate::support::py_script("archive_members.py"))
        .arg(module)
        .arg(archive)
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "archive_members.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut v = View {
        reader: module,
        error: doc["error"].as_str().map(str::to_string),
        ..View::default()
    };
    for m in doc["members"].as_array().unwrap() {
        let name = hex(m["name"].as_str().unwrap());
        v.names.push(name.clone());
        if let Some(d) = m["data"].as_str() {
            v.files.push((name, hex(d)));
        }
    }
    v
}

// ------------------------------------------------------------------ imports

/// What an import did.
#[derive(Debug)]
pub struct Import {
    pub stored: BTreeMap<String, Vec<u8>>,
    pub dirs: BTreeSet<String>,
    pub stderr: String,
    pub code: i32,
}

/// Convert `input` with `barecat-from-tar` or `barecat-from-zip` into `archive`.
pub fn import(command: &str, input: &Path, archive: &Path, extra: &[&str]) -> Import {
    let o = Command::new(bin(command))
        .args(extra)
        .arg(input)
        .arg(archive)
        .output_bounded()
        .unwrap();
    let exists = barecat::Layout::exists(archive).unwrap();
    Import {
        stored: if exists {
            contents(archive)
        } else {
            BTreeMap::new()
        },
        dirs: if exists {
            dir_paths(archive)
        } else {
            BTreeSet::new()
        },
        stderr: stderr(&o),
        code: code(&o),
    }
}

/// Where a member that is not stored under its own name went instead.
#[derive(Debug, Clone, Copy)]
pub enum Instead<'a> {
    /// A file with the same content at this path.
    File(&'a str),
    /// A directory at this path.
    Dir(&'a str),
}

/// The line of `stderr` that names `name` (raw, or normalized) followed by `: `.
pub fn line_naming<'s>(stderr: &'s str, name: &[u8]) -> Option<&'s str> {
    let raw = format!("{}: ", printable(name));
    let norm = std::str::from_utf8(name)
        .ok()
        .map(|s| format!("{}: ", printable(&normalize(s))));
    stderr
        .lines()
        .find(|l| l.contains(&raw) || norm.as_deref().is_some_and(|n| l.contains(n)))
}

/// Check the promise for every file `view` holds; returns the violations, one
/// line each. `instead` lists the members known to be stored elsewhere (each
/// must still be named on a line). `chosen`: the user chose to leave the reported
/// ones out (`--duplicates`), so exit status 0 is right. The members not stored
/// under their own name are added to `reported`, with the line that names them.
pub fn violations(
    view: &View,
    imp: &Import,
    instead: &[(&[u8], Instead)],
    chosen: bool,
    reported: &mut Vec<(Vec<u8>, String)>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let mut dropped = Vec::new();
    for (name, content) in &view.files {
        let shown = printable(name).into_owned();
        let line = line_naming(&imp.stderr, name);
        if let Some((_, to)) = instead.iter().find(|(n, _)| n == name) {
            let ok = match to {
                Instead::File(p) => imp.stored.get(*p) == Some(content),
                Instead::Dir(p) => imp.dirs.contains(*p),
            };
            if !ok || line.is_none() {
                bad.push(format!(
                    "{}: {shown}: expected stored as {to:?} and named on a line",
                    view.reader
                ));
            }
            continue;
        }
        let here = std::str::from_utf8(name)
            .ok()
            .filter(|s| unsafe_reason(s).is_none())
            .and_then(|s| imp.stored.get(&normalize(s)));
        if here == Some(content) {
            continue;
        }
        match line {
            Some(l) => reported.push((name.clone(), l.to_string())),
            None => bad.push(format!(
                "{}: {shown}: not stored with identical bytes ({}) and not reported",
                view.reader,
                match here {
                    Some(d) => format!("{} bytes stored, {} seen", d.len(), content.len()),
                    None => "absent".into(),
                }
            )),
        }
        dropped.push(shown);
    }
    if !dropped.is_empty() && imp.code == 0 && !chosen {
        bad.push(format!(
            "{}: exit status 0 although {} not stored: {dropped:?}",
            view.reader,
            dropped.len()
        ));
    }
    bad
}
