//! Changing what an archive holds: removing files and directories, moving them,
//! changing their metadata.
//!
//! Every change is a row write in the writer's open batch, like an addition: it
//! commits with everything else in the batch (all or nothing, at the next
//! [`ArchiveWriter::commit`]), with the directory statistics kept by the batch's
//! deltas, so that removing a hundred thousand files is one transaction. The bytes
//! of a removed file become a hole for `defrag`, except at the end of the current
//! shard: those are cut off after the commit (never before: a kill between the two
//! leaves trailing garbage, which [`ArchiveWriter::trim_garbage`] removes, never a
//! row without its bytes). A directory an entry leaves or enters gets the time of
//! the change as its mtime (as Python barecat's triggers and POSIX directories do);
//! its mode and owner are left as they are.

use super::ArchiveWriter;
use crate::core::entry::{Entry, FileInfo, Meta};
use crate::core::error::{Error, Result};
use crate::core::path as mpath;
use crate::core::writer::Removed;

impl ArchiveWriter {
    /// Remove the file at `path`. Its bytes become a hole, or are cut off after the
    /// commit when they end the current shard.
    pub fn remove_file(&mut self, path: &str) -> Result<FileInfo> {
        self.check_usable()?;
        let path = mpath::normalize(path);
        let Some(fi) = self.index.file(&path)? else {
            return Err(if self.index.is_dir(&path)? {
                Error::IsADirectory(path)
            } else {
                Error::NotFound(path)
            });
        };
        self.begin_batch()?;
        if let Err(e) = self.index.delete_file_row(&path) {
            return self.poison(e);
        }
        let d = self.delta(mpath::parent(&path).unwrap_or(""));
        d.files -= 1;
        d.bytes -= fi.size as i64;
        d.touched = true;
        // Only a file that ends the current shard can give bytes back (finding
        // the shard's new end reads every row of it).
        let (cur, pos) = self.shards.position();
        if fi.shard == cur && fi.end() >= pos {
            if let Some(b) = self.batch.as_mut() {
                b.cut_shard = Some(fi.shard);
            }
        }
        self.cut_batch_tail(&fi)?;
        self.maybe_commit()?;
        Ok(fi)
    }

    /// A file added in the open batch and removed again while its bytes are the
    /// last ones written gives them back at once (so that the next file takes
    /// their place), down to the bytes of the rows left, never below where the
    /// batch began: the bytes of committed rows stay until the commit.
    fn cut_batch_tail(&mut self, fi: &FileInfo) -> Result<()> {
        let (cur, pos) = self.shards.position();
        let Some(start) = self.batch.as_ref().map(|b| b.start) else {
            return Ok(());
        };
        let floor = if start.0 == cur { start.1 } else { 0 };
        if fi.shard != cur || fi.end() != pos || fi.offset < floor || self.pending.is_some() {
            return Ok(());
        }
        let end = match self.index.shard_end(cur) {
            Ok(end) => end.max(floor),
            Err(e) => return self.poison(e),
        };
        if end < pos {
            match self.shards.truncate_to_unless_mapped(end) {
                Ok(true) => self.tail_cut += pos - end,
                Ok(false) => {}
                Err(e) => return self.poison(e),
            }
        }
        Ok(())
    }

    /// Cut shard `n` back to its logical end if it is the current shard (and no
    /// file is being written into it).
    pub(super) fn cut_shard_tail(&mut self, n: u64) -> Result<()> {
        let (cur, pos) = self.shards.position();
        if n != cur || self.pending.is_some_and(|(s, _)| s == n) {
            return Ok(());
        }
        let end = self.index.shard_end(n)?;
        if end < pos {
            // Skipped while a reader has the shard mapped: the bytes stay as a gap.
            if self.shards.truncate_to_unless_mapped(end)? {
                self.tail_cut += pos - end;
            }
        }
        Ok(())
    }

    /// The directory at `path`, which may be removed (it exists, is not the root).
    fn removable_dir(&self, path: &str) -> Result<()> {
        if path.is_empty() {
            return Err(Error::InvalidOperation(
                "cannot remove the root directory".into(),
            ));
        }
        if !self.index.is_dir(path)? {
            return Err(if self.index.is_file(path)? {
                Error::NotADirectory(path.to_string())
            } else {
                Error::NotFound(path.to_string())
            });
        }
        Ok(())
    }

    /// Remove the empty directory at `path` (empty by its rows).
    pub fn remove_empty_dir(&mut self, path: &str) -> Result<()> {
        self.check_usable()?;
        let path = mpath::normalize(path);
        self.removable_dir(&path)?;
        if self.index.has_children(&path)? {
            return Err(Error::DirectoryNotEmpty(path));
        }
        self.begin_batch()?;
        if let Err(e) = self.index.delete_dir_row(&path) {
            return self.poison(e);
        }
        let d = self.delta(mpath::parent(&path).unwrap_or(""));
        d.subdirs -= 1;
        d.touched = true;
        self.dirs.known.remove(&path);
        self.dirs.complete = false;
        self.maybe_commit()
    }

    /// Remove the directory at `path` and everything below it. The totals taken out
    /// of its ancestors are counted from the rows removed, not read from the
    /// directory's own (possibly stale) statistics.
    pub fn remove_tree(&mut self, path: &str) -> Result<Removed> {
        self.check_usable()?;
        let path = mpath::normalize(path);
        self.removable_dir(&path)?;
        self.begin_batch()?;
        let removed = match self.index.delete_subtree(&path) {
            Ok(r) => r,
            Err(e) => return self.poison(e),
        };
        let d = self.delta(mpath::parent(&path).unwrap_or(""));
        d.subdirs -= 1;
        d.tree_files -= removed.files as i64;
        d.tree_bytes -= removed.bytes as i64;
        d.touched = true;
        self.dirs.known.retain(|k| !mpath::is_within(k, &path));
        self.dirs.complete = false;
        self.maybe_commit()?;
        Ok(removed)
    }

    /// Set the metadata of the file or directory at `path` (a file first, as Python
    /// barecat's `chmod`, `chown` and `update_mtime` look).
    pub fn set_meta(&mut self, path: &str, meta: Meta) -> Result<()> {
        self.change_meta(path, meta, false)
    }

    /// Like [`set_meta`](Self::set_meta), but the fields of `meta` that are `None`
    /// keep their values (Python barecat's `chmod`, `chown`, `update_mtime`).
    pub fn patch_meta(&mut self, path: &str, meta: Meta) -> Result<()> {
        self.change_meta(path, meta, true)
    }

    fn change_meta(&mut self, path: &str, meta: Meta, keep_unset: bool) -> Result<()> {
        self.check_usable()?;
        let path = mpath::normalize(path);
        self.begin_batch()?;
        let found = if keep_unset {
            self.index.patch_meta(&path, &meta)
        } else {
            match self.index.set_file_meta(&path, &meta) {
                Ok(false) => self.index.set_dir_meta(&path, &meta),
                other => other,
            }
        };
        match found {
            Ok(true) => {}
            Ok(false) => return Err(Error::NotFound(path)),
            Err(e) => return self.poison(e),
        }
        self.maybe_commit()
    }

    /// Rename a file or a directory (with everything below it). Missing ancestors of
    /// the new path are created. An existing target is an error unless `overwrite`,
    /// which replaces a file by a file, or an empty directory by a directory.
    pub fn rename(&mut self, old: &str, new: &str, overwrite: bool) -> Result<()> {
        match self.rename_many(&[(old, new)], overwrite)?.pop() {
            Some(r) => r,
            None => Ok(()),
        }
    }

    /// Rename several files or directories (see [`rename`](Self::rename)): one
    /// result per pair, in order. A rename that fails changes nothing (each runs
    /// under a savepoint); the others stay in the batch. The outer error is for a
    /// failure of the batch itself.
    pub fn rename_many(
        &mut self,
        pairs: &[(&str, &str)],
        overwrite: bool,
    ) -> Result<Vec<Result<()>>> {
        self.check_usable()?;
        self.begin_batch()?;
        let mut results = Vec::with_capacity(pairs.len());
        for (old, new) in pairs {
            // The stored counters are made current first: a directory that moves
            // takes its stored totals along. Then only this rename's deltas are
            // pending, and a failed one drops them with its rows.
            if let Err(e) = self.fold_deltas() {
                return self.poison(e);
            }
            if let Err(e) = self.index.savepoint("bc_rename") {
                return self.poison(e);
            }
            let stats = self.stats;
            let r = self.rename_one(old, new, overwrite);
            if !matches!(r, Ok(false)) {
                // A directory moved, or a failed rename is undone with the
                // directories it added: ask the index again. (A file that moved
                // only added directories, which the cache has.)
                self.dirs.known.clear();
                self.dirs.known.insert(String::new());
                self.dirs.complete = false;
            }
            let r = r.map(drop);
            let end = if r.is_ok() {
                self.index.release("bc_rename")
            } else {
                if let Some(b) = self.batch.as_mut() {
                    b.deltas.clear();
                }
                self.stats = stats;
                self.index.rollback_to("bc_rename")
            };
            if let Err(e) = end {
                return self.poison(e);
            }
            results.push(r);
        }
        self.maybe_commit()?;
        Ok(results)
    }

    /// One rename, in the open batch (with its stored counters current); returns
    /// whether a directory moved.
    fn rename_one(&mut self, old: &str, new: &str, overwrite: bool) -> Result<bool> {
        let old = mpath::normalize(old);
        let new = mpath::check_member(new)?;
        if old == new {
            return Ok(false);
        }
        if old.is_empty() || new.is_empty() {
            return Err(Error::InvalidOperation(
                "cannot rename the root directory".into(),
            ));
        }
        let entry = match self.index.file(&old)? {
            Some(f) => Entry::File(f),
            None => match self.index.dir(&old)? {
                Some(d) => Entry::Dir(d),
                None => return Err(Error::NotFound(old)),
            },
        };
        let is_dir = entry.is_dir();
        if is_dir && mpath::is_within(&new, &old) {
            return Err(Error::InvalidOperation(format!(
                "cannot move directory {old:?} into itself ({new:?})"
            )));
        }
        let missing = self.missing_ancestors(&new)?;
        let new_parent = mpath::parent(&new).unwrap_or("").to_string();
        match (self.index.file(&new)?, self.index.is_dir(&new)?) {
            (Some(_), _) if is_dir => return Err(Error::NotADirectory(new)),
            (Some(_), _) if !overwrite => return Err(Error::FileExists(new)),
            (Some(target), _) => {
                self.index.delete_file_row(&new)?;
                let d = self.delta(&new_parent);
                d.files -= 1;
                d.bytes -= target.size as i64;
                d.touched = true;
            }
            (_, true) if !is_dir => return Err(Error::IsADirectory(new)),
            (_, true) if !overwrite => {
                return Err(Error::InvalidOperation(format!(
                    "{new}: directory already exists"
                )))
            }
            (_, true) => {
                if self.index.has_children(&new)? {
                    return Err(Error::DirectoryNotEmpty(new));
                }
                self.index.delete_dir_row(&new)?;
                let d = self.delta(&new_parent);
                d.subdirs -= 1;
                d.touched = true;
            }
            _ => {}
        }
        self.insert_missing_dirs(missing)?;
        let old_parent = mpath::parent(&old).unwrap_or("").to_string();
        match entry {
            Entry::File(f) => {
                self.index.move_file_row(&old, &new)?;
                let d = self.delta(&old_parent);
                d.files -= 1;
                d.bytes -= f.size as i64;
                d.touched = true;
                let d = self.delta(&new_parent);
                d.files += 1;
                d.bytes += f.size as i64;
                d.touched = true;
            }
            Entry::Dir(dir) => {
                // The directory's stored totals move with it from the old parent's
                // ancestors to the new one's; the rows below keep their counters.
                self.index.move_dir_rows(&old, &new)?;
                let d = self.delta(&old_parent);
                d.subdirs -= 1;
                d.tree_files -= dir.num_files_tree;
                d.tree_bytes -= dir.size_tree;
                d.touched = true;
                let d = self.delta(&new_parent);
                d.subdirs += 1;
                d.tree_files += dir.num_files_tree;
                d.tree_bytes += dir.size_tree;
                d.touched = true;
            }
        }
        Ok(is_dir)
    }
}

#[cfg(test)]
mod tests {
    use crate::core::entry::Meta;
    use crate::core::error::Error;
    use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};

    fn writer(dir: &std::path::Path) -> ArchiveWriter {
        let mut opts = WriterOptions::with_mode(CreateMode::New);
        opts.commit_interval = std::time::Duration::MAX;
        opts.commit_bytes = u64::MAX;
        ArchiveWriter::open(dir.join("a.barecat"), opts).unwrap()
    }

    #[test]
    fn removals_and_renames_set_the_mtime_of_the_directories_they_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path());
        let old = Meta {
            mtime_ns: Some(1_000),
            ..Meta::default()
        };
        for d in ["a", "b", "c", "c/e", "keep"] {
            w.add_dir(d, old).unwrap();
        }
        for f in ["a/x", "a/y", "c/e/z", "keep/k"] {
            w.add_file(f, Meta::default(), b"abc", None).unwrap();
        }
        w.commit().unwrap();
        let before = crate::core::index::now_ns();
        w.remove_file("a/x").unwrap();
        w.rename("a/y", "b/y", false).unwrap();
        w.remove_tree("c/e").unwrap();
        w.commit().unwrap();
        let mtime = |w: &ArchiveWriter, p: &str| w.index().dir(p).unwrap().unwrap().meta.mtime_ns;
        for d in ["a", "b", "c"] {
            assert!(mtime(&w, d).unwrap() >= before, "{d}");
        }
        assert_eq!(mtime(&w, "keep"), Some(1_000));
    }

    #[test]
    fn changes_within_one_batch_keep_statistics_right() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path());
        for p in ["d/x", "d/e/y", "d/e/z", "k/w"] {
            w.add_file(p, Meta::default(), b"abc", None).unwrap();
        }
        // Moved while its counters are still pending in the batch.
        w.rename("d", "m/n/d2", false).unwrap();
        w.rename("k/w", "m/w", false).unwrap();
        assert!(matches!(
            w.rename("m/w", "m/n/d2/x", false).unwrap_err(),
            Error::FileExists(_)
        ));
        w.remove_file("m/n/d2/e/y").unwrap();
        w.remove_empty_dir("k").unwrap();
        assert!(matches!(
            w.remove_empty_dir("m").unwrap_err(),
            Error::DirectoryNotEmpty(_)
        ));
        w.set_meta(
            "m/n",
            Meta {
                mode: Some(0o40700),
                ..Meta::default()
            },
        )
        .unwrap();
        assert_eq!(w.remove_tree("m/n/d2/e").unwrap().files, 1);
        w.commit().unwrap();
        let i = w.index();
        assert!(i.stats_mismatches().unwrap().is_empty());
        let root = i.dir("").unwrap().unwrap();
        assert_eq!((root.num_files_tree, root.size_tree), (2, 6));
        assert_eq!(i.dir("m/n").unwrap().unwrap().meta.mode, Some(0o40700));
        assert!(i.is_file("m/n/d2/x").unwrap() && i.is_file("m/w").unwrap());
        w.finish().unwrap();
    }

    #[test]
    fn a_file_added_and_removed_in_one_batch_gives_its_bytes_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path());
        w.add_file("a", Meta::default(), b"first", None).unwrap();
        w.add_file("b", Meta::default(), b"second", None).unwrap();
        w.remove_file("b").unwrap();
        w.add_file("c", Meta::default(), b"3", None).unwrap();
        assert_eq!(w.index().file("c").unwrap().unwrap().offset, 5);
        w.finish().unwrap();
    }
}
