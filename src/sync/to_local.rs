//! A sync into a local directory: archives' files are extracted where the local
//! copy differs, and with `--delete` local files that no source has are removed.

use super::*;

impl Run<'_, '_> {
    pub(super) fn sync_into_local(&mut self, dir: &Path, sources: &[Source]) -> Result<()> {
        if !self.opts.dry_run {
            fs::create_dir_all(dir).at(dir)?;
        }
        for s in sources {
            let (archive, files): (usize, Box<dyn Iterator<Item = Result<FileInfo>>>) =
                match &s.kind {
                    SourceKind::ArchiveFile { archive, fi } => {
                        (*archive, Box::new(std::iter::once(Ok(fi.clone()))))
                    }
                    SourceKind::ArchiveDir { archive, dir } => (
                        *archive,
                        Box::new(self.archives[*archive].1.files(FileOrder::Address, dir)),
                    ),
                    _ => unreachable!("local sources were refused"),
                };
            let src = &self.archives[archive].1;
            // Files are extracted in chunks, by the safe extractor, into the
            // directory their source maps to.
            let (into, strip) = match &s.kind {
                SourceKind::ArchiveFile { fi, .. } => (lossy(dir), fi.path.split('/').count() - 1),
                SourceKind::ArchiveDir { dir, .. } if dir.is_empty() => (s.target.clone(), 0),
                SourceKind::ArchiveDir { dir, .. } => (s.target.clone(), dir.split('/').count()),
                _ => unreachable!("local sources were refused"),
            };
            let mut chunk: Vec<FileInfo> = Vec::new();
            for fi in files {
                let fi = fi?;
                if self.names.excluded(mpath::basename(&fi.path)) {
                    continue;
                }
                let rel = match &s.kind {
                    SourceKind::ArchiveDir { dir, .. } => strip_dir(&fi.path, dir).to_string(),
                    _ => String::new(),
                };
                let local = if rel.is_empty() {
                    s.target.clone()
                } else {
                    join_local(&s.target, &rel)
                };
                if self.local_verdict(&fi, &local)? {
                    chunk.push(fi);
                    if chunk.len() >= 4096 {
                        self.extract_chunk(src, &mut chunk, Path::new(&into), strip)?;
                    }
                }
            }
            self.extract_chunk(src, &mut chunk, Path::new(&into), strip)?;
        }
        if self.opts.delete {
            self.delete_local(sources)?;
        }
        Ok(())
    }

    /// Print the line for `fi` going to `local`; true when it is to be extracted.
    pub(super) fn local_verdict(&mut self, fi: &FileInfo, local: &str) -> Result<bool> {
        let path = Path::new(local);
        let there = fs::symlink_metadata(path).ok();
        let local_crc = || local_crc(path);
        let src_crc = || Ok(fi.crc32c);
        let info = there.as_ref().map(|m| There {
            size: m.len(),
            mtime_ns: Meta::from_fs(m).mtime_ns,
            crc: &local_crc,
        });
        let seen = Seen {
            size: fi.size,
            mtime_ns: fi.meta.mtime_ns,
            crc: &src_crc,
        };
        let verdict = match decide(self.opts, &seen, info.as_ref()) {
            Ok(v) => v,
            Err(e) => {
                self.problem(e)?;
                return Ok(false);
            }
        };
        match verdict {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {local}"));
                }
                Ok(false)
            }
            Verdict::Copy(replace) => {
                if self.opts.dry_run {
                    self.line(&format!("would extract: {local}"));
                    self.count(replace, fi.size);
                    return Ok(false);
                }
                if self.opts.verbose {
                    self.line(&format!("extract: {local}"));
                }
                if replace {
                    self.report.updated += 1;
                } else {
                    self.report.added += 1;
                }
                Ok(true)
            }
        }
    }

    pub(super) fn extract_chunk(
        &mut self,
        src: &Archive,
        chunk: &mut Vec<FileInfo>,
        into: &Path,
        strip: usize,
    ) -> Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        let selection = Selection {
            dirs: Vec::new(),
            files: std::mem::take(chunk),
            filter: None,
        };
        let opts = ExtractOptions {
            workers: self.opts.workers.max(1),
            strip_components: strip,
            overwrite: true,
            same_permissions: false,
        };
        let problems: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let report = |e: &Error| problems.lock().expect("not poisoned").push(e.to_string());
        let r = extract(src, &selection, into, &opts, self.progress, &report)?;
        self.report.bytes += r.bytes;
        for p in problems.into_inner().expect("not poisoned") {
            self.report.problems += 1;
            (self.note)(Note::Problem(&Error::InvalidOperation(p)));
        }
        Ok(())
    }

    /// Delete the local files, within the directories the sources are synced into,
    /// that no source has (excluded names are kept).
    pub(super) fn delete_local(&mut self, sources: &[Source]) -> Result<()> {
        let mut scopes: Vec<&str> = sources.iter().filter_map(Source::scope).collect();
        scopes.sort();
        scopes.dedup();
        let mut doomed = Vec::new();
        for scope in scopes {
            let root = Path::new(scope);
            if !root.is_dir() {
                continue;
            }
            for entry in walkdir::WalkDir::new(root)
                .follow_links(false)
                .sort_by_file_name()
                .min_depth(1)
            {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        let path = e
                            .path()
                            .map(Path::to_path_buf)
                            .unwrap_or(root.to_path_buf());
                        let err = e
                            .into_io_error()
                            .unwrap_or_else(|| io::Error::other("file system loop"));
                        self.problem(Error::io(path, err))?;
                        continue;
                    }
                };
                if entry.file_type().is_dir() {
                    continue;
                }
                let name = entry.file_name().to_string_lossy();
                if self.names.excluded(&name) {
                    continue;
                }
                let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
                let local = join_local(scope, &rel.to_string_lossy());
                if doomed.contains(&local) {
                    continue;
                }
                if !self.held_by_a_source(&local, sources, false)? {
                    doomed.push(local);
                }
            }
        }
        for local in doomed {
            if self.opts.dry_run {
                self.line(&format!("would delete: {local}"));
                self.report.deleted += 1;
                continue;
            }
            if self.opts.verbose {
                self.line(&format!("delete: {local}"));
            }
            match fs::remove_file(&local) {
                Ok(()) => self.report.deleted += 1,
                Err(e) => self.problem(Error::io(&local, e))?,
            }
        }
        Ok(())
    }
}
