//! Data-copying merge: the live bytes of every input go into one output archive.
//!
//! Only the bytes of the files that end up in the output are read and written:
//! never the holes or trailing bytes of an input, never the bytes of a duplicate
//! that is left out. All conflicts between barecat inputs (a path that is a file in
//! one input and a directory in another; a file path in two inputs with
//! [`Duplicates::Error`]) are found before anything is written. The paths of tar
//! and zip inputs are known only while they are read: with [`Duplicates::Last`], a
//! file of theirs that replaces an earlier input's copy (or a later input's file
//! that replaces theirs) leaves the replaced bytes as a hole in the output.
//!
//! Into an output without files, the first input is taken over whole when that
//! gives the same archive: its shards and its index are copied as they are
//! (`adopt`), which is several times faster than adding its files one by one.
//!
//! A new output is built under a temporary name next to it and renamed into place
//! when complete, so a failure leaves nothing behind (and `-f` replaces the old
//! archive only then). Appending to an existing output happens in one transaction;
//! on failure the transaction is rolled back and the appended bytes are cut off
//! (see [`ArchiveWriter::rollback`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::core::archive::Archive;
use crate::core::crc;
use crate::core::entry::{FileInfo, FileOrder};
use crate::core::error::{Error, Result};
use crate::core::format::layout::Layout;
use crate::core::glob::PathFilter;
use crate::core::index::{ScanOrder, ScanSpec, Table};
use crate::core::output::{install_archive, remove_stale_temps, temp_name};
use crate::core::path::{self as mpath, printable};
use crate::core::progress::Progress;
use crate::core::writer::{ArchiveWriter, CreateMode, WriterOptions};
use crate::ingest::{self, Duplicates, Event, IngestOptions};
use crate::maint::inputs::{check_not_output, classify, open_barecat_with, InputKind};
use crate::maint::span::{Span, SpanLimits};

mod adopt;

/// Files are read from an input in runs of at most this many bytes…
const RUN_BYTES: u64 = 8 << 20;
/// …through holes of at most 64 KiB (holes are read, never written), of at most 4096
/// files.
const RUN: SpanLimits = SpanLimits {
    files: 4096,
    hole: 64 << 10,
    bytes: RUN_BYTES,
};

/// How messages about a duplicate path end.
const DUPLICATE_HINT: &str =
    " (use --ignore-duplicates to keep the first, --duplicates last to keep the last)";

/// What to do with an output that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// An existing output is an error.
    New,
    /// Replace an existing output (once the new one is complete).
    Overwrite,
    /// Add to an existing output (created when missing); files already there win
    /// over the inputs' (duplicates are ignored).
    Append,
}

/// Options of [`merge`].
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// What to do with an output that exists.
    pub output_mode: OutputMode,
    /// Shard size limit of the output (`None`: unlimited for a new output, the
    /// stored one when appending).
    pub shard_size_limit: Option<u64>,
    /// Several files with the same path (in two inputs, or twice in a tar input):
    /// fail ([`Duplicates::Error`]), or keep the first or the last. With
    /// [`OutputMode::Append`], files already in the output always win.
    pub duplicates: Duplicates,
    /// End the process abruptly after this many steps of putting a new output in
    /// place (removing the old one, renaming each shard, renaming the index), as a
    /// crash would (for tests of crash safety).
    pub crash_after_steps: Option<u64>,
    /// Write the output's B-tree sidecar ([`crate::core::sidecar`]).
    pub sidecar: bool,
    /// Put every input's files below this directory (`--prefix`).
    pub prefix: Option<String>,
    /// Put each input's files below a directory named after the input
    /// ([`subdir_name`], `--as-subdirs`; below `prefix` when both are given).
    pub as_subdirs: bool,
    /// Take only the files this selects (`--pattern`, `-i/-x`), matched against
    /// their paths in the input. Directories are then made as the parents of the
    /// files taken (with the input's metadata), not copied on their own.
    pub filter: Option<Arc<PathFilter>>,
    /// How the index of a remote input is read.
    pub index_mode: crate::core::remote::IndexMode,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            output_mode: OutputMode::New,
            shard_size_limit: None,
            duplicates: Duplicates::Error,
            crash_after_steps: None,
            sidecar: true,
            prefix: None,
            as_subdirs: false,
            filter: None,
            index_mode: Default::default(),
        }
    }
}

/// The directory `--as-subdirs` puts an input's files in: its file name without
/// one of the extensions `.barecat`, `.tar`, `.tar.gz`, `.tgz`, `.tar.bz2`,
/// `.tbz2`, `.tar.xz`, `.txz`, `.zip` (matched in any case). Unlike Python barecat,
/// which lower-cases the whole name when it strips an extension, the name keeps
/// its case.
pub fn subdir_name(input: &Path) -> String {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lower = name.to_lowercase();
    for ext in [
        ".tar.gz", ".tar.bz2", ".tar.xz", ".tar", ".tgz", ".tbz2", ".txz", ".zip", ".barecat",
    ] {
        if lower.ends_with(ext) && name.is_char_boundary(name.len() - ext.len()) {
            return name[..name.len() - ext.len()].to_string();
        }
    }
    name
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
    let mut plan = DuplicatePlan {
        skip: vec![HashSet::new(); sources.len()],
        skipped: 0,
    };
    // A source without files or subdirectories (by its statistics) clashes with
    // nothing; with fewer than two others there is nothing to compare. (Should the
    // statistics lie, the writer still refuses a second file at a path.)
    let mut nonempty = 0;
    for (_, archive, map) in sources {
        let root = archive.root()?;
        if root.num_files_tree != 0 || root.num_subdirs != 0 || !map.prefix.is_empty() {
            nonempty += 1;
        }
    }
    if nonempty < 2 {
        return Ok(plan);
    }
    let mut streams: Vec<Stream<'_>> = Vec::new();
    for (k, (_, archive, map)) in sources.iter().enumerate() {
        let map: &PathMap = map;
        // Paths only: a range of the path index, without a look into the table.
        let spec = ScanSpec::new(Table::Files, ScanOrder::Path).paths_only(true);
        streams.push(Stream {
            source: k,
            is_dir: false,
            iter: Box::new(archive.scan(spec).filter_map(move |r| match r {
                Ok(e) => map.file(e.path()).map(Ok),
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

/// Where one input's files go in the output: below `prefix`, and only those
/// `filter` selects.
#[derive(Debug, Clone, Default)]
pub struct PathMap {
    /// Prepended to every path of the input (`""` for none).
    pub prefix: String,
    /// Which of the input's files are taken; `None` takes all.
    pub filter: Option<Arc<PathFilter>>,
}

impl PathMap {
    /// The mapping of `input` under `opts`; an invalid prefix is an error.
    pub fn for_input(input: &Path, opts: &MergeOptions) -> Result<PathMap> {
        let mut prefix = String::new();
        if let Some(p) = &opts.prefix {
            prefix = mpath::check_member(p)?;
        }
        if opts.as_subdirs {
            let name = subdir_name(input);
            let checked = mpath::check_member(&name)?;
            if checked.is_empty() || checked.contains('/') {
                return Err(Error::InvalidOperation(format!(
                    "{}: no directory name can be made of this input's name",
                    input.display()
                )));
            }
            prefix = mpath::join(&prefix, &checked);
        }
        Ok(PathMap {
            prefix,
            filter: opts.filter.clone(),
        })
    }

    /// The output path of the input file at `path`, if it is taken.
    pub fn file(&self, path: &str) -> Option<String> {
        if let Some(f) = &self.filter {
            if !f.selects(path) {
                return None;
            }
        }
        Some(mpath::join(&self.prefix, path))
    }

    /// The output path of the input directory at `path` (its root: the prefix).
    pub fn dir(&self, path: &str) -> String {
        mpath::join(&self.prefix, path)
    }
}

/// What [`merge`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MergeReport {
    /// Number of inputs merged.
    pub inputs: usize,
    /// Files added to the output.
    pub files: u64,
    /// Bytes added to the output.
    pub bytes: u64,
    /// Directories created in the output.
    pub dirs: u64,
    /// Files left out because an earlier input (or the output) has the path.
    pub duplicates_skipped: u64,
    /// Entries of tar or zip inputs skipped because of a problem (each one reported).
    pub problems: u64,
    /// The record table of an output that was added to: rebuilt or removed.
    pub records_table: Option<crate::records::table::TableAction>,
    /// Files of the first input that was taken over whole (its shards and its index
    /// copied as they are, into an output without files); 0 when every input was
    /// copied file by file.
    pub copied_whole: u64,
}

/// An input, opened.
enum Source {
    Barecat(Box<Archive>),
    /// A tar or zip file, read through the ingest importers.
    Foreign,
}

/// Add the entries of a tar or zip input to `w` through the ingest importers. Their
/// paths are known only while reading: a path the output already has (from an
/// earlier input, or twice in this one) is skipped or replaced as `duplicates` says
/// (each one noted), and stops the merge with [`Duplicates::Error`] (the output,
/// built under a temporary name or appended in one transaction, is then left as it
/// was). Returns the duplicates left out and the entries skipped because of other
/// problems (each one reported).
fn import_foreign(
    w: &mut ArchiveWriter,
    path: &Path,
    duplicates: Duplicates,
    map: &PathMap,
    progress: &Progress,
) -> Result<(u64, u64)> {
    let error = duplicates == Duplicates::Error;
    let opts = IngestOptions {
        strict: error,
        skip_existing: !error,
        duplicates,
        duplicates_chosen: true,
        // The merge commits, or rolls back, as a whole.
        commit_on_error: false,
        select: map.filter.clone(),
        prefix: map.prefix.clone(),
        ..IngestOptions::default()
    };
    let mut sink = |ev: Event| match ev {
        Event::Problem(p) => progress.println(&format!("barecat-merge: {}: {p}", path.display())),
        Event::Notice(n) => progress.println(&format!("barecat-merge: {}: {n}", path.display())),
        Event::Progress { files, bytes } => progress.add(files, bytes),
        Event::Total { .. } => {}
    };
    match ingest::import_archive(w, path, &opts, &mut sink) {
        Ok(s) => Ok((s.existing + s.duplicates_skipped + s.replaced, s.problems)),
        Err(Error::Input {
            path: member,
            detail,
        }) => {
            let hint = if detail.contains("duplicate path") {
                DUPLICATE_HINT
            } else {
                ""
            };
            let input = path.display().to_string();
            Err(Error::Input {
                // Damage to the input itself is reported under its name already.
                path: if member == input {
                    member
                } else {
                    format!("{input}: {member}")
                },
                detail: format!("{detail}{hint}"),
            })
        }
        Err(e) => Err(e),
    }
}

/// Merge `inputs` into `output`.
pub fn merge(
    output: &Path,
    inputs: &[PathBuf],
    opts: &MergeOptions,
    progress: &Progress,
) -> Result<MergeReport> {
    if inputs.is_empty() {
        return Err(Error::InvalidOperation("no input to merge".into()));
    }
    let mut sources = Vec::with_capacity(inputs.len());
    let mut maps = Vec::with_capacity(inputs.len());
    for p in inputs {
        maps.push(PathMap::for_input(p, opts)?);
        check_not_output(p, output)?;
        let kind = classify(p)?;
        sources.push(match kind {
            InputKind::Barecat => Source::Barecat(Box::new(open_barecat_with(
                p,
                crate::OpenOptions {
                    index_mode: opts.index_mode,
                    ..Default::default()
                },
            )?)),
            _ => Source::Foreign,
        });
    }
    // The inputs' shards stay open once read.
    let mut shards = 0;
    for p in inputs
        .iter()
        .filter(|p| !crate::core::location::is_remote(p))
    {
        shards += Layout::resolve(p).shard_files()?.len();
    }
    crate::maint::fds::ensure_open_files(shards)?;
    let exists = Layout::exists(output)?;
    if exists && opts.output_mode == OutputMode::New {
        return Err(Error::ArchiveExists {
            path: output.to_path_buf(),
        });
    }
    let append = exists && opts.output_mode == OutputMode::Append;

    // Every conflict and duplicate, before writing.
    let existing = if append {
        Some(Archive::open(output)?)
    } else {
        None
    };
    let unmapped = PathMap::default();
    let mut listed: Vec<(&Path, &Archive, &PathMap)> = Vec::new();
    if let Some(a) = &existing {
        listed.push((output, a, &unmapped));
    }
    let mut position = Vec::new(); // index in `listed` of each barecat input
    for ((p, s), map) in inputs.iter().zip(&sources).zip(&maps) {
        if let Source::Barecat(a) = s {
            position.push(Some(listed.len()));
            listed.push((p.as_path(), a, map));
        } else {
            position.push(None);
        }
    }
    // Appending, files already in the output win and other duplicates are left out.
    let duplicates = match opts.duplicates {
        Duplicates::Error if append => Duplicates::First,
        d => d,
    };
    let plan = plan_duplicates(&listed, duplicates, append)?;
    drop(listed);
    drop(existing);
    let total: u64 = sources
        .iter()
        .filter_map(|s| match s {
            Source::Barecat(a) => a.root().ok().map(|r| r.size_tree.max(0) as u64),
            Source::Foreign => None,
        })
        .sum();
    progress.set_total(total);

    let temp = (!append).then(|| temp_name(output, "merging"));
    let target = temp.as_deref().unwrap_or(output);
    if let Some(t) = &temp {
        remove_stale_temps(output, "merging")?;
        Layout::remove(t)?;
    }
    // The index copy of a killed take-over (`adopt`), whichever way this run goes.
    remove_stale_temps(output, "adopting")?;
    let defaults = WriterOptions::default();
    let wopts = WriterOptions {
        mode: if append {
            CreateMode::Append
        } else {
            CreateMode::New
        },
        shard_size_limit: opts.shard_size_limit,
        allow_symlinked_shards: false,
        // An append is one transaction, so that a failure leaves the output as it was.
        commit_interval: if append {
            Duration::MAX
        } else {
            defaults.commit_interval
        },
        commit_bytes: if append {
            u64::MAX
        } else {
            defaults.commit_bytes
        },
        sidecar: opts.sidecar,
        ..defaults
    };
    let mut report = MergeReport {
        inputs: inputs.len(),
        duplicates_skipped: plan.skipped,
        ..MergeReport::default()
    };
    let mut writer: Option<ArchiveWriter> = None;
    // The first input is taken over whole when it can be (see `adopt`).
    let adoptable = match (sources.first(), position.first()) {
        (Some(Source::Barecat(a)), Some(&Some(i))) => {
            let foreign = sources.iter().any(|s| matches!(s, Source::Foreign));
            // Appending is one transaction: taking the first of several inputs
            // over would make it visible on its own.
            (maps[0].prefix.is_empty()
                && maps[0].filter.is_none()
                && (!append || inputs.len() == 1)
                && plan.skip[i].is_empty()
                && !(duplicates == Duplicates::Last && foreign))
                .then_some(a)
        }
        _ => None,
    };
    let mut adopted = None;
    let result = (|| -> Result<()> {
        let mut wopts = wopts;
        if let Some(a) = adoptable {
            if !append {
                // An empty output to take the input over into.
                ArchiveWriter::open(target, wopts.clone())?.finish()?;
                wopts.mode = CreateMode::Append;
            }
            adopted = adopt::adopt(target, output, &inputs[0], a, opts.shard_size_limit)?;
            if let Some(n) = adopted {
                progress.add(n.files, n.bytes);
            }
        }
        let w = writer.insert(ArchiveWriter::open(target, wopts)?);
        if append {
            // Bytes after the last file are what an interrupted writer (a killed
            // merge) left: no row refers to them, and this writer holds the lock.
            w.trim_garbage()?;
        }
        if duplicates == Duplicates::Last {
            // A later input's file replaces an earlier input's copy that the plan
            // could not see (one of a tar or zip input); the output's own files
            // stay.
            w.replace_since(Some(w.position()));
        }
        let empty = HashSet::new();
        for (k, (p, s)) in inputs.iter().zip(&sources).enumerate() {
            if k == 0 && adopted.is_some() {
                continue;
            }
            match s {
                Source::Barecat(a) => {
                    let skip = position[k].map_or(&empty, |i| &plan.skip[i]);
                    report.duplicates_skipped += copy_archive(
                        w,
                        p,
                        a,
                        &maps[k],
                        skip,
                        duplicates != Duplicates::Error,
                        progress,
                    )?;
                    report.duplicates_skipped += w.take_replaced().len() as u64;
                }
                Source::Foreign => {
                    let (dups, problems) = import_foreign(w, p, duplicates, &maps[k], progress)?;
                    report.duplicates_skipped += dups;
                    report.problems += problems;
                }
            }
        }
        w.replace_since(None);
        // Committed here, so that a failure still finds the writer to undo it with.
        w.commit()?;
        let stats = writer.take().expect("opened above").finish()?;
        let a = adopted.unwrap_or_default();
        report.files = stats.files + a.files;
        report.bytes = stats.bytes + a.bytes;
        report.dirs = stats.dirs + a.dirs;
        report.copied_whole = a.files;
        Ok(())
    })();
    if let Err(e) = result {
        match &temp {
            Some(t) => {
                drop(writer);
                let _ = Layout::remove(t);
            }
            None => {
                // Still holding the lock: undo the appending transaction and cut the
                // bytes it wrote, so the output is exactly as it was, its sidecar
                // (removed when the writer opened) written again.
                if let Some(mut w) = writer {
                    if w.rollback().is_ok() {
                        w.restore_sidecar();
                    }
                }
            }
        }
        return Err(e);
    }
    if let Some(t) = &temp {
        let mut done = 0u64;
        let mut step = || {
            done += 1;
            if opts.crash_after_steps == Some(done) {
                // SAFETY: _exit ends the process at once, like a crash.
                unsafe { libc::_exit(86) };
            }
        };
        let r = (|| {
            if Layout::exists(output)? {
                if opts.output_mode != OutputMode::Overwrite {
                    return Err(Error::ArchiveExists {
                        path: output.to_path_buf(),
                    });
                }
                Layout::remove(output)?;
                step();
            }
            install_archive(t, output, &mut step)
        })();
        if let Err(e) = r {
            let _ = Layout::remove(t);
            return Err(e);
        }
    }
    if append && report.files > 0 {
        report.records_table = crate::records::table::after_change(output)?;
    }
    Ok(report)
}

/// Copy the directories (with their metadata; the first input that has a
/// directory gives it) and the files of `src`, placed as `map` says, except the
/// output paths in `skip`. With a filter, only the directories that hold a file
/// taken are copied.
///
/// Duplicates among barecat inputs are planned before anything is written (`skip`);
/// a path that an earlier tar or zip input added is found only here: skipped with
/// `ignore_duplicates` (counted in the returned number), an error otherwise.
fn copy_archive(
    w: &mut ArchiveWriter,
    input: &Path,
    src: &Archive,
    map: &PathMap,
    skip: &HashSet<String>,
    ignore_duplicates: bool,
    progress: &Progress,
) -> Result<u64> {
    let mut dups = Dups {
        input,
        ignore: ignore_duplicates,
        skipped: 0,
    };
    // With a filter, the directories that hold a file taken (input paths), from
    // the path index alone.
    let needed: Option<HashSet<String>> = match &map.filter {
        None => None,
        Some(_) => {
            let (_, files) = src.with_index(|i| i.subtree_paths(""))?;
            let mut needed = HashSet::new();
            for path in files.iter().filter(|p| map.file(p).is_some()) {
                for a in mpath::ancestors(path) {
                    if !needed.insert(a.to_string()) {
                        break;
                    }
                }
            }
            Some(needed)
        }
    };
    for d in src.dirs("")? {
        if needed.as_ref().is_some_and(|n| !n.contains(&d.path)) {
            continue;
        }
        let to = map.dir(&d.path);
        if to.is_empty() || w.index().is_dir(&to)? {
            continue;
        }
        w.add_dir(&to, d.meta)?;
    }
    let mut run = Run::default();
    let mut buf = Vec::new();
    for fi in src.files(FileOrder::Address, "") {
        let mut fi = fi?;
        let Some(to) = map.file(&fi.path) else {
            continue;
        };
        if skip.contains(&to) {
            continue;
        }
        fi.path = to;
        if !run.extend(&fi) {
            run.copy(w, src, &mut buf, &mut dups, progress)?;
            run.start(fi);
        }
    }
    run.copy(w, src, &mut buf, &mut dups, progress)?;
    Ok(dups.skipped)
}

/// How [`copy_archive`] treats a path already in the output.
struct Dups<'a> {
    input: &'a Path,
    ignore: bool,
    skipped: u64,
}

impl Dups<'_> {
    /// Turn the writer's "already exists" into a skip or a merge error.
    fn check<T>(&mut self, r: Result<T>) -> Result<Option<T>> {
        match r {
            Ok(v) => Ok(Some(v)),
            Err(Error::FileExists(_)) if self.ignore => {
                self.skipped += 1;
                Ok(None)
            }
            Err(Error::FileExists(p)) => Err(Error::Input {
                path: format!("{}: {}", self.input.display(), printable(&p)),
                detail: format!("already in the output from an earlier input{DUPLICATE_HINT}"),
            }),
            Err(e) => Err(e),
        }
    }
}

/// Files of one shard that are read with a single positioned read.
#[derive(Default)]
struct Run {
    files: Vec<FileInfo>,
    span: Span,
}

impl Run {
    fn start(&mut self, fi: FileInfo) {
        self.span = Span::of(&fi);
        self.files.push(fi);
    }

    fn extend(&mut self, fi: &FileInfo) -> bool {
        if self.files.is_empty() {
            self.start(fi.clone());
            return true;
        }
        let fits = self.span.add(fi, &RUN);
        if fits {
            self.files.push(fi.clone());
        }
        fits
    }

    /// Read the run and add its files to `w`, each checked against its CRC32C.
    fn copy(
        &mut self,
        w: &mut ArchiveWriter,
        src: &Archive,
        buf: &mut Vec<u8>,
        dups: &mut Dups,
        progress: &Progress,
    ) -> Result<()> {
        let files = std::mem::take(&mut self.files);
        if files.is_empty() {
            return Ok(());
        }
        let Span {
            shard, start, end, ..
        } = self.span;
        let span = self.span.bytes();
        if span > RUN_BYTES {
            // A single large file: stream it.
            for fi in &files {
                dups.check(copy_streamed(w, src, fi, buf))?;
                progress.add(1, fi.size);
            }
            return Ok(());
        }
        buf.resize(span as usize, 0);
        let first = FileInfo {
            offset: start,
            size: span,
            ..files[0].clone()
        };
        src.shards()?.read_into(&first, 0, buf)?;
        // Files are read in address order: let the kernel read what comes next while
        // this run is checked, written and synced.
        src.shards()?.will_need(shard, end, 2 * RUN_BYTES);
        for fi in &files {
            let at = (fi.offset - start) as usize;
            let data = &buf[at..at + fi.size as usize];
            let actual = crc::crc32c(data);
            if let Some(expected) = fi.crc32c {
                if expected != actual {
                    return Err(Error::CrcMismatch {
                        member: fi.path.clone(),
                        expected,
                        actual,
                    });
                }
            }
            dups.check(w.add_file(&fi.path, fi.meta, data, Some(actual)))?;
            progress.add(1, fi.size);
        }
        Ok(())
    }
}

/// Copy one large file in chunks.
fn copy_streamed(
    w: &mut ArchiveWriter,
    src: &Archive,
    fi: &FileInfo,
    buf: &mut Vec<u8>,
) -> Result<()> {
    src.shards()?.check_extent(fi)?;
    let mut pf = w.begin_file(&fi.path, fi.meta, fi.size)?;
    let mut at = 0u64;
    while at < fi.size {
        let n = (fi.size - at).min(RUN_BYTES);
        buf.resize(n as usize, 0);
        src.shards()?.read_into(fi, at, buf)?;
        src.shards()?.will_need(
            fi.shard,
            fi.offset + at + n,
            RUN_BYTES.min(fi.size - at - n),
        );
        w.write_chunk(&mut pf, buf)?;
        at += n;
    }
    let added = w.finish_file(pf)?;
    match (fi.crc32c, added.crc32c) {
        (Some(expected), Some(actual)) if expected != actual => Err(Error::CrcMismatch {
            member: fi.path.clone(),
            expected,
            actual,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_empty_files_are_bounded() {
        let mut run = Run::default();
        let mut runs = 0;
        for i in 0..10_000u64 {
            let fi = FileInfo::empty_for_test(i);
            if !run.extend(&fi) {
                assert!(run.files.len() <= RUN.files);
                runs += 1;
                run = Run::default();
                run.start(fi);
            }
        }
        assert_eq!(runs, 10_000 / RUN.files);
    }
}
