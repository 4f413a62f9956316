//! `forge docs starlark`: the documentation of the public symbols of `.bzl` files (rules with
//! their attributes, providers with their fields, macros with their docstrings), taken from
//! the loaded modules as `buck2 docs starlark` takes it, so a rule reference is generated
//! from the `doc =` strings next to the code instead of being written twice.

mod collect;
mod literal;
mod markdown;

pub use collect::{collect, FileDocs, Symbol, SymbolKind};
pub use markdown::render_markdown;
