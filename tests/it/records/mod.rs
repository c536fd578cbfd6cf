//! Record datasets and record tables: the library and `barecat-records`.

mod cli;
mod lib;
