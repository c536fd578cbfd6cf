//! Getting data in: `barecat-create`, `barecat-from-tar`, `barecat-from-zip`,
//! `convert` and `--wrap`, and tar and zip files as other tools wrote them.

mod convert_wrap;
mod create;
mod tar;
mod tar_compat;
mod tar_corpus;
mod zip;
