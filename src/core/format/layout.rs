//! Where the parts of an archive live on disk (docs/FORMAT.md §1).
//!
//! The archive path `P` as typed is the index; shard *i* is `P-shard-{i:05}`. A legacy
//! archive keeps its index at `P-sqlite-index` with the same shard names. Shards are
//! discovered by parsing the numbers in their names, so numbering gaps are seen and
//! reported instead of papered over.
//!
//! Companion files are optional parts of our own named `P<suffix>` in both naming
//! conventions (the B-tree sidecar `P-btreemeta`, …; see [`COMPANION_SUFFIXES`]).
//! They go wherever the archive goes: removed with it, renamed with it when a
//! finished output is put in place.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::core::error::{Error, IoContext, Result};

const SHARD_INFIX: &str = "-shard-";
const LEGACY_INDEX_SUFFIX: &str = "-sqlite-index";
const SIDE_SUFFIXES: [&str; 3] = ["-journal", "-wal", "-shm"];
/// The B-tree sidecar's suffix: `P-btreemeta` (see [`crate::core::sidecar`]).
pub const SIDECAR_SUFFIX: &str = "-btreemeta";
/// Suffixes of the companion files of an archive `P`: files named `P<suffix>` that
/// belong to it and are removed, renamed and replaced with it. A companion's
/// `.tmp` sibling (a write in progress) is removed with it too. A directory under a
/// companion's name is not ours: it is left alone.
/// They are the sidecar, the record table (`P-records`,
/// [`crate::records::format::TABLE_SUFFIX`]) and the undo journal of an in-place
/// rewrite (`P-undo`, [`UNDO_SUFFIX`]).
pub const COMPANION_SUFFIXES: &[&str] = &[SIDECAR_SUFFIX, TABLE_SUFFIX, UNDO_SUFFIX];

/// Suffix of the undo journal of a file being rewritten in place: `P-undo`
/// (`crate::core::writer`, docs/FORMAT.md §10).
pub const UNDO_SUFFIX: &str = "-undo";

/// Suffix of the record table beside a barecat archive: `P-records`
/// ([`crate::records`]).
pub const TABLE_SUFFIX: &str = "-records";

/// The file names of one archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    base: PathBuf,
    index: PathBuf,
    legacy: bool,
}

/// A shard file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardFile {
    /// The shard number.
    pub number: u64,
    /// Its path.
    pub path: PathBuf,
    /// It is a symbolic link (to another archive's shard, or to a wrapped tar or zip).
    pub is_symlink: bool,
}

fn with_suffix(base: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = base.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

impl Layout {
    /// Resolve the archive path as Python does (docs/FORMAT.md §1.1): `P` if it exists and is not a
    /// directory; else `P-sqlite-index` if that exists; else `P` (a new archive).
    pub fn resolve(path: impl AsRef<Path>) -> Layout {
        let base = path.as_ref().to_path_buf();
        let legacy_index = with_suffix(&base, LEGACY_INDEX_SUFFIX);
        let plain_is_file = fs::metadata(&base).map(|m| !m.is_dir()).unwrap_or(false);
        if !plain_is_file && legacy_index.exists() {
            return Layout {
                base,
                index: legacy_index,
                legacy: true,
            };
        }
        Layout::current(base)
    }

    /// The current naming, index at `P`, whatever exists on disk.
    pub fn current(path: impl AsRef<Path>) -> Layout {
        let base = path.as_ref().to_path_buf();
        Layout {
            index: base.clone(),
            base,
            legacy: false,
        }
    }

    /// The naming of a remote archive: `base` is its URL as given, `index` the URL
    /// of its index object (`base`, or `base-sqlite-index` when `legacy`). Part
    /// names (shards, sidecar) are URLs then; nothing here may touch the file
    /// system for it (see [`Layout::is_remote`]).
    pub fn remote(base: String, legacy: bool) -> Layout {
        let base = PathBuf::from(base);
        let index = if legacy {
            with_suffix(&base, LEGACY_INDEX_SUFFIX)
        } else {
            base.clone()
        };
        Layout {
            base,
            index,
            legacy,
        }
    }

    /// Is this the naming of a remote archive (its base a URL:
    /// [`crate::core::location::is_remote`])?
    pub fn is_remote(&self) -> bool {
        crate::core::location::is_remote(&self.base)
    }

    /// The archive path as typed.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The SQLite index file.
    pub fn index(&self) -> &Path {
        &self.index
    }

    /// True for the legacy `P-sqlite-index` naming.
    pub fn is_legacy(&self) -> bool {
        self.legacy
    }

    /// The B-tree sidecar: `P-btreemeta`, beside the index in both namings.
    pub fn sidecar(&self) -> PathBuf {
        with_suffix(&self.base, SIDECAR_SUFFIX)
    }

    /// The undo journal of an in-place rewrite: `P-undo`, beside the index in both
    /// namings. It exists only while a rewrite is under way (or was interrupted).
    pub fn undo_journal(&self) -> PathBuf {
        with_suffix(&self.base, UNDO_SUFFIX)
    }

    /// The companion files of the archive (whether they exist or not).
    pub fn companion_files(&self) -> Vec<PathBuf> {
        COMPANION_SUFFIXES
            .iter()
            .map(|s| with_suffix(&self.base, s))
            .collect()
    }

    /// Remove the companion files of the archive at `path` (and their `.tmp`
    /// siblings). Missing ones are fine; a directory under such a name is not ours
    /// and is left alone.
    pub fn remove_companions(path: impl AsRef<Path>) -> Result<()> {
        for c in Layout::current(path).companion_files() {
            remove_companion(&with_suffix(&c, ".tmp"))?;
            remove_companion(&c)?;
        }
        Ok(())
    }

    /// Put the companion files of the archive at `from` in place for the archive at
    /// `to`: each one `from` has is renamed over `to`'s, and each one it lacks is
    /// removed from `to` (an old one would describe another archive). Called after
    /// the index of `to` is in place; callers also [`remove_companions`] of `to`
    /// before putting its index in place, so that no old companion ever sits
    /// beside the new index. A directory in the way of a companion is left alone
    /// (with a warning) and the companion dropped.
    ///
    /// [`remove_companions`]: Layout::remove_companions
    pub fn move_companions(from: &Path, to: &Path) -> Result<()> {
        let (from, to) = (Layout::current(from), Layout::current(to));
        for (src, dest) in from.companion_files().into_iter().zip(to.companion_files()) {
            if fs::symlink_metadata(&dest).is_ok_and(|m| m.is_dir()) {
                if fs::symlink_metadata(&src).is_ok() {
                    log::warn!(
                        "{}: a directory is in the way; not put in place",
                        dest.display()
                    );
                    remove_companion(&src)?;
                }
                continue;
            }
            match fs::rename(&src, &dest) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => remove_companion(&dest)?,
                Err(e) => return Err(Error::io(&dest, e)),
            }
        }
        Ok(())
    }

    /// The path of shard `n`: `P-shard-{n:05}`.
    pub fn shard_path(&self, n: u64) -> PathBuf {
        with_suffix(&self.base, &format!("{SHARD_INFIX}{n:05}"))
    }

    fn dir_and_stem(&self) -> (PathBuf, OsString) {
        let dir = match self.base.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut stem = self
            .base
            .file_name()
            .map(OsStr::to_owned)
            .unwrap_or_default();
        stem.push(SHARD_INFIX);
        (dir, stem)
    }

    /// All shard files present, sorted by number. Only names of the exact form
    /// `P-shard-NNNNN` (zero-padded to at least five digits, as the writer names them)
    /// count. Dangling symlinks are listed too (reading them fails later, clearly).
    pub fn shard_files(&self) -> Result<Vec<ShardFile>> {
        let (dir, stem) = self.dir_and_stem();
        let stem = stem.as_bytes();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.at(&dir)?;
            let name = entry.file_name();
            let bytes = name.as_bytes();
            let Some(digits) = bytes.strip_prefix(stem) else {
                continue;
            };
            let Some(number) = parse_shard_number(digits) else {
                continue;
            };
            let file_type = entry.file_type().at(entry.path())?;
            let path = entry.path();
            let (regular, dir) = if file_type.is_symlink() {
                fs::metadata(&path).map_or((true, false), |m| (m.is_file(), m.is_dir()))
            } else {
                (file_type.is_file(), file_type.is_dir())
            };
            if !regular {
                return Err(Error::not_a_file(&path, dir));
            }
            out.push(ShardFile {
                number,
                path: self.shard_path(number),
                is_symlink: file_type.is_symlink(),
            });
        }
        out.sort_by_key(|s| s.number);
        Ok(out)
    }

    /// Shard files numbered contiguously from 0, or an error naming the first
    /// missing number.
    pub fn contiguous_shards(&self) -> Result<Vec<ShardFile>> {
        let shards = self.shard_files()?;
        for (i, s) in shards.iter().enumerate() {
            if s.number != i as u64 {
                return Err(Error::MissingShard {
                    path: self.shard_path(i as u64),
                    shard: i as u64,
                    detail: format!("shard {} exists, so the numbering has a gap", s.number),
                });
            }
        }
        Ok(shards)
    }

    /// The SQLite side files of the index (`-journal`, `-wal`, `-shm`).
    pub fn side_files(&self) -> Vec<PathBuf> {
        SIDE_SUFFIXES
            .iter()
            .map(|s| with_suffix(&self.index, s))
            .collect()
    }

    /// Does an archive exist at `path` (docs/FORMAT.md §1.3)? True if `P` exists and is not a
    /// directory, if `P-sqlite-index` exists, or if any shard file exists.
    pub fn exists(path: impl AsRef<Path>) -> Result<bool> {
        let base = path.as_ref();
        if fs::symlink_metadata(base)
            .map(|m| !m.is_dir())
            .unwrap_or(false)
        {
            return Ok(true);
        }
        if fs::symlink_metadata(with_suffix(base, LEGACY_INDEX_SUFFIX)).is_ok() {
            return Ok(true);
        }
        Ok(!Layout::current(base).shard_files()?.is_empty())
    }

    /// Remove every part of the archive at `path`: the index under both names, all
    /// shards (symbolic links are removed, not their targets; dangling ones too), the
    /// SQLite side files and the companion files. Missing parts are fine.
    pub fn remove(path: impl AsRef<Path>) -> Result<()> {
        let base = path.as_ref();
        let current = Layout::current(base);
        let legacy_index = with_suffix(base, LEGACY_INDEX_SUFFIX);
        // Companions first: a removal cut short never leaves one beside a new index.
        Layout::remove_companions(base)?;
        let mut victims = vec![base.to_path_buf(), legacy_index.clone()];
        victims.extend(current.side_files());
        victims.extend(SIDE_SUFFIXES.iter().map(|s| with_suffix(&legacy_index, s)));
        victims.extend(current.shard_files()?.into_iter().map(|s| s.path));
        for v in victims {
            match fs::symlink_metadata(&v) {
                Ok(m) if m.is_dir() => {
                    return Err(Error::io(
                        &v,
                        io::Error::other("is a directory, not an archive part"),
                    ))
                }
                Ok(_) => fs::remove_file(&v).at(&v)?,
                Err(_) => {}
            }
        }
        Ok(())
    }
}

/// Remove the companion file at `p`: missing is fine, a directory is left alone.
fn remove_companion(p: &Path) -> Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => fs::remove_file(p).at(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(p, e)),
    }
}

/// Parse the digits after `-shard-`: at least five ASCII digits, zero-padded to
/// exactly five when the number is below 100000, with no other characters.
fn parse_shard_number(digits: &[u8]) -> Option<u64> {
    if digits.len() < 5 || digits.len() > 12 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let text = std::str::from_utf8(digits).ok()?;
    let n: u64 = text.parse().ok()?;
    (format!("{n:05}") == text).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_numbers() {
        assert_eq!(parse_shard_number(b"00000"), Some(0));
        assert_eq!(parse_shard_number(b"00042"), Some(42));
        assert_eq!(parse_shard_number(b"123456"), Some(123456));
        assert_eq!(parse_shard_number(b"0001"), None);
        assert_eq!(parse_shard_number(b"000001"), None);
        assert_eq!(parse_shard_number(b"0000a"), None);
        assert_eq!(parse_shard_number(b"00001.bak"), None);
    }

    #[test]
    fn naming() {
        let l = Layout::current("x/data.barecat");
        assert_eq!(l.shard_path(3), PathBuf::from("x/data.barecat-shard-00003"));
        assert_eq!(
            l.shard_path(100000),
            PathBuf::from("x/data.barecat-shard-100000")
        );
        assert_eq!(l.index(), Path::new("x/data.barecat"));
    }

    #[test]
    fn discovery_and_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("a");
        for n in ["00000", "00001", "00003"] {
            fs::write(format!("{}-shard-{n}", base.display()), b"").unwrap();
        }
        fs::write(format!("{}-shard-1", base.display()), b"").unwrap();
        fs::write(format!("{}-shard-00002.tmp", base.display()), b"").unwrap();
        let l = Layout::current(&base);
        let found: Vec<u64> = l.shard_files().unwrap().iter().map(|s| s.number).collect();
        assert_eq!(found, vec![0, 1, 3]);
        let err = l.contiguous_shards().unwrap_err().to_string();
        assert!(err.contains("missing shard 2"), "{err}");
    }

    #[test]
    fn companions_go_with_the_archive() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (a, b) = (d.join("a"), d.join("b"));
        for name in [
            "a",
            "a-shard-00000",
            "a-btreemeta",
            "a-btreemeta.tmp",
            "b-btreemeta",
        ] {
            fs::write(d.join(name), name).unwrap();
        }
        assert_eq!(Layout::current(&a).sidecar(), d.join("a-btreemeta"));
        assert_eq!(
            Layout::resolve(d.join("old")).sidecar(),
            d.join("old-btreemeta"),
            "named after the archive path in both namings"
        );
        // Renamed over the destination's, which is removed when there is none.
        Layout::move_companions(&a, &b).unwrap();
        assert_eq!(fs::read(d.join("b-btreemeta")).unwrap(), b"a-btreemeta");
        assert!(!d.join("a-btreemeta").exists());
        Layout::move_companions(&a, &b).unwrap();
        assert!(!d.join("b-btreemeta").exists());
        // Removed with the archive, with a write in progress; a directory is not ours.
        fs::write(d.join("a-btreemeta"), b"x").unwrap();
        Layout::remove(&a).unwrap();
        let left: Vec<_> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{left:?}");
        fs::create_dir(d.join("a-btreemeta")).unwrap();
        fs::write(&a, b"index").unwrap();
        Layout::remove(&a).unwrap();
        assert!(d.join("a-btreemeta").is_dir() && !a.exists());
    }

    #[test]
    fn resolve_legacy_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("old");
        fs::write(dir.path().join("old-sqlite-index"), b"x").unwrap();
        fs::write(dir.path().join("old-shard-00000"), b"x").unwrap();
        let l = Layout::resolve(&base);
        assert!(l.is_legacy());
        assert_eq!(l.index(), dir.path().join("old-sqlite-index"));
        assert_eq!(l.shard_path(0), dir.path().join("old-shard-00000"));
        assert!(Layout::exists(&base).unwrap());
        Layout::remove(&base).unwrap();
        assert!(!Layout::exists(&base).unwrap());
    }
}
