//! The inputs of a merge: what kind of file each one is, opening barecat inputs with
//! their shards checked, telling whether an input is the output, and finding the
//! paths that occur in more than one input (before anything is written).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::archive::Archive;
use crate::entry::Order;
use crate::error::{Error, Result};
use crate::ingest::Duplicates;
use crate::layout::Layout;
use crate::maint::merge::PathMap;
use crate::path as mpath;

/// What an input file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Barecat,
    /// A tar file, possibly compressed.
    Tar,
    Zip,
}

const TAR_EXTENSIONS: [&str; 9] = [
    ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".tzst",
];

/// Tell a barecat archive from a tar or zip file, by content first and by name when
/// the content says nothing. A path where nothing exists is an error.
pub fn classify(path: &Path) -> Result<InputKind> {
    if crate::remote::is_url(path) {
        // A remote input is read as an archive (tar and zip inputs are local).
        return Ok(InputKind::Barecat);
    }
    let layout = Layout::resolve(path);
    let index = layout.index();
    if index.is_file() {
        let mut head = Vec::with_capacity(512);
        File::open(index)
            .and_then(|f| f.take(512).read_to_end(&mut head))
            .map_err(|e| Error::io(index, e))?;
        if head.starts_with(b"SQLite format 3\0") {
            return Ok(InputKind::Barecat);
        }
        if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
            return Ok(InputKind::Zip);
        }
        let compressed: [&[u8]; 4] = [b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"];
        if head.get(257..262) == Some(b"ustar") || compressed.iter().any(|m| head.starts_with(m)) {
            return Ok(InputKind::Tar);
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".zip") {
            return Ok(InputKind::Zip);
        }
        if TAR_EXTENSIONS.iter().any(|x| name.ends_with(x)) {
            return Ok(InputKind::Tar);
        }
        return Ok(InputKind::Barecat);
    }
    if Layout::exists(path)? {
        return Ok(InputKind::Barecat);
    }
    Err(Error::ArchiveNotFound {
        path: path.to_path_buf(),
    })
}

/// Open a barecat input for reading its files: every shard present (contiguous
/// numbering, every referenced shard there) and long enough for the files stored in
/// it.
pub fn open_barecat(path: &Path) -> Result<Archive> {
    open_barecat_with(path, crate::OpenOptions::default())
}

/// [`open_barecat`] with options (the index mode of a remote input).
pub fn open_barecat_with(path: &Path, opts: crate::OpenOptions) -> Result<Archive> {
    let archive = Archive::open_with(path, opts)?;
    let usage = archive.with_index(|i| i.shard_usage())?;
    for u in usage {
        let path = archive.shards()?.path(u.shard);
        let len = if archive.is_remote() {
            archive.shards()?.len(u.shard)?
        } else {
            crate::shard::shard_len(&path)?
        };
        if len < u.logical_end {
            return Err(Error::io(
                archive.shards()?.path(u.shard),
                io::Error::other(format!(
                    "shard is {len} bytes long but its files need {} bytes; run barecat-verify",
                    u.logical_end
                )),
            ));
        }
    }
    Ok(archive)
}

/// True when `a` and `b` name the same file (after following links).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Error if `input` is the archive at `output` (the same index file, whatever
/// the names).
pub fn check_not_output(input: &Path, output: &Path) -> Result<()> {
    if crate::remote::is_url(input) {
        return Ok(()); // the output is local
    }
    let (i, o) = (Layout::resolve(input), Layout::resolve(output));
    if same_file(i.index(), o.index()) {
        return Err(Error::InvalidOperation(format!(
            "{}: this input is the output archive",
            input.display()
        )));
    }
    Ok(())
}

/// Which files of which source to leave out.
#[derive(Debug, Default)]
pub struct DuplicatePlan {
    /// Per source, the paths another source keeps.
    pub skip: Vec<HashSet<String>>,
    /// Total number of files left out.
    pub skipped: u64,
}

/// One sorted stream of paths of a source.
struct Stream<'a> {
    source: usize,
    is_dir: bool,
    iter: Box<dyn Iterator<Item = Result<String>> + 'a>,
}

/// Walk the paths of all `sources` (label, archive) in path order at once. A path
/// that is a file in one source and a directory in another is an error. A file path
/// in several sources is an error too with [`Duplicates::Error`]; with
/// [`Duplicates::First`] the first source keeps it and the later ones are told to
/// skip it, with [`Duplicates::Last`] the last one keeps it, except that source 0
/// keeps every path it has when `first_wins` (an output being appended to).
pub fn plan_duplicates(
    sources: &[(&Path, &Archive, &PathMap)],
    duplicates: Duplicates,
    first_wins: bool,
) -> Result<DuplicatePlan> {
    let mut streams: Vec<Stream<'_>> = Vec::new();
    for (k, (_, archive, map)) in sources.iter().enumerate() {
        let map: &PathMap = map;
        streams.push(Stream {
            source: k,
            is_dir: false,
            iter: Box::new(archive.files(Order::Path, "").filter_map(move |r| match r {
                Ok(f) => map.file(&f.path).map(Ok),
                Err(e) => Some(Err(e)),
            })),
        });
        // With a filter, the directories are those of the files taken: a clash
        // with a file is found when it is written (and undoes the merge).
        if map.filter.is_some() {
            continue;
        }
        let mut dirs: Vec<String> = mpath::ancestors(&map.prefix).map(str::to_string).collect();
        dirs.reverse();
        dirs.extend(archive.dirs("")?.into_iter().map(|d| map.dir(&d.path)));
        dirs.dedup();
        streams.push(Stream {
            source: k,
            is_dir: true,
            iter: Box::new(dirs.into_iter().map(Ok)),
        });
    }
    let mut heap: BinaryHeap<Reverse<(String, usize)>> = BinaryHeap::new();
    for (s, st) in streams.iter_mut().enumerate() {
        if let Some(p) = st.iter.next() {
            heap.push(Reverse((p?, s)));
        }
    }
    let mut plan = DuplicatePlan {
        skip: vec![HashSet::new(); sources.len()],
        skipped: 0,
    };
    let mut group: Vec<usize> = Vec::new();
    while let Some(Reverse((path, s))) = heap.pop() {
        group.clear();
        group.push(s);
        while heap.peek().is_some_and(|Reverse((p, _))| *p == path) {
            let Reverse((_, t)) = heap.pop().expect("peeked");
            group.push(t);
        }
        for &t in &group {
            if let Some(p) = streams[t].iter.next() {
                heap.push(Reverse((p?, t)));
            }
        }
        if group.len() == 1 {
            continue;
        }
        let mut files: Vec<usize> = Vec::new();
        let mut dirs: Vec<usize> = Vec::new();
        for &t in &group {
            let st = &streams[t];
            if st.is_dir {
                dirs.push(st.source);
            } else {
                files.push(st.source);
            }
        }
        files.sort_unstable();
        if let (Some(&f), Some(&d)) = (files.first(), dirs.first()) {
            return Err(Error::InvalidOperation(format!(
                "{path}: a file in {} but a directory in {}",
                sources[f].0.display(),
                sources[d].0.display()
            )));
        }
        if files.len() > 1 {
            let keep = match duplicates {
                Duplicates::Error => {
                    return Err(Error::DuplicatePath {
                        path,
                        first: sources[files[0]].0.to_path_buf(),
                        second: sources[files[1]].0.to_path_buf(),
                    })
                }
                Duplicates::Last if !(first_wins && files[0] == 0) => files[files.len() - 1],
                _ => files[0],
            };
            for &other in files.iter().filter(|&&f| f != keep) {
                plan.skip[other].insert(path.clone());
                plan.skipped += 1;
            }
        }
    }
    Ok(plan)
}

/// A sibling of `out` to build it under: `DIR/.NAME.TAG-PID`.
pub(crate) fn temp_name(out: &Path, tag: &str) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    out.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
}

/// Remove the archives that killed runs left under [`temp_name`]s of `out` with this
/// `tag`: those whose process is gone and whose index nobody holds the writer lock
/// on. A temporary archive is as large as the output it was to become, so a rerun
/// after a kill must not leave it behind. Returns the number removed.
pub(crate) fn remove_stale_temps(out: &Path, tag: &str) -> Result<usize> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "archive".into());
    let prefix = format!(".{name}.{tag}-");
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut pids = std::collections::BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        // `PID`, `PID-shard-NNNNN`, `PID-journal`, …
        let digits = rest.split('-').next().unwrap_or("");
        if let Ok(pid) = digits.parse::<u32>() {
            if digits.len() == rest.len() || rest[digits.len()..].starts_with('-') {
                pids.insert(pid);
            }
        }
    }
    let mut removed = 0;
    for pid in pids {
        if pid == std::process::id() || process_exists(pid) {
            continue;
        }
        let temp = dir.join(format!("{prefix}{pid}"));
        if is_write_locked(&temp) {
            continue;
        }
        Layout::remove(&temp)?;
        removed += 1;
    }
    Ok(removed)
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks for existence; EPERM means it exists but is someone else's.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// True when another process holds the writer lock of the index at `path`.
fn is_write_locked(path: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let Ok(f) = File::open(path) else {
        return false;
    };
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    rc != 0
}

/// Put the archive built at `temp` in place at `out` (which must not exist): the
/// shards are renamed first and the index after them, so `out` appears complete;
/// then its companion files (the sidecar), which are never left over from another
/// archive beside the new index. `step` is called after each rename.
pub(crate) fn install(temp: &Path, out: &Path, step: &mut dyn FnMut()) -> Result<()> {
    let from = Layout::current(temp);
    let to = Layout::current(out);
    for s in from.shard_files()? {
        let dest = to.shard_path(s.number);
        std::fs::rename(&s.path, &dest).map_err(|e| Error::io(&dest, e))?;
        step();
    }
    Layout::remove_companions(out)?;
    std::fs::rename(temp, out).map_err(|e| Error::io(out, e))?;
    step();
    Layout::move_companions(temp, out)?;
    crate::shard::sync_dir(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_content_and_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.zip"), b"PK\x03\x04rest").unwrap();
        std::fs::write(d.join("b.bin"), b"\x1f\x8b\x08\x00").unwrap();
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        std::fs::write(d.join("c"), &tar).unwrap();
        std::fs::write(d.join("e.tar"), b"").unwrap();
        assert_eq!(classify(&d.join("a.zip")).unwrap(), InputKind::Zip);
        assert_eq!(classify(&d.join("b.bin")).unwrap(), InputKind::Tar);
        assert_eq!(classify(&d.join("c")).unwrap(), InputKind::Tar);
        assert_eq!(classify(&d.join("e.tar")).unwrap(), InputKind::Tar);
        assert!(matches!(
            classify(&d.join("missing")),
            Err(Error::ArchiveNotFound { .. })
        ));
        let t = temp_name(&d.join("out.barecat"), "merge");
        assert!(t
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".out.barecat.merge-"));
    }
}
