//! Getting data out: `barecat-extract`, `barecat-to-zip`, `barecat-to-tar`.

mod attacks;
mod extract;
mod zip_tar;
