//! Lists given to commands: paths (or record indices, or member names) one per line,
//! or NUL-terminated, from a file or from standard input (`-`).
//!
//! Why here: `cat -T`, `rm -T`, `create -T`, the record store's `--list` and the
//! file-system import all read such lists, and they must agree on the rules:
//! entries end at a `\n` (or a NUL with `null`), a last entry without its terminator
//! counts too, empty entries are skipped.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::core::error::{io_reason, Error, Result};

/// What an error names when the list is standard input.
pub const STDIN_NAME: &str = "standard input";

/// Reads the entries of a list one by one; see the module documentation.
pub struct ListReader<'a> {
    reader: Box<dyn BufRead + 'a>,
    sep: u8,
    name: String,
    buf: Vec<u8>,
}

impl<'a> ListReader<'a> {
    /// Read the entries of `reader`, NUL-terminated with `null`, else lines; `name`
    /// is what errors call the list.
    pub fn new(reader: impl BufRead + 'a, null: bool, name: impl Into<String>) -> ListReader<'a> {
        ListReader {
            reader: Box::new(reader),
            sep: if null { b'\0' } else { b'\n' },
            name: name.into(),
            buf: Vec::new(),
        }
    }

    /// What errors call the list: its path, or [`STDIN_NAME`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next entry, without its terminator; `None` at the end. Empty entries are
    /// skipped.
    pub fn next_entry(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            self.buf.clear();
            if self.reader.read_until(self.sep, &mut self.buf)? == 0 {
                return Ok(None);
            }
            if self.buf.last() == Some(&self.sep) {
                self.buf.pop();
            }
            if !self.buf.is_empty() {
                return Ok(Some(&self.buf));
            }
        }
    }

    /// The next entry as text: an entry that is not UTF-8 is an error naming it
    /// (archive paths and indices are text).
    pub fn next_text(&mut self) -> Result<Option<String>> {
        let name = self.name.clone();
        let entry = self.next_entry().map_err(|e| read_error(&name, &e))?;
        match entry {
            None => Ok(None),
            Some(b) => match std::str::from_utf8(b) {
                Ok(s) => Ok(Some(s.to_string())),
                Err(_) => Err(Error::Input {
                    path: name,
                    detail: format!(
                        "{}: an entry that is not UTF-8 (archive paths are)",
                        crate::core::path::printable(b)
                    ),
                }),
            },
        }
    }
}

impl ListReader<'static> {
    /// Open the list at `path` (`-` for standard input).
    pub fn open(path: &Path, null: bool) -> Result<ListReader<'static>> {
        if path.as_os_str() == "-" {
            return Ok(ListReader::new(
                BufReader::new(io::stdin()),
                null,
                STDIN_NAME,
            ));
        }
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        Ok(ListReader::new(
            BufReader::new(file),
            null,
            path.display().to_string(),
        ))
    }
}

/// The error of a list that could not be read on.
pub fn read_error(name: &str, e: &io::Error) -> Error {
    Error::Input {
        path: name.to_string(),
        detail: format!("cannot read the list: {}", io_reason(e)),
    }
}

/// Call `f` with each entry of the list at `path` (`-` for standard input) as text
/// ([`ListReader::next_text`]); the first error (of the list or of `f`) ends it.
pub fn for_each_entry<E: From<Error>>(
    path: &Path,
    null: bool,
    f: &mut dyn FnMut(String) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let mut list = ListReader::open(path, null)?;
    while let Some(entry) = list.next_text()? {
        f(entry)?;
    }
    Ok(())
}

/// The entries of the list at `path` ([`for_each_entry`]), all at once.
pub fn read_entries(path: &Path, null: bool) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for_each_entry(path, null, &mut |p| {
        out.push(p);
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(input: &[u8], null: bool) -> Vec<Vec<u8>> {
        let mut r = ListReader::new(input, null, "test");
        let mut out = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            out.push(e.to_vec());
        }
        out
    }

    #[test]
    fn entries_end_at_the_separator_and_empty_ones_are_skipped() {
        assert_eq!(
            entries(b"a\n\nb c\nlast", false),
            [&b"a"[..], b"b c", b"last"]
        );
        assert_eq!(entries(b"a\nb\0\0c\0", true), [&b"a\nb"[..], b"c"]);
        assert!(entries(b"", false).is_empty());
    }

    #[test]
    fn text_that_is_not_utf8_is_an_error_naming_the_list() {
        let mut r = ListReader::new(&b"ok\n\xff\n"[..], false, "list.txt");
        assert_eq!(r.next_text().unwrap().as_deref(), Some("ok"));
        let e = r.next_text().unwrap_err().to_string();
        assert!(e.starts_with("list.txt: \\xff: "), "{e}");
    }
}
