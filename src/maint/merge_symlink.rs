//! Symlink merge: an output archive whose shards are relative symbolic links to the
//! shards of the inputs, so no file data is copied.
//!
//! The links are numbered contiguously: the shards of input *k* come after those of
//! the inputs before it, and its rows are renumbered by the same base (the number of
//! links made before it). Directory statistics are recomputed from the merged rows,
//! never summed, so directories shared by several inputs are counted once.
//!
//! The index is built under a temporary name and renamed into place after the links
//! are made; conflicts and duplicates are found before an existing output is
//! removed. Writers refuse to write into an archive with symlinked shards unless
//! told otherwise ([`crate::WriterOptions::allow_symlinked_shards`]).

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::core::archive::Archive;
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;
use crate::core::index::Index;
use crate::core::output::sync_dir;
use crate::core::output::{remove_stale_temps, temp_name};
use crate::maint::inputs::{check_not_output, classify, open_barecat, InputKind};
use crate::maint::merge::{MergeOptions, PathMap};

/// Options of [`merge_symlink`].
#[derive(Debug, Clone)]
pub struct SymlinkMergeOptions {
    /// Replace an existing output (its shard links are removed, not their targets).
    pub overwrite: bool,
    /// Keep the first of several files with the same path instead of failing.
    pub ignore_duplicates: bool,
    /// Write the output's B-tree sidecar ([`crate::core::sidecar`]).
    pub sidecar: bool,
    /// Put every input's files below this directory (`--prefix`).
    pub prefix: Option<String>,
    /// Put each input's files below a directory named after the input
    /// ([`crate::maint::merge::subdir_name`]; below `prefix` when both are given).
    pub as_subdirs: bool,
}

impl Default for SymlinkMergeOptions {
    fn default() -> Self {
        SymlinkMergeOptions {
            overwrite: false,
            ignore_duplicates: false,
            sidecar: true,
            prefix: None,
            as_subdirs: false,
        }
    }
}

/// What [`merge_symlink`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SymlinkMergeReport {
    /// Number of inputs merged.
    pub inputs: usize,
    /// File rows in the output.
    pub files: u64,
    /// Directory rows in the output.
    pub dirs: u64,
    /// Shard links made.
    pub shards: u64,
    /// Files left out because an earlier input has the path.
    pub duplicates_skipped: u64,
}

struct Input {
    path: PathBuf,
    layout: Layout,
    shards: Vec<PathBuf>,
    files: u64,
    /// Where its files go in the output (`""`: where they are).
    prefix: String,
}

/// Merge `inputs` into `output` by linking their shards.
pub fn merge_symlink(
    output: &Path,
    inputs: &[PathBuf],
    opts: &SymlinkMergeOptions,
) -> Result<SymlinkMergeReport> {
    if inputs.is_empty() {
        return Err(Error::InvalidOperation("no input to merge".into()));
    }
    let mut list = Vec::with_capacity(inputs.len());
    for p in inputs {
        if crate::core::location::is_remote(p) {
            return Err(Error::UnsupportedInput {
                path: p.clone(),
                detail: "a symlink merge needs local inputs (links cannot point at a remote \
                         archive's shards); use `barecat-merge -o OUT` to copy it"
                    .into(),
            });
        }
        check_not_output(p, output)?;
        if classify(p)? != InputKind::Barecat {
            return Err(Error::UnsupportedInput {
                path: p.clone(),
                detail: "a symlink merge needs barecat inputs (tar and zip files have no shards)"
                    .into(),
            });
        }
        let prefix = PathMap::for_input(
            p,
            &MergeOptions {
                prefix: opts.prefix.clone(),
                as_subdirs: opts.as_subdirs,
                ..MergeOptions::default()
            },
        )?
        .prefix;
        let a: Archive = open_barecat(p)?;
        let layout = a.layout().clone();
        let shards = layout
            .contiguous_shards()?
            .into_iter()
            .map(|s| s.path)
            .collect();
        list.push(Input {
            path: p.clone(),
            files: a.count_files()?,
            layout,
            shards,
            prefix,
        });
    }
    if Layout::exists(output)? && !opts.overwrite {
        return Err(Error::ArchiveExists {
            path: output.to_path_buf(),
        });
    }
    let out_dir = absolute_dir(output)?;
    let temp = temp_name(output, "linking");
    remove_stale_temps(output, "linking")?;
    Layout::remove(&temp)?;
    let built = build_index(&temp, &list, opts.ignore_duplicates, opts.sidecar);
    let report = match built {
        Ok(r) => r,
        Err(e) => {
            let _ = Layout::remove(&temp);
            return Err(e);
        }
    };
    let linked = (|| -> Result<()> {
        if Layout::exists(output)? {
            Layout::remove(output)?;
        }
        let out_layout = Layout::current(output);
        let mut n = 0u64;
        for input in &list {
            for shard in &input.shards {
                let target = relative_link(&out_dir, shard)?;
                let link = out_layout.shard_path(n);
                std::os::unix::fs::symlink(&target, &link).map_err(|e| Error::io(&link, e))?;
                n += 1;
            }
        }
        sync_dir(output)?;
        Layout::remove_companions(output)?;
        std::fs::rename(&temp, output).map_err(|e| Error::io(output, e))?;
        Layout::move_companions(&temp, output)?;
        sync_dir(output)
    })();
    if let Err(e) = linked {
        let _ = Layout::remove(&temp);
        let _ = Layout::remove(output);
        return Err(e);
    }
    Ok(report)
}

/// Build the merged index at `temp`: every input's rows with their shard numbers
/// shifted by the number of shards before it, the union of the directories (the
/// first input with a non-NULL value gives each metadata field), then statistics
/// recomputed from scratch; and its sidecar, when asked for.
fn build_index(
    temp: &Path,
    list: &[Input],
    ignore_duplicates: bool,
    sidecar: bool,
) -> Result<SymlinkMergeReport> {
    let index = Index::open_write(temp, true)?;
    // A private file until it is renamed into place: no journal sync needed.
    index.set_synchronous_off()?;
    index.set_bulk_mode(true)?;
    index.begin()?;
    index.set_use_triggers(false)?;
    index.commit()?;
    let mut report = SymlinkMergeReport {
        inputs: list.len(),
        ..SymlinkMergeReport::default()
    };
    let mut base = 0u64;
    for (k, input) in list.iter().enumerate() {
        index.attach(input.layout.index(), "src")?;
        let r = (|| -> Result<()> {
            index.begin()?;
            let prefix = input.prefix.as_str();
            for a in crate::core::path::ancestors(prefix).filter(|a| !a.is_empty()) {
                index.ensure_dir_row(a)?;
            }
            if !ignore_duplicates && k > 0 {
                if let Some((path, shard)) = index.first_attached_duplicate("src", prefix) {
                    let first = owner(list, shard.max(0) as u64);
                    return Err(Error::DuplicatePath {
                        path,
                        first: first.to_path_buf(),
                        second: input.path.clone(),
                    });
                }
            }
            let added = index.copy_attached_files("src", base, prefix)?;
            report.files += added;
            report.duplicates_skipped += input.files.saturating_sub(added);
            index.merge_attached_dirs("src", prefix)?;
            if k == 0 && prefix.is_empty() {
                index.copy_root_meta("src")?;
            }
            index.commit()
        })();
        if r.is_err() {
            let _ = index.rollback();
        }
        index.detach("src")?;
        r?;
        base += input.shards.len() as u64;
    }
    report.shards = base;
    index.begin()?;
    let r = (|| -> Result<()> {
        if let Some(path) = index.first_file_dir_clash() {
            return Err(Error::InvalidOperation(format!(
                "{path}: a file in one input but a directory in another"
            )));
        }
        index.rebuild_statistics()?;
        report.dirs = index.count_dirs()?;
        index.commit()
    })();
    if r.is_err() {
        let _ = index.rollback();
    }
    r?;
    index.set_bulk_mode(false)?;
    if sidecar {
        crate::core::sidecar::emit_best_effort(&Layout::current(temp), index.conn());
    }
    drop(index);
    std::fs::File::open(temp)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io(temp, e))?;
    Ok(report)
}

/// The input whose shards include merged shard number `shard`.
fn owner(list: &[Input], shard: u64) -> &Path {
    let mut base = 0u64;
    for input in list {
        base += input.shards.len() as u64;
        if shard < base {
            return &input.path;
        }
    }
    &list[0].path
}

/// The directory that holds `path`, absolute and without symbolic links.
fn absolute_dir(path: &Path) -> Result<PathBuf> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::canonicalize(dir).map_err(|e| Error::io(dir, e))
}

/// The relative path from directory `from` (absolute, canonical) to `target`.
fn relative_link(from: &Path, target: &Path) -> Result<PathBuf> {
    let dir = absolute_dir(target)?;
    let name = target
        .file_name()
        .ok_or_else(|| Error::InvalidOperation(format!("{}: no file name", target.display())))?;
    Ok(relative_path(from, &dir).join(name))
}

/// `to` relative to `from`; both absolute and normalized.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// Rows of `index` renumbered for tests of the base computation.
#[cfg(test)]
fn shards_of(index: &Index) -> Vec<i64> {
    let mut stmt = index
        .conn()
        .prepare("SELECT DISTINCT shard FROM files ORDER BY shard")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("/a/out"), Path::new("/a/in")),
            PathBuf::from("../in")
        );
        assert_eq!(
            relative_path(Path::new("/a"), Path::new("/a")),
            PathBuf::from("")
        );
        assert_eq!(
            relative_path(Path::new("/a/b/c"), Path::new("/x")),
            PathBuf::from("../../../x")
        );
    }

    #[test]
    fn base_is_the_number_of_links_so_far() {
        use crate::{ArchiveWriter, Meta, WriterOptions};
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        let mut w = ArchiveWriter::open(
            &a,
            WriterOptions {
                shard_size_limit: Some(4),
                ..WriterOptions::default()
            },
        )
        .unwrap();
        w.add_file("x/1", Meta::default(), b"1234", None).unwrap();
        w.add_file("x/2", Meta::default(), b"5678", None).unwrap();
        w.finish().unwrap();
        // A trailing shard without files still gets a link and counts in the base.
        std::fs::write(dir.path().join("a-shard-00002"), b"").unwrap();
        let mut w = ArchiveWriter::open(&b, WriterOptions::default()).unwrap();
        w.add_file("x/3", Meta::default(), b"9", None).unwrap();
        w.finish().unwrap();
        let out = dir.path().join("o");
        let r = merge_symlink(&out, &[a, b], &SymlinkMergeOptions::default()).unwrap();
        assert_eq!(r.shards, 4);
        let idx = Index::open_read(&out).unwrap();
        assert_eq!(shards_of(&idx), vec![0, 1, 3]);
        let arch = Archive::open(&out).unwrap();
        assert_eq!(arch.read("x/3").unwrap(), b"9");
        assert_eq!(arch.read("x/2").unwrap(), b"5678");
        assert_eq!(
            std::fs::read_link(dir.path().join("o-shard-00003")).unwrap(),
            PathBuf::from("b-shard-00000")
        );
    }
}
