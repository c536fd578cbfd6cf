//! Editing an archive in place: removing entries, moving them, changing their
//! metadata (`barecat-rm`, `barecat-mv`, `barecat-chmod`, `barecat-touch`). Python
//! barecat has these only in its API (`remove`, `rmtree`, `rename`, `chmod`,
//! `update_mtime`); the results are the same rows, with directory statistics that
//! stay right (its `rename` into a missing directory corrupts them).
//!
//! Operands name entries the same way in every command: a path that exists is that
//! file or directory, even if it holds `*`, `?` or `[`; otherwise an operand with
//! such characters is a glob with Python glob semantics (`*` and `?`
//! stay within a directory, `**` spans directories, wildcards do not match names
//! starting with `.`) over files and directories; otherwise it names nothing.
//!
//! Every command makes all its changes in one transaction, so a kill leaves the
//! archive exactly as it was before or as it is after, with right statistics in
//! both. Removals, moves and metadata changes are row writes in the writer's batch
//! (statistics kept by its deltas: one transaction for a hundred thousand files);
//! each move runs under a savepoint, so that one that fails changes nothing. The
//! parsing of the commands' modes and dates lives here too ([`parse_mode`],
//! [`parse_date`]). Plans are made on a read-only view of the index first, so
//! that a dry run (`-n`) says exactly what the command would do without opening the
//! archive for writing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use crate::core::entry::{DirInfo, Entry, FileInfo, Meta};
use crate::core::error::{Error, Result};
use crate::core::glob::{has_wildcards, Glob, GlobOptions};
use crate::core::index::{Cond, Index, ScanOrder, ScanSpec, Table};
use crate::core::path as mpath;
use crate::core::writer::{ArchiveWriter, CreateMode, Removed, WriterOptions};

mod date;
mod mode;

pub use date::{new_file_meta, parse_date};
pub use mode::{parse_mode, ModeSpec};

/// Open an existing archive for an edit: one transaction for the whole command
/// (committed by [`ArchiveWriter::finish`] or [`finish_removal`]).
pub fn open_writer(path: &Path, sidecar: bool) -> Result<ArchiveWriter> {
    let opts = WriterOptions {
        mode: CreateMode::Append,
        commit_interval: Duration::MAX,
        commit_bytes: u64::MAX,
        sidecar,
        ..WriterOptions::default()
    };
    ArchiveWriter::open(path, opts)
}

/// The entries an operand names (see the module documentation); empty when none.
pub fn resolve(index: &Index, operand: &str) -> Result<Vec<Entry>> {
    let path = mpath::normalize(operand);
    if let Some(f) = index.file(&path)? {
        return Ok(vec![Entry::File(f)]);
    }
    if let Some(d) = index.dir(&path)? {
        return Ok(vec![Entry::Dir(d)]);
    }
    if has_wildcards(&path) {
        let glob = Glob::new(
            &path,
            GlobOptions {
                recursive: path.contains("**"),
                include_hidden: false,
            },
        )?;
        return index.glob(&glob);
    }
    Ok(Vec::new())
}

/// Files, directories and bytes at and below the directory `dir`.
pub fn subtree_totals(index: &Index, dir: &str) -> Result<Removed> {
    index.subtree_totals(dir)
}

// ------------------------------------------------------------------------ removal

/// What `rm` may remove.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoveOptions {
    /// Directories with everything below them (`-r`).
    pub recursive: bool,
    /// Empty directories (`-d`).
    pub empty_dirs: bool,
    /// Operands that name nothing are not an error (`-f`).
    pub force: bool,
}

/// One thing to remove.
#[derive(Debug, Clone)]
pub enum Removal {
    /// A file.
    File(FileInfo),
    /// A directory and its subtree, with what it holds (as planned).
    Tree(DirInfo, Removed),
    /// An empty directory.
    EmptyDir(DirInfo),
}

impl Removal {
    /// The member path to remove.
    pub fn path(&self) -> &str {
        match self {
            Removal::File(f) => &f.path,
            Removal::Tree(d, _) | Removal::EmptyDir(d) => &d.path,
        }
    }

    /// What removing it takes away.
    pub fn totals(&self) -> Removed {
        match self {
            Removal::File(f) => Removed {
                files: 1,
                bytes: f.size,
                dirs: 0,
            },
            Removal::Tree(_, r) => *r,
            Removal::EmptyDir(_) => Removed {
                files: 0,
                bytes: 0,
                dirs: 1,
            },
        }
    }
}

/// What an edit will do, and the operands it cannot act on (one error each).
#[derive(Debug)]
pub struct Plan<T> {
    /// What can be done, in order.
    pub items: Vec<T>,
    /// The operands it cannot act on.
    pub problems: Vec<Error>,
}

impl<T> Default for Plan<T> {
    fn default() -> Self {
        Plan {
            items: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// Which entries `operands` remove: files, subtrees (with `recursive`) and empty
/// directories (with `empty_dirs`, removed last, deepest first), each once, nothing
/// inside a subtree that goes as a whole.
pub fn plan_removal(
    index: &Index,
    operands: &[String],
    opts: RemoveOptions,
) -> Result<Plan<Removal>> {
    let mut plan = Plan::default();
    let mut found: Vec<Entry> = Vec::new();
    for op in operands {
        let entries = resolve(index, op)?;
        if entries.is_empty() && !opts.force {
            plan.problems.push(Error::NotFound(op.clone()));
        }
        found.extend(entries);
    }
    let mut trees: HashSet<String> = HashSet::new();
    for e in &found {
        if let Entry::Dir(d) = e {
            if opts.recursive && !d.path.is_empty() {
                trees.insert(d.path.clone());
            }
        }
    }
    let inside_tree = |p: &str| mpath::ancestors(p).any(|a| trees.contains(a));
    let mut seen: HashSet<String> = HashSet::new();
    let mut empties: Vec<DirInfo> = Vec::new();
    for e in found {
        if inside_tree(e.path()) || !seen.insert(e.path().to_string()) {
            continue;
        }
        match e {
            Entry::File(f) => plan.items.push(Removal::File(f)),
            Entry::Dir(d) if d.path.is_empty() => plan.problems.push(Error::InvalidOperation(
                "cannot remove the root directory".into(),
            )),
            Entry::Dir(d) if opts.recursive => {
                let totals = subtree_totals(index, &d.path)?;
                plan.items.push(Removal::Tree(d, totals));
            }
            Entry::Dir(d) if opts.empty_dirs => empties.push(d),
            Entry::Dir(d) => plan.problems.push(Error::InvalidOperation(format!(
                "{}: is a directory (-r removes it with everything below it, -d if empty)",
                mpath::printable(&d.path)
            ))),
        }
    }
    // Empty directories go last, deepest first, so that a directory whose entries
    // are all removed by the same command is empty by its turn.
    empties.sort_by(|a, b| {
        let depth = |p: &str| p.matches('/').count();
        depth(&b.path)
            .cmp(&depth(&a.path))
            .then(a.path.cmp(&b.path))
    });
    let mut leaving: HashMap<String, u64> = HashMap::new();
    for item in &plan.items {
        *leaving
            .entry(mpath::parent(item.path()).unwrap_or("").to_string())
            .or_default() += 1;
    }
    for d in empties {
        let children = index.count_children(&d.path)?;
        if children > leaving.get(&d.path).copied().unwrap_or(0) {
            plan.problems.push(Error::DirectoryNotEmpty(d.path));
            continue;
        }
        *leaving
            .entry(mpath::parent(&d.path).unwrap_or("").to_string())
            .or_default() += 1;
        plan.items.push(Removal::EmptyDir(d));
    }
    Ok(plan)
}

/// Errors that concern one entry (it changed since the plan was made): reported,
/// and the rest goes on. Any other error stops the edit.
fn is_entry_error(e: &Error) -> bool {
    matches!(
        e,
        Error::NotFound(_)
            | Error::FileExists(_)
            | Error::IsADirectory(_)
            | Error::NotADirectory(_)
            | Error::DirectoryNotEmpty(_)
            | Error::InvalidOperation(_)
            | Error::InvalidPath { .. }
    )
}

/// Remove the planned entries in the writer's batch; `done` is told of each one
/// removed, with what it took away. Returns the totals and the entries that could
/// not be removed. Nothing is committed here (see [`finish_removal`]).
pub fn remove(
    w: &mut ArchiveWriter,
    items: &[Removal],
    done: &mut dyn FnMut(&Removal, &Removed),
) -> Result<(Removed, Vec<Error>)> {
    let mut total = Removed::default();
    let mut problems = Vec::new();
    for item in items {
        let r = match item {
            Removal::File(f) => w.remove_file(&f.path).map(|fi| Removed {
                files: 1,
                bytes: fi.size,
                dirs: 0,
            }),
            Removal::Tree(d, _) => w.remove_tree(&d.path),
            Removal::EmptyDir(d) => w.remove_empty_dir(&d.path).map(|()| Removed {
                files: 0,
                bytes: 0,
                dirs: 1,
            }),
        };
        // A directory that became a file since the plan: said as rm says it.
        let r = r.map_err(|e| match e {
            Error::NotADirectory(p) if !matches!(item, Removal::File(_)) => {
                Error::InvalidOperation(format!("{}: not a directory", mpath::printable(&p)))
            }
            e => e,
        });
        match r {
            Ok(r) => {
                total.files += r.files;
                total.bytes += r.bytes;
                total.dirs += r.dirs;
                done(item, &r);
            }
            Err(e) if is_entry_error(&e) => problems.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok((total, problems))
}

/// Commit the removals, give back the bytes at the end of the last shard that no
/// file uses any more (what the commit cut off included) (the rest are holes for `barecat-defrag`), and finish the
/// writer. Returns the number of bytes given back.
pub fn finish_removal(mut w: ArchiveWriter) -> Result<u64> {
    let trimmed = w.trim_garbage()?;
    w.finish()?;
    Ok(trimmed)
}

// ------------------------------------------------------------------------ moves

/// How `mv` treats its destination.
#[derive(Debug, Clone, Copy, Default)]
pub struct MoveOptions {
    /// The destination is the new name even when it is a directory (`-T`).
    pub no_target_directory: bool,
    /// Replace an existing file, or an empty directory (`-f`).
    pub force: bool,
}

/// One planned move: the entry and its new path.
#[derive(Debug, Clone)]
pub struct Move {
    /// The entry as it is now.
    pub from: Entry,
    /// Its new path.
    pub to: String,
}

/// Which entries move where: into `dest` when it is a directory (as `mv` does,
/// unless `no_target_directory`), to `dest` itself otherwise (then only one entry
/// may be named). Moves that cannot be done as things stand are problems.
pub fn plan_moves(
    index: &Index,
    sources: &[String],
    dest: &str,
    opts: MoveOptions,
) -> Result<Plan<Move>> {
    let dest = mpath::normalize(dest);
    if !dest.is_empty() {
        mpath::check_member(&dest)?;
    }
    let into = dest.is_empty() || (!opts.no_target_directory && index.is_dir(&dest)?);
    let mut plan = Plan::default();
    let mut found = Vec::new();
    for op in sources {
        let entries = resolve(index, op)?;
        if entries.is_empty() {
            plan.problems.push(Error::NotFound(op.clone()));
        }
        found.extend(entries);
    }
    if found.len() > 1 && !into {
        return Err(Error::InvalidOperation(format!(
            "{}: not a directory (moving several entries needs a directory to move them into)",
            mpath::printable(&dest)
        )));
    }
    let mut targets: HashSet<String> = HashSet::new();
    for from in found {
        let to = if into {
            mpath::join(&dest, mpath::basename(from.path()))
        } else {
            dest.clone()
        };
        if let Some(e) = move_problem(index, &from, &to, opts.force)? {
            plan.problems.push(e);
        } else if !targets.insert(to.clone()) {
            plan.problems.push(Error::InvalidOperation(format!(
                "{}: named as the new path of two entries",
                mpath::printable(&to)
            )));
        } else {
            plan.items.push(Move { from, to });
        }
    }
    Ok(plan)
}

/// Why moving `from` to `to` cannot be done, if it cannot.
fn move_problem(index: &Index, from: &Entry, to: &str, force: bool) -> Result<Option<Error>> {
    let old = from.path();
    let shown = |p: &str| mpath::printable(p).into_owned();
    if old.is_empty() {
        return Ok(Some(Error::InvalidOperation(
            "cannot move the root directory".into(),
        )));
    }
    if old == to {
        return Ok(Some(Error::InvalidOperation(format!(
            "{}: source and destination are the same",
            shown(old)
        ))));
    }
    if from.is_dir() && mpath::is_within(to, old) {
        return Ok(Some(Error::InvalidOperation(format!(
            "cannot move directory {} into itself ({})",
            shown(old),
            shown(to)
        ))));
    }
    for a in mpath::ancestors(to) {
        if index.is_file(a)? {
            return Ok(Some(Error::InvalidOperation(format!(
                "{}: {} is a file, not a directory",
                shown(to),
                shown(a)
            ))));
        }
    }
    if index.is_file(to)? {
        return Ok(Some(if from.is_dir() {
            Error::InvalidOperation(format!(
                "cannot overwrite file {} with directory {}",
                shown(to),
                shown(old)
            ))
        } else if !force {
            Error::InvalidOperation(format!("{}: already exists (-f replaces it)", shown(to)))
        } else {
            return Ok(None);
        }));
    }
    if let Some(d) = index.dir(to)? {
        if !from.is_dir() {
            return Ok(Some(Error::InvalidOperation(format!(
                "cannot overwrite directory {} with file {}",
                shown(to),
                shown(old)
            ))));
        }
        if !force {
            return Ok(Some(Error::InvalidOperation(format!(
                "{}: directory already exists (-f replaces it when empty)",
                shown(to)
            ))));
        }
        if d.num_files != 0 || d.num_subdirs != 0 {
            return Ok(Some(Error::DirectoryNotEmpty(to.to_string())));
        }
    }
    Ok(None)
}

/// Do the planned moves in one transaction; `done` is told of each one made.
/// Returns the moves that failed.
pub fn apply_moves(
    w: &mut ArchiveWriter,
    moves: &[Move],
    force: bool,
    done: &mut dyn FnMut(&Move),
) -> Result<Vec<Error>> {
    let pairs: Vec<(&str, &str)> = moves
        .iter()
        .map(|m| (m.from.path(), m.to.as_str()))
        .collect();
    let results = w.rename_many(&pairs, force)?;
    let mut problems = Vec::new();
    for (m, r) in moves.iter().zip(results) {
        match r {
            Ok(()) => done(m),
            Err(e) => problems.push(e),
        }
    }
    Ok(problems)
}

// ------------------------------------------------------------------ metadata

/// A planned metadata change.
#[derive(Debug, Clone)]
pub struct MetaChange {
    /// The entry as it is now.
    pub entry: Entry,
    /// Its new metadata.
    pub meta: Meta,
}

/// Every entry the operands name, and with `recursive` every entry below the
/// directories among them (each once, in path order within an operand).
pub fn plan_meta(
    index: &Index,
    operands: &[String],
    recursive: bool,
    new_meta: &dyn Fn(&Entry) -> Meta,
) -> Result<Plan<MetaChange>> {
    let mut plan = Plan::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut push = |plan: &mut Plan<MetaChange>, e: Entry| {
        if seen.insert(e.path().to_string()) {
            let meta = new_meta(&e);
            plan.items.push(MetaChange { entry: e, meta });
        }
    };
    for op in operands {
        let entries = resolve(index, op)?;
        if entries.is_empty() {
            plan.problems.push(Error::NotFound(op.clone()));
        }
        for e in entries {
            let below = match &e {
                Entry::Dir(d) if recursive => Some(d.path.clone()),
                _ => None,
            };
            push(&mut plan, e);
            let Some(dir) = below else { continue };
            let dirs = ScanSpec::new(Table::Dirs, ScanOrder::Path).with(Cond::Subtree(dir.clone()));
            index.scan_each(&dirs, 4096, &mut |d| {
                push(&mut plan, d);
                Ok(())
            })?;
            let mut files = ScanSpec::new(Table::Files, ScanOrder::Path);
            if !dir.is_empty() {
                files = files.with(Cond::Below(dir));
            }
            index.scan_each(&files, 4096, &mut |f| {
                push(&mut plan, f);
                Ok(())
            })?;
        }
    }
    Ok(plan)
}

/// Apply planned metadata changes in the writer's batch; `done` is told of each.
pub fn apply_meta(
    w: &mut ArchiveWriter,
    changes: &[MetaChange],
    done: &mut dyn FnMut(&MetaChange),
) -> Result<Vec<Error>> {
    let mut problems = Vec::new();
    for c in changes {
        match w.set_meta(c.entry.path(), c.meta) {
            Ok(()) => done(c),
            Err(e) if is_entry_error(&e) => problems.push(e),
            Err(e) => return Err(e),
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::writer::{CreateMode, WriterOptions};

    fn sample(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("a.barecat");
        let mut w = ArchiveWriter::open(&p, WriterOptions::with_mode(CreateMode::New)).unwrap();
        for (path, data) in [
            ("d/x.txt", &b"xx"[..]),
            ("d/y.txt", b"yyy"),
            ("d/e/z.bin", b"zzzz"),
            ("top[1].txt", b"t"),
            ("top1.txt", b"u"),
            (".hidden", b"h"),
        ] {
            w.add_file(path, Meta::default(), data, None).unwrap();
        }
        w.add_dir("empty", Meta::default()).unwrap();
        w.finish().unwrap();
        p
    }

    #[test]
    fn operands_are_paths_first_then_globs() {
        let dir = tempfile::tempdir().unwrap();
        let p = sample(dir.path());
        let a = crate::Archive::open(&p).unwrap();
        a.with_index(|i| {
            let names = |op: &str| -> Vec<String> {
                resolve(i, op)
                    .unwrap()
                    .iter()
                    .map(|e| e.path().to_string())
                    .collect()
            };
            assert_eq!(
                names("top[1].txt"),
                ["top[1].txt"],
                "an existing name is literal"
            );
            assert_eq!(names("top[2].txt"), Vec::<String>::new());
            assert_eq!(names("top[0-9].txt"), ["top1.txt"]);
            assert_eq!(
                names("*"),
                ["d", "empty", "top1.txt", "top[1].txt"],
                "hidden left out"
            );
            assert_eq!(names("d/**/*.txt"), ["d/x.txt", "d/y.txt"]);
            assert_eq!(names("/d/./e/"), ["d/e"]);
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn removal_plans_skip_what_a_tree_covers_and_order_empty_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let p = sample(dir.path());
        let a = crate::Archive::open(&p).unwrap();
        let plan = a
            .with_index(|i| {
                plan_removal(
                    i,
                    &["d/*".into(), "d".into(), "nope".into()],
                    RemoveOptions {
                        recursive: true,
                        ..Default::default()
                    },
                )
            })
            .unwrap();
        let paths: Vec<&str> = plan.items.iter().map(|r| r.path()).collect();
        assert_eq!(paths, ["d"]);
        assert_eq!(
            plan.items[0].totals(),
            Removed {
                files: 3,
                bytes: 9,
                dirs: 2
            }
        );
        assert_eq!(plan.problems.len(), 1);
        // -d: a directory emptied by the same command may go; a full one may not.
        let plan = a
            .with_index(|i| {
                plan_removal(
                    i,
                    &["d/e".into(), "d/e/z.bin".into(), "empty".into(), "d".into()],
                    RemoveOptions {
                        empty_dirs: true,
                        ..Default::default()
                    },
                )
            })
            .unwrap();
        let paths: Vec<&str> = plan.items.iter().map(|r| r.path()).collect();
        assert_eq!(paths, ["d/e/z.bin", "d/e", "empty"]);
        assert!(matches!(&plan.problems[..], [Error::DirectoryNotEmpty(d)] if d == "d"));
    }
}
