//! Getting data in: `barecat-create`, `barecat-from-tar`, `barecat-from-zip`,
//! `barecat-from-archive`, `convert` and `--wrap`, and archives in every format as
//! other tools wrote them.

mod convert_wrap;
mod create;
mod formats;
mod tar;
mod tar_compat;
mod tar_corpus;
mod zip;
