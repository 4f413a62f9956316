//! Empty: it makes cargo resolve the manifest's [build-dependencies], which unify the features
//! of the libraries build scripts and proc macros use (tools/checks/workspace_hack.py).
fn main() {}
