//! The deployment description's keys, as `deploy-tool describe-format` prints them into
//! deploy/tool/README.md (between its `describe-format` markers; tests/format_doc.rs checks
//! the README equals the output and that each table names exactly the keys the parser's
//! types accept). One source for the reference: edit the tables here, then run
//! `deploy-tool describe-format --write README.md` from deploy/tool.

/// Top-level keys and tables of `deploy/<name>.toml`.
pub const TOP: &[(&str, &str)] = &[
    (
        "`name`",
        "deployment name",
    ),
    (
        "`platform`",
        "must equal the FPGA toolchain's platform (`name` of `toolchains/fpga_platforms/<platform>.toml`)",
    ),
    (
        "`app`",
        "`\"finn\"` (streams follow the partition plan), `\"aurora_bench\"` (link benchmark) or `\"hls\"` (the user's HLS kernels: `[[kernel]]`, `[[stream]]`)",
    ),
    (
        "`cards_per_node`",
        "cards per node (default: the cards per node of toolchains/clusters/noctua2.toml, Noctua 2's U280 nodes); `card` must be below it, and a job script's cluster must have as many",
    ),
    (
        "`clock_mhz`",
        "default kernel clock of every device (default: the platform's)",
    ),
    (
        "`beside`",
        "`app = \"finn\"`: the published figures the report's \"next to\" table sets the plan beside, from `paper/figures.toml`: `\"paper_mobilenet\"` (default: the AuroraFlow paper's MobileNet-V1, per-card LUT and BRAM and FPS) or `\"finn_examples_resnet50\"` (finn-examples' measured ResNet-50: board, FPS, latency); anything else is refused at the key",
    ),
    (
        "`[[device]]`",
        "`name`, `node` (index in the allocation: n00, n01 …), `card` (acl index), optional `clock_mhz`, `role` (`aurora_bench` only: `\"bench\"` = send + recv kernels, `\"forward\"` = pass-through), `max_util = { LUT = 0.8, BRAM_18K = 0.8, ... }` (fractions; resources not named keep 0.8), `min_util = { LUT = 0.3, ... }` (the partitioner's lower bound: at least this fraction in use; resources not named keep 0; each at most its `max_util`), `slr = { <cu> = \"SLR0\" }`, `memory = { \"<cu>.<port>\" = \"HBM[4]\" }`",
    ),
    (
        "`[devices]`",
        "generated devices instead of `[[device]]`: `count`, `role`, `max_util`, `min_util`; `fpga<i>` on node `i / cards_per_node`, card `i % cards_per_node`; with `aurora_bench` device 0 gets role `bench`",
    ),
    (
        "`[topology]`",
        "`kind` = `chain` / `ring` (port 1 of device i → port 0 of i+1; the ring closes), `pair` (fpga2k:0 ↔ fpga2k+1:0 and :1 ↔ :1), `loopback` (each card's port 0 ↔ its port 1); `cable_m` (default 5)",
    ),
    (
        "`[[link]]`",
        "explicit cables instead of `[topology]`: `a = \"fpga0:1\"`, `b = \"fpga1:0\"`, `cable_m`. `a == b` is a port looped onto itself through the switch",
    ),
    (
        "`[slurm]`",
        "optional: `time` (default `00:30:00`), `account`, `constraint` (default: the platform's `xrt_constraint`; on a cluster with `job.platform_constraint`), `modules` (default: the cluster file's `job.modules`; on a cluster with modules)",
    ),
    (
        "`[[kernel]]`",
        "app `hls`: a CU of one of the `fpga_deployment`'s kernels on a device (keys below)",
    ),
    (
        "`[[stream]]`",
        "app `hls`: an AXI4-Stream between two CUs' stream ports, on one card or over a cable (keys below)",
    ),
];

/// Keys of a `[[kernel]]` table (app `hls`).
pub const KERNEL: &[(&str, &str)] = &[
    (
        "`cu`",
        "CU name, unique on its device (a C identifier: it names the CU in v++ and XRT)",
    ),
    (
        "`kernel`",
        "the kernel's `name` in its `kernel.json` (the `hls_kernel` target's name); must be among the `fpga_deployment`'s `kernels`",
    ),
    (
        "`device`",
        "the device the CU sits on",
    ),
    (
        "`scalars`",
        "`{ <scalar argument> = <integer> }`: defaults the host uses when it passes none (in `topology.json` `cus`)",
    ),
    (
        "`memory`",
        "`{ <m_axi argument> = \"HBM[n]\" }`: the bank of that argument (`sp=`); arguments not named get banks in order, skipping the named ones",
    ),
    (
        "`slr`",
        "optional SLR of the CU (`slr=`), one the platform has",
    ),
];

/// Keys of a `[[stream]]` table (app `hls`).
pub const STREAM: &[(&str, &str)] = &[
    (
        "`from`",
        "the sending output, `DEVICE.CU.PORT` (e.g. `\"fpga0.producer_0.out\"`)",
    ),
    (
        "`to`",
        "the receiving input, `DEVICE.CU.PORT`; on the same device a `stream_connect=`, else one direction of a cable between the two devices through the AuroraFlow kernels (a width converter where the port is not the link's 512 bits; a tie-off on a used cable's unused direction)",
    ),
    (
        "`cable`",
        "optional, between cards: an end of the cable to take (`\"fpga0:1\"`); else the first cable between the two devices whose direction is free, in file order. Each direction of a cable carries one stream",
    ),
    (
        "`depth`",
        "optional, on one card: the FIFO depth (`stream_connect=...:DEPTH`)",
    ),
];

/// The markers around the generated part of the README.
pub const BEGIN: &str =
    "<!-- describe-format: generated by `deploy-tool describe-format`; do not edit -->";
pub const END: &str = "<!-- describe-format: end -->";

fn rows(out: &mut String, rows: &[(&str, &str)]) {
    out.push_str("| key | meaning |\n|---|---|\n");
    for (k, m) in rows {
        out.push_str(&format!("| {k} | {m} |\n"));
    }
}

/// The key reference in markdown, markers included.
pub fn markdown() -> String {
    let mut s = format!("{BEGIN}\n");
    rows(&mut s, TOP);
    s.push_str("\n`[[kernel]]` (app `hls`):\n\n");
    rows(&mut s, KERNEL);
    s.push_str("\n`[[stream]]` (app `hls`):\n\n");
    rows(&mut s, STREAM);
    s.push_str(END);
    s
}

/// `text` with the part between the markers replaced by [`markdown`]; None without markers.
pub fn splice(text: &str) -> Option<String> {
    let a = text.find(BEGIN)?;
    let b = text[a..].find(END)? + a + END.len();
    Some(format!("{}{}{}", &text[..a], markdown(), &text[b..]))
}

/// The keys a table names (`name`, `[[device]]` -> `device`, `[devices]` -> `devices`).
pub fn names(rows: &[(&str, &str)]) -> Vec<String> {
    rows.iter()
        .map(|(k, _)| {
            k.trim_matches(|c| c == '`' || c == '[' || c == ']')
                .to_string()
        })
        .collect()
}
