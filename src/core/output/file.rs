//! Files that appear whole or not at all.
//!
//! A small file (a `meta.json`, a record table, a sidecar) is written under a
//! temporary name beside its target, synced and renamed over it ([`replace_file`]).
//!
//! A zip or tar written to a path ([`AtomicFile`]) is first written to an unnamed file in the target
//! directory (`O_TMPFILE`) and linked under its name only when complete and synced,
//! so a failed or killed export leaves nothing behind. Where the file system has no
//! `O_TMPFILE`, a hidden temporary name next to the target is used and removed on
//! failure (a killed process can leave that hidden file, never a truncated target).
//! Standard output (`-`) and special files such as `/dev/null` or a FIFO are written
//! directly.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, CWD};
use rustix::io::Errno;

use crate::core::error::{Error, IoContext, Result};

/// Sync the directory that `path` is in, so that a rename or a removal in it
/// survives a crash.
pub fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).at(dir)
}

/// Rename the finished file `temp` to `path` (replacing it) and sync the directory.
pub fn rename_into_place(temp: &Path, path: &Path) -> Result<()> {
    fs::rename(temp, path).at(path)?;
    sync_dir(path)
}

/// Replace `path` atomically with what `write` writes: to `temp` (beside `path`;
/// created or truncated), synced, then renamed over `path`, and the directory
/// synced. A reader sees the old file, or the new one whole. On failure `temp` is
/// removed.
pub fn replace_file(
    path: &Path,
    temp: &Path,
    write: impl FnOnce(&File) -> Result<()>,
) -> Result<()> {
    let r = (|| {
        let f = File::create(temp).at(temp)?;
        write(&f)?;
        f.sync_all().at(temp)?;
        drop(f);
        rename_into_place(temp, path)
    })();
    if r.is_err() {
        let _ = fs::remove_file(temp);
    }
    r
}

/// Replace `path` atomically with `data` ([`replace_file`]).
pub fn write_file(path: &Path, temp: &Path, data: &[u8]) -> Result<()> {
    replace_file(path, temp, |mut f| f.write_all(data).at(temp))
}

enum Target {
    Stdout,
    Direct,
    /// Unnamed file in `dir`, linked as `name` on commit.
    Unnamed,
    /// Hidden temporary `temp` in `dir`, renamed to `name` on commit.
    Named {
        temp: OsString,
    },
}

/// A streamed output (an export) that appears at its path only when committed; see
/// the module documentation.
pub struct AtomicFile {
    target: Target,
    path: PathBuf,
    dir: Option<OwnedFd>,
    name: OsString,
    force: bool,
    done: bool,
}

impl AtomicFile {
    /// Prepare `path` (`-` = standard output) for writing and return the file to
    /// write to. An existing regular file is an error unless `force`.
    pub fn create(path: &Path, force: bool) -> Result<(AtomicFile, File)> {
        let mut out = AtomicFile {
            target: Target::Stdout,
            path: path.to_path_buf(),
            dir: None,
            name: OsString::new(),
            force,
            done: false,
        };
        if path.as_os_str() == "-" {
            let fd = io::stdout().as_fd().try_clone_to_owned().at("<stdout>")?;
            return Ok((out, File::from(fd)));
        }
        match fs::metadata(path) {
            Ok(md) if md.is_dir() => {
                return Err(Error::Refused {
                    path: path.into(),
                    detail: "is a directory".into(),
                })
            }
            Ok(md)
                if md.file_type().is_char_device()
                    || md.file_type().is_fifo()
                    || md.file_type().is_socket()
                    || md.file_type().is_block_device() =>
            {
                out.target = Target::Direct;
                let f = fs::OpenOptions::new().write(true).open(path).at(path)?;
                return Ok((out, f));
            }
            Ok(_) if !force => {
                return Err(Error::Refused {
                    path: path.into(),
                    detail: "already exists (use -f/--force to replace it)".into(),
                })
            }
            _ => {}
        }
        let name = path
            .file_name()
            .ok_or_else(|| Error::Refused {
                path: path.into(),
                detail: "is not a file name".into(),
            })?
            .to_os_string();
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = rustix::fs::open(
            parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Error::io(parent, e.into()))?;
        out.name = name;
        let mode = Mode::from_raw_mode(0o666);
        let file = match rustix::fs::openat(
            &dir,
            ".",
            OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
            mode,
        ) {
            Ok(fd) => {
                out.target = Target::Unnamed;
                File::from(fd)
            }
            Err(_) => {
                let mut last = None;
                let mut file = None;
                for n in 0..100u32 {
                    let mut temp = OsString::from(".");
                    temp.push(&out.name);
                    temp.push(format!(".{}-{n}.part", std::process::id()));
                    match rustix::fs::openat(
                        &dir,
                        temp.as_os_str(),
                        OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                        mode,
                    ) {
                        Ok(fd) => {
                            out.target = Target::Named { temp };
                            file = Some(File::from(fd));
                            break;
                        }
                        Err(Errno::EXIST) => continue,
                        Err(e) => {
                            last = Some(e);
                            break;
                        }
                    }
                }
                match file {
                    Some(f) => f,
                    None => {
                        let e = last.unwrap_or(Errno::EXIST);
                        return Err(Error::io(path, e.into()));
                    }
                }
            }
        };
        out.dir = Some(dir);
        Ok((out, file))
    }

    /// True when the output is a terminal (refuse to write binary data there).
    pub fn is_terminal(&self) -> bool {
        matches!(self.target, Target::Stdout) && io::stdout().is_terminal()
    }

    /// Where the output goes, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Make the written file durable and give it its name.
    pub fn commit(mut self, file: File) -> Result<()> {
        let path = self.path.clone();
        let dir = match (&self.target, &self.dir) {
            (Target::Stdout | Target::Direct, _) | (_, None) => {
                self.done = true;
                return Ok(());
            }
            (_, Some(d)) => d,
        };
        file.sync_data().at(&path)?;
        match &self.target {
            Target::Unnamed => {
                let proc = format!("/proc/self/fd/{}", file.as_raw_fd());
                let link = |name: &OsStr| {
                    rustix::fs::linkat(&file, "", dir, name, AtFlags::EMPTY_PATH).or_else(|_| {
                        rustix::fs::linkat(CWD, proc.as_str(), dir, name, AtFlags::SYMLINK_FOLLOW)
                    })
                };
                if self.force {
                    // Link under a temporary name, then rename over the target.
                    let mut temp = OsString::from(".");
                    temp.push(&self.name);
                    temp.push(format!(".{}.new", std::process::id()));
                    let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
                    link(&temp).map_err(|e| Error::io(&path, e.into()))?;
                    if let Err(e) =
                        rustix::fs::renameat(dir, temp.as_os_str(), dir, self.name.as_os_str())
                    {
                        let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
                        return Err(Error::io(&path, e.into()));
                    }
                } else {
                    link(&self.name).map_err(|e| match e {
                        Errno::EXIST => Error::Refused {
                            path: path.clone(),
                            detail: "appeared while it was being written; not replaced".into(),
                        },
                        e => Error::io(&path, e.into()),
                    })?;
                }
            }
            Target::Named { temp } => {
                let flags = if self.force {
                    RenameFlags::empty()
                } else {
                    RenameFlags::NOREPLACE
                };
                let r = rustix::fs::renameat_with(
                    dir,
                    temp.as_os_str(),
                    dir,
                    self.name.as_os_str(),
                    flags,
                );
                let r = match r {
                    // No RENAME_NOREPLACE on this file system: check, then rename.
                    Err(Errno::INVAL) if !self.force => {
                        match rustix::fs::statat(
                            dir,
                            self.name.as_os_str(),
                            AtFlags::SYMLINK_NOFOLLOW,
                        ) {
                            Ok(_) => Err(Errno::EXIST),
                            Err(_) => rustix::fs::renameat(
                                dir,
                                temp.as_os_str(),
                                dir,
                                self.name.as_os_str(),
                            ),
                        }
                    }
                    r => r,
                };
                r.map_err(|e| match e {
                    Errno::EXIST => Error::Refused {
                        path: path.clone(),
                        detail: "appeared while it was being written; not replaced".into(),
                    },
                    e => Error::io(&path, e.into()),
                })?;
            }
            Target::Stdout | Target::Direct => {}
        }
        self.done = true;
        rustix::fs::fsync(dir).map_err(|e| Error::io(&path, e.into()))?;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let (Target::Named { temp }, Some(dir)) = (&self.target, &self.dir) {
            let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaced_files_are_whole_and_leave_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let (p, t) = (
            tmp.path().join("meta.json"),
            tmp.path().join("meta.json.tmp"),
        );
        write_file(&p, &t, b"one").unwrap();
        write_file(&p, &t, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert!(!t.exists());
        let failed = replace_file(&p, &t, |_| Err(Error::InvalidOperation("no".into())));
        assert!(failed.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert!(!t.exists());
    }

    #[test]
    fn appears_only_on_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("out.tar");
        let (out, mut f) = AtomicFile::create(&p, false).unwrap();
        f.write_all(b"data").unwrap();
        assert!(!p.exists());
        out.commit(f).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"data");
        // Existing: refused without force, replaced with it.
        assert!(AtomicFile::create(&p, false).is_err());
        let (out, mut f) = AtomicFile::create(&p, true).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"data");
        out.commit(f).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        // Dropped without commit: nothing is left.
        let q = tmp.path().join("gone.zip");
        let (out, mut f) = AtomicFile::create(&q, false).unwrap();
        f.write_all(b"half").unwrap();
        drop(out);
        drop(f);
        let names: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("out.tar")]);
    }

    #[test]
    fn special_files_are_written_directly() {
        let (out, mut f) = AtomicFile::create(Path::new("/dev/null"), false).unwrap();
        f.write_all(b"x").unwrap();
        out.commit(f).unwrap();
        assert!(Path::new("/dev/null").exists());
    }
}
