//! The generated Remote Workers API types and client (build.rs).
#![allow(clippy::all, clippy::pedantic, missing_docs, rustdoc::all)]

pub mod v1test2 {
    include!(concat!(
        env!("OUT_DIR"),
        "/google.devtools.remoteworkers.v1test2.rs"
    ));
}
