//! Every clock-domain crossing of the RTL is bounded by a constraint in force in the XDC the
//! project's rule generates for each QSFP port (`aurora_flow_kernel`'s `[package]`), read with
//! UG903's precedence: the check passes there and fails on constraints that are shadowed
//! (fixtures: the generated XDC plus a clock group, plus a false path, minus a bus skew).
//! Runs as `//hw/aurora_flow:desc_check`, which builds the packages and names them in
//! AF_PACKAGE_0 / AF_PACKAGE_1.

use aurora_flow_desc::cdc::{check, clocks, crossings, Crossing};
use aurora_flow_desc::xdc::parse;
use std::path::PathBuf;

fn crate_dir() -> PathBuf {
    let dir = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo or `action run-tests`"),
    );
    if dir.ends_with("hw/aurora_flow/desc") {
        dir
    } else {
        dir.join("desc")
    }
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rtl_crossings() -> Vec<Crossing> {
    let rtl = crate_dir().join("../rtl");
    let x = crossings(
        &read(rtl.join("aurora_flow.sv")),
        &read(rtl.join("af_ip_reset.sv")),
    )
    .expect("crossings");
    // 2 FIFOs x 3, the bundle's 3, the counter-reset synchronizer, 5 reset synchronizers: a
    // scan that finds fewer is broken, not a kernel with fewer crossings
    assert!(
        x.len() >= 15,
        "found only {} crossings in the RTL: {x:#?}",
        x.len()
    );
    assert_eq!(
        x.iter()
            .filter(|c| c.what.starts_with("reset synchronizer"))
            .count(),
        5
    );
    x
}

fn problems_of_fixture(name: &str) -> Vec<String> {
    let path = crate_dir().join("tests/fixtures").join(name);
    let xdc = parse(name, &read(path)).expect("fixture parses");
    check(&xdc, &rtl_crossings(), &clocks(0))
}

#[test]
fn clock_groups_shadow_every_max_delay_between_the_clocks() {
    let p = problems_of_fixture("shadowed_by_clock_groups.xdc");
    // each FIFO: two Gray pointers and the memory read; the bundle: data, request, ack
    assert_eq!(p.len(), 9, "{p:#?}");
    assert!(
        p.iter()
            .all(|l| l.contains("shadowed by set_clock_groups (line 29)")),
        "{p:#?}"
    );
    assert!(p.iter().any(|l| l.starts_with("u_rx_fifo memory read:")));
    assert!(p
        .iter()
        .any(|l| l.starts_with("status bundle u_to_ap hold_reg[0]:")));
}

#[test]
fn a_false_path_shadows_the_memory_read_limit() {
    let p = problems_of_fixture("shadowed_by_false_path.xdc");
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].starts_with("u_rx_fifo memory read:")
            && p[0].contains("shadowed by set_false_path (line 29)"),
        "{p:#?}"
    );
}

#[test]
fn a_missing_bus_skew_is_found() {
    let p = problems_of_fixture("missing_bus_skew.xdc");
    assert_eq!(
        p,
        vec!["u_tx_fifo Gray pointer wgray_reg[0]: no set_bus_skew".to_string()]
    );
}

#[test]
fn generated_constraints_bound_every_crossing() {
    let x = rtl_crossings();
    for port in 0..2u32 {
        let var = format!("AF_PACKAGE_{port}");
        let dir = std::env::var(&var).unwrap_or_else(|_| {
            panic!("{var} is not set: run ./forge test //hw/aurora_flow:desc_check")
        });
        // forge gives project-relative paths; the test runs in the BUCK package's directory
        let dir = crate_dir().join("../../..").join(dir);
        let name = format!("aurora_flow_{port}.xdc");
        let xdc = parse(&name, &read(dir.join(&name))).expect("generated XDC parses");
        let p = check(&xdc, &x, &clocks(port));
        assert!(p.is_empty(), "{name}:\n{}", p.join("\n"));
        // the other port's clock model does not fit: the check reads the XDC's clocks
        assert!(!check(&xdc, &x, &clocks(1 - port)).is_empty());
    }
}
