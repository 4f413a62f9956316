//! The description's key reference has one source, src/format.rs: the README holds exactly
//! what `deploy-tool describe-format` prints, and each of its tables names exactly the keys
//! the parser accepts, as the parser itself lists them when it refuses an unknown key
//! (serde's `deny_unknown_fields`: "unknown field `x`, expected one of ...").

use crate::common;

use std::collections::BTreeSet;

use deploy_tool::format;

#[test]
fn readme_holds_the_generated_reference() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    assert_eq!(
        format::splice(&readme).as_deref(),
        Some(readme.as_str()),
        "deploy/tool/README.md is stale: run `cargo run -p deploy_tool -- describe-format \
         --write README.md` in deploy/tool"
    );
    let out = common::tool(&["describe-format"]);
    assert!(out.status.success());
    assert!(readme.contains(String::from_utf8_lossy(&out.stdout).trim_end()));
}

/// The keys the parser lists when `table` holds an unknown key `zzz_unknown`.
fn parser_keys(table: &str) -> BTreeSet<String> {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "name = \"k\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\napp = \"hls\"\n\
         {table}zzz_unknown = 1\n"
    );
    let p = common::write(dir.path(), "k.toml", &text);
    let err = deploy_tool::commands::load(&p, &common::platform()).unwrap_err();
    let msg = format!("{err:#}");
    let list = msg
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("no key list in: {msg}"));
    list.split(", ")
        .map(|k| k.trim().trim_matches('`').to_string())
        .collect()
}

fn doc_keys(rows: &[(&str, &str)]) -> BTreeSet<String> {
    format::names(rows).into_iter().collect()
}

#[test]
fn each_table_names_the_keys_the_parser_accepts() {
    assert_eq!(doc_keys(format::TOP), parser_keys(""));
    assert_eq!(doc_keys(format::KERNEL), parser_keys("[[kernel]]\n"));
    assert_eq!(doc_keys(format::STREAM), parser_keys("[[stream]]\n"));
}
