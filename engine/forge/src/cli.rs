//! The `forge` command line (clap): build, run, test, targets, uquery, clean, log.

pub fn main() -> i32 {
    unimplemented!()
}
