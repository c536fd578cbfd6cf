//! A sync into an archive: local files and other archives' files are added or
//! replaced through one [`ArchiveWriter`], and with `--delete` what no source has is
//! removed.

use super::*;

impl Run<'_, '_> {
    pub(super) fn sync_into_archive(&mut self, archive: &Path, sources: &[Source]) -> Result<()> {
        let exists = Layout::exists(archive)?;
        if self.opts.dry_run {
            let dest = if exists {
                Some(Archive::open(archive)?)
            } else {
                None
            };
            for s in sources {
                self.source_to_archive(s, Dest::View(dest.as_ref()))?;
            }
            if self.opts.delete {
                if let Some(d) = &dest {
                    let doomed = d.with_index(|i| self.extraneous_in_archive(i, sources))?;
                    for p in doomed {
                        self.line(&format!("would delete: {p}"));
                        self.report.deleted += 1;
                    }
                }
            }
            return Ok(());
        }
        let mut wopts = WriterOptions::with_mode(CreateMode::AppendOrCreate);
        if let Some(t) = self.opts.commit_interval {
            wopts.commit_interval = t;
        }
        wopts.sidecar = self.opts.sidecar;
        let mut w = ArchiveWriter::open(archive, wopts)?;
        // Bytes after the last file are what an interrupted run left behind.
        w.trim_garbage()?;
        for s in sources {
            self.source_to_archive(s, Dest::Writer(&mut w))?;
        }
        if self.opts.delete {
            let doomed = self.extraneous_in_archive(w.index(), sources)?;
            for p in doomed {
                if self.opts.verbose {
                    self.line(&format!("delete: {p}"));
                }
                match w.remove_file(&p) {
                    Ok(_) => self.report.deleted += 1,
                    Err(e) => self.problem(e)?,
                }
            }
        }
        w.trim_garbage()?;
        w.finish()?;
        Ok(())
    }

    pub(super) fn source_to_archive(&mut self, s: &Source, mut dest: Dest) -> Result<()> {
        match &s.kind {
            SourceKind::LocalFile(p) => self.local_file_to_archive(p, &s.target, &mut dest),
            SourceKind::LocalDir(root) => {
                let mut walk = walkdir::WalkDir::new(root)
                    .follow_links(false)
                    .sort_by_file_name()
                    .min_depth(1)
                    .into_iter();
                while let Some(entry) = walk.next() {
                    let entry = match entry {
                        Ok(e) => e,
                        Err(e) => {
                            let path = e.path().map(Path::to_path_buf).unwrap_or(root.clone());
                            let err = e
                                .into_io_error()
                                .unwrap_or_else(|| io::Error::other("file system loop"));
                            self.problem(Error::io(path, err))?;
                            continue;
                        }
                    };
                    let name = entry.file_name().to_string_lossy();
                    if self.names.excluded(&name) {
                        if entry.file_type().is_dir() {
                            walk.skip_current_dir();
                        }
                        continue;
                    }
                    if entry.file_type().is_dir() {
                        continue;
                    }
                    let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
                    let Some(rel) = rel.to_str() else {
                        self.problem(Error::Input {
                            path: mpath::printable(rel.as_os_str().as_encoded_bytes()).into_owned(),
                            detail: "a name that is not UTF-8; skipped".into(),
                        })?;
                        continue;
                    };
                    let to = mpath::join(&s.target, rel);
                    self.local_file_to_archive(entry.path(), &to, &mut dest)?;
                }
                Ok(())
            }
            SourceKind::ArchiveFile { archive, fi } => {
                let src = &self.archives[*archive].1;
                self.stored_file_to_archive(src, fi, &s.target, &mut dest)
            }
            SourceKind::ArchiveDir { archive, dir } => {
                let src = &self.archives[*archive].1;
                for fi in src.files(FileOrder::Address, dir) {
                    let fi = fi?;
                    if self.names.excluded(mpath::basename(&fi.path)) {
                        continue;
                    }
                    let rel = strip_dir(&fi.path, dir);
                    let to = mpath::join(&s.target, rel);
                    self.stored_file_to_archive(src, &fi, &to, &mut dest)?;
                }
                Ok(())
            }
        }
    }

    pub(super) fn local_file_to_archive(
        &mut self,
        path: &Path,
        to: &str,
        dest: &mut Dest,
    ) -> Result<()> {
        let to = match mpath::check_member(to) {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return self.problem(Error::IsADirectory(String::new())),
            Err(e) => return self.problem(e),
        };
        let md = match fs::metadata(path) {
            Ok(m) => m,
            Err(e) => return self.problem(Error::io(path, e)),
        };
        if md.is_dir() {
            // A symbolic link to a directory: not followed (as Python's os.walk).
            return Ok(());
        }
        if !md.is_file() {
            return self.problem(Error::Input {
                path: lossy(path),
                detail: "not a regular file; skipped".into(),
            });
        }
        let meta = Meta::from_fs(&md);
        let existing = dest.file(&to)?;
        let crc = || local_crc(path);
        let verdict = {
            let stored_crc = || Ok(existing.as_ref().and_then(|f| f.crc32c));
            let there = existing.as_ref().map(|f| There {
                size: f.size,
                mtime_ns: f.meta.mtime_ns,
                crc: &stored_crc,
            });
            let seen = Seen {
                size: md.len(),
                mtime_ns: meta.mtime_ns,
                crc: &crc,
            };
            match decide(self.opts, &seen, there.as_ref()) {
                Ok(v) => v,
                Err(e) => return self.problem(e),
            }
        };
        let replace = match verdict {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {to}"));
                }
                return Ok(());
            }
            Verdict::Copy(r) => r,
        };
        let verb = if replace { "update" } else { "add" };
        if self.opts.dry_run {
            self.line(&format!("would {verb}: {to}"));
            self.count(replace, md.len());
            return Ok(());
        }
        if self.opts.verbose {
            self.line(&format!("{verb}: {to}"));
        }
        let Dest::Writer(w) = dest else {
            unreachable!("a writer unless dry-run")
        };
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) => return self.problem(Error::io(path, e)),
        };
        let r = match w.index().file_with_id(&to)? {
            Some((id, _)) => w.replace_file_from_reader(id, meta, md.len(), &mut file),
            None => w.add_file_from_reader(&to, meta, md.len(), &mut file),
        };
        match r {
            Ok(fi) => {
                self.count(replace, fi.size);
                Ok(())
            }
            Err(Error::SourceChanged { detail, .. }) => self.problem(Error::SourceChanged {
                path: lossy(path),
                detail,
            }),
            Err(e) => self.problem(e),
        }
    }

    pub(super) fn stored_file_to_archive(
        &mut self,
        src: &Archive,
        fi: &FileInfo,
        to: &str,
        dest: &mut Dest,
    ) -> Result<()> {
        let to = match mpath::check_member(to) {
            Ok(t) if !t.is_empty() => t,
            Ok(_) => return self.problem(Error::IsADirectory(String::new())),
            Err(e) => return self.problem(e),
        };
        let existing = dest.file(&to)?;
        let src_crc = || Ok(fi.crc32c);
        let stored_crc = || Ok(existing.as_ref().and_then(|f| f.crc32c));
        let there = existing.as_ref().map(|f| There {
            size: f.size,
            mtime_ns: f.meta.mtime_ns,
            crc: &stored_crc,
        });
        let seen = Seen {
            size: fi.size,
            mtime_ns: fi.meta.mtime_ns,
            crc: &src_crc,
        };
        let replace = match decide(self.opts, &seen, there.as_ref())? {
            Verdict::Skip(why) => {
                self.report.skipped += 1;
                if self.opts.verbose {
                    self.line(&format!("skip ({why}): {to}"));
                }
                return Ok(());
            }
            Verdict::Copy(r) => r,
        };
        if self.opts.dry_run {
            let verb = if replace { "update" } else { "copy" };
            self.line(&format!("would {verb}: {} -> {to}", fi.path));
            self.count(replace, fi.size);
            return Ok(());
        }
        if self.opts.verbose {
            self.line(&format!(
                "{}: {to}",
                if replace { "update" } else { "copy" }
            ));
        }
        let Dest::Writer(w) = dest else {
            unreachable!("a writer unless dry-run")
        };
        let id = w.index().file_with_id(&to)?.map(|(id, _)| id);
        let r = if fi.size <= crate::core::archive::WHOLE_READ_LIMIT {
            match src.read_file(fi) {
                Ok(data) => match id {
                    Some(id) => w.replace_file_from_reader(id, fi.meta, fi.size, &mut &data[..]),
                    None => w.add_file_owned(&to, fi.meta, data, fi.crc32c),
                },
                Err(e) => Err(e),
            }
        } else {
            // Checked whole first, then copied in chunks.
            match src.write_to(fi, &mut io::sink()) {
                Ok(()) => {
                    let mut reader = StoredReader {
                        archive: src,
                        fi,
                        at: 0,
                    };
                    match id {
                        Some(id) => w.replace_file_from_reader(id, fi.meta, fi.size, &mut reader),
                        None => w.add_file_from_reader(&to, fi.meta, fi.size, &mut reader),
                    }
                }
                Err(e) => Err(e),
            }
        };
        match r {
            Ok(_) => {
                self.count(replace, fi.size);
                Ok(())
            }
            Err(e) => self.problem(e),
        }
    }

    pub(super) fn count(&mut self, replace: bool, bytes: u64) {
        if replace {
            self.report.updated += 1;
        } else {
            self.report.added += 1;
        }
        self.report.bytes += bytes;
        self.progress.add(1, bytes);
    }

    /// Files of the destination archive, within the directories the sources are
    /// synced into, that no source has (excluded names are kept).
    pub(super) fn extraneous_in_archive(
        &self,
        index: &crate::core::index::Index,
        sources: &[Source],
    ) -> Result<Vec<String>> {
        let mut scopes: Vec<&str> = sources.iter().filter_map(Source::scope).collect();
        scopes.sort();
        scopes.dedup();
        let mut kept: Vec<&str> = Vec::new();
        for s in scopes {
            if !kept.iter().any(|k| mpath::is_within(s, k)) {
                kept.push(s);
            }
        }
        let mut out = Vec::new();
        for scope in kept {
            let mut spec = ScanSpec::new(Table::Files, ScanOrder::Path);
            if !scope.is_empty() {
                spec = spec.with(Cond::Below(scope.to_string()));
            }
            index.scan_each(&spec, 1024, &mut |e| {
                let path = e.path();
                if !self.names.excluded(mpath::basename(path))
                    && !self.held_by_a_source(path, sources, true)?
                {
                    out.push(path.to_string());
                }
                Ok(())
            })?;
        }
        Ok(out)
    }

    /// Does a source have the file that is synced to `target` (an archive path, or a
    /// local path string)?
    pub(super) fn held_by_a_source(
        &self,
        target: &str,
        sources: &[Source],
        to_archive: bool,
    ) -> Result<bool> {
        for s in sources {
            let rel = if target == s.target {
                Some("")
            } else if to_archive && mpath::is_within(target, &s.target) {
                Some(strip_dir(target, &s.target))
            } else if !to_archive {
                target.strip_prefix(&s.target).and_then(|r| {
                    r.strip_prefix('/')
                        .or((s.target.ends_with('/')).then_some(r))
                })
            } else {
                None
            };
            let Some(rel) = rel else { continue };
            let held = match &s.kind {
                SourceKind::LocalFile(_) => rel.is_empty(),
                SourceKind::LocalDir(root) => {
                    let p = root.join(rel);
                    match fs::metadata(&p) {
                        Ok(m) => !m.is_dir(),
                        Err(_) => fs::symlink_metadata(&p).is_ok(),
                    }
                }
                SourceKind::ArchiveFile { .. } => rel.is_empty(),
                SourceKind::ArchiveDir { archive, dir } => self.archives[*archive]
                    .1
                    .with_index(|i| i.is_file(&mpath::join(dir, rel)))?,
            };
            if held {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Reads a stored file in chunks (its CRC was checked in a first pass).
struct StoredReader<'a> {
    archive: &'a Archive,
    fi: &'a FileInfo,
    at: u64,
}

impl Read for StoredReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.fi.size {
            return Ok(0);
        }
        let n = self
            .archive
            .read_range_into(self.fi, self.at, buf)
            .map_err(io::Error::other)?;
        self.at += n as u64;
        Ok(n)
    }
}
