//! File-system primitives that never leave a directory: every name is one path
//! component opened relative to a directory handle, with `O_NOFOLLOW`, and through
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it. A
//! symbolic link in the way is an error, never followed.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use crate::core::error::{Error, Result};

const UNKNOWN: u8 = 0;
const HAVE: u8 = 1;
const MISSING: u8 = 2;
static OPENAT2: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Open one component `name` of directory `dir`, refusing symbolic links.
pub(crate) fn open_at(
    dir: BorrowedFd<'_>,
    name: &str,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    debug_assert!(!name.contains('/') && name != ".." && name != "." && !name.is_empty());
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if OPENAT2.load(Ordering::Relaxed) != MISSING {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(dir, name, flags, mode, resolve) {
                // A concurrent rename elsewhere on the system; retrying is what the
                // man page asks for.
                Err(Errno::AGAIN) if tries < 8 => tries += 1,
                // No openat2 (kernel before 5.6, or filtered by a sandbox).
                Err(Errno::NOSYS) | Err(Errno::PERM)
                    if OPENAT2.load(Ordering::Relaxed) == UNKNOWN =>
                {
                    OPENAT2.store(MISSING, Ordering::Relaxed);
                    break;
                }
                r => {
                    OPENAT2.store(HAVE, Ordering::Relaxed);
                    return r.map_err(io::Error::from);
                }
            }
        }
    }
    rustix::fs::openat(dir, name, flags, mode).map_err(io::Error::from)
}

/// What is at `name` in `dir`, without following a symbolic link.
pub(crate) fn kind_at(dir: BorrowedFd<'_>, name: &str) -> Option<FileType> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| FileType::from_raw_mode(st.st_mode))
}

/// Describe why `name` in `dir` cannot be used as a directory.
fn not_a_dir(dir: BorrowedFd<'_>, name: &str) -> &'static str {
    match kind_at(dir, name) {
        Some(FileType::Symlink) => "is a symbolic link; not followed",
        Some(FileType::Directory) => "is a directory that cannot be opened",
        Some(_) => "exists and is not a directory",
        None => "cannot be opened as a directory",
    }
}

/// Open directory handles below a root, creating missing directories, caching the
/// handles. Every component is opened with `O_NOFOLLOW | O_DIRECTORY` relative to
/// its parent's handle, so nothing outside the root is ever reached.
pub(crate) struct DirCache<'r> {
    root: BorrowedFd<'r>,
    root_path: &'r Path,
    map: HashMap<String, OwnedFd>,
    create: bool,
}

/// Handles kept per cache before it is emptied (each is a file descriptor).
const CACHE_LIMIT: usize = 256;

impl<'r> DirCache<'r> {
    pub(crate) fn new(root: BorrowedFd<'r>, root_path: &'r Path, create: bool) -> DirCache<'r> {
        DirCache {
            root,
            root_path,
            map: HashMap::new(),
            create,
        }
    }

    /// The destination path of a relative path, for messages.
    pub(crate) fn dest(&self, rel: &str) -> PathBuf {
        self.root_path.join(rel)
    }

    /// A handle of directory `rel` (`""` = the root), created with its missing
    /// ancestors (mode 0o777 less the umask) when the cache creates.
    pub(crate) fn get(&mut self, rel: &str) -> Result<BorrowedFd<'_>> {
        if rel.is_empty() {
            return Ok(self.root);
        }
        if !self.map.contains_key(rel) {
            if self.map.len() >= CACHE_LIMIT {
                self.map.clear();
            }
            // Longest cached ancestor; open the components below it one by one.
            let mut start = 0;
            let mut end = rel.len();
            while let Some(i) = rel[..end].rfind('/') {
                if self.map.contains_key(&rel[..i]) {
                    start = i + 1;
                    break;
                }
                end = i;
            }
            let mut pos = start;
            loop {
                let next = rel[pos..].find('/').map(|i| pos + i).unwrap_or(rel.len());
                let name = &rel[pos..next];
                let parent = if pos == 0 {
                    self.root
                } else {
                    self.map[&rel[..pos - 1]].as_fd()
                };
                let fd = self.open_child(parent, &rel[..next], name)?;
                self.map.insert(rel[..next].to_string(), fd);
                if next == rel.len() {
                    break;
                }
                pos = next + 1;
            }
        }
        Ok(self.map[rel].as_fd())
    }

    fn open_child(&self, parent: BorrowedFd<'_>, rel: &str, name: &str) -> Result<OwnedFd> {
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        let mut created = false;
        loop {
            match open_at(parent, name, flags, Mode::empty()) {
                Ok(fd) => return Ok(fd),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) && self.create && !created => {
                    match rustix::fs::mkdirat(parent, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => created = true,
                        Err(e) => return Err(Error::io(self.dest(rel), e.into())),
                    }
                }
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ENOTDIR) | Some(libc::ELOOP) | Some(libc::EXDEV)
                    ) =>
                {
                    return Err(Error::Refused {
                        path: self.dest(rel),
                        detail: not_a_dir(parent, name).into(),
                    })
                }
                Err(e) => return Err(Error::io(self.dest(rel), e)),
            }
        }
    }
}

/// Open (for reading) the directory `rel` below `root` without following links, to
/// change its metadata.
pub(crate) fn open_dir_for_meta(cache: &mut DirCache<'_>, rel: &str) -> Result<OwnedFd> {
    let (parent, name) = split(rel);
    let dest = cache.dest(rel);
    let pfd = cache.get(parent)?;
    match open_at(pfd, name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENOTDIR) | Some(libc::ELOOP) | Some(libc::EXDEV)
            ) =>
        {
            Err(Error::Refused {
                path: dest,
                detail: not_a_dir(pfd, name).into(),
            })
        }
        Err(e) => Err(Error::io(dest, e)),
    }
}

/// Split a relative path into its parent (`""` at top level) and its last component.
pub(crate) fn split(rel: &str) -> (&str, &str) {
    match rel.rfind('/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => ("", rel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn symlinks_are_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        symlink(&outside, root.join("link")).unwrap();
        fs::write(root.join("file"), b"x").unwrap();
        let rfd = fs::File::open(&root).unwrap();
        let mut c = DirCache::new(rfd.as_fd(), &root, true);
        assert!(c.get("a/b/c").is_ok());
        assert!(root.join("a/b/c").is_dir());
        let e = c.get("link/x").err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = c.get("file/x").err().unwrap().to_string();
        assert!(e.contains("not a directory"), "{e}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        assert_eq!(split("a/b/c"), ("a/b", "c"));
        assert_eq!(split("c"), ("", "c"));
    }
}
