//! `vpp-link` gives v++ (UG1393 "v++ command": `-l -t hw --platform P --config F -o X` then
//! the .xo files) only the kernels the device uses, and leaves no output when v++ fails.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use deploy_tool::vpp_link::{vpp_link, VppLinkArgs};

fn fake_vpp(dir: &Path, exit: i32) -> PathBuf {
    // records its arguments and writes the -o file, as v++ would
    let p = dir.join("v++");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo xclbin > \"$2\"; shift; done\nexit {exit}\n",
            log = dir.join("args.txt").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn setup(dir: &Path) -> (PathBuf, PathBuf, Vec<PathBuf>) {
    let sim = dir.join("fpga0.sim.json");
    std::fs::write(
        &sim,
        r#"{"kernels": [{"cu": "aurora_flow_0", "kernel": "aurora_flow_0"}, {"cu": "send_0", "kernel": "send"}]}"#,
    )
    .unwrap();
    let cfg = dir.join("fpga0.cfg");
    std::fs::write(&cfg, "[connectivity]\n").unwrap();
    let xos = ["aurora_flow_0.xo", "aurora_flow_1.xo", "send.xo", "recv.xo"]
        .iter()
        .map(|n| {
            let p = dir.join(n);
            std::fs::write(&p, "xo").unwrap();
            p
        })
        .collect();
    (sim, cfg, xos)
}

#[test]
fn only_the_used_kernels_reach_vpp() {
    let t = tempfile::tempdir().unwrap();
    let vpp = fake_vpp(t.path(), 0);
    let (sim, cfg, xos) = setup(t.path());
    let out = t.path().join("fpga0.xclbin");
    vpp_link(&VppLinkArgs {
        vpp: &vpp,
        platform: "xilinx_u280_gen3x16_xdma_1_202211_1",
        config: &cfg,
        sim_description: &sim,
        xos: &xos,
        out: &out,
    })
    .unwrap();
    let args = std::fs::read_to_string(t.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(
        &args[..5],
        [
            "-l",
            "-t",
            "hw",
            "--platform",
            "xilinx_u280_gen3x16_xdma_1_202211_1"
        ]
    );
    let xo_args: Vec<&str> = args
        .iter()
        .filter(|a| a.ends_with(".xo"))
        .copied()
        .collect();
    assert_eq!(xo_args.len(), 2, "{args:?}");
    assert!(xo_args.iter().any(|a| a.ends_with("/aurora_flow_0.xo")));
    assert!(xo_args.iter().any(|a| a.ends_with("/send.xo")));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "xclbin\n");
}

#[test]
fn a_failing_vpp_leaves_no_xclbin_and_a_missing_xo_is_named() {
    let t = tempfile::tempdir().unwrap();
    let vpp = fake_vpp(t.path(), 1);
    let (sim, cfg, xos) = setup(t.path());
    let out = t.path().join("fpga0.xclbin");
    let args = VppLinkArgs {
        vpp: &vpp,
        platform: "p",
        config: &cfg,
        sim_description: &sim,
        xos: &xos,
        out: &out,
    };
    assert!(vpp_link(&args).is_err());
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(t.path())
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("vpp-link"))
            .count(),
        0
    );
    let err = vpp_link(&VppLinkArgs {
        xos: &xos[1..],
        ..args
    })
    .unwrap_err();
    assert!(err.to_string().contains("aurora_flow_0.xo"), "{err}");
}

/// A width variant is kernel `dma_out` in v++ but its own `.xo`: the CU's `payload` (the
/// built target) chooses the file, not the 512-bit `dma_out.xo` beside it.
#[test]
fn a_dma_width_variant_reaches_vpp_as_its_own_xo() {
    let t = tempfile::tempdir().unwrap();
    let vpp = fake_vpp(t.path(), 0);
    let sim = t.path().join("fpga1.sim.json");
    std::fs::write(
        &sim,
        r#"{"kernels": [{"cu": "dma_out_0", "kernel": "dma_out", "payload": "dma_out_w16"}]}"#,
    )
    .unwrap();
    let cfg = t.path().join("fpga1.cfg");
    std::fs::write(&cfg, "[connectivity]\n").unwrap();
    let xos: Vec<PathBuf> = ["dma_out.xo", "dma_out_w16.xo", "dma_out_w8.xo"]
        .iter()
        .map(|n| {
            let p = t.path().join(n);
            std::fs::write(&p, "xo").unwrap();
            p
        })
        .collect();
    let out = t.path().join("fpga1.xclbin");
    vpp_link(&VppLinkArgs {
        vpp: &vpp,
        platform: "xilinx_u280_gen3x16_xdma_1_202211_1",
        config: &cfg,
        sim_description: &sim,
        xos: &xos,
        out: &out,
    })
    .unwrap();
    let args = std::fs::read_to_string(t.path().join("args.txt")).unwrap();
    let xo_args: Vec<&str> = args.lines().filter(|a| a.ends_with(".xo")).collect();
    assert_eq!(xo_args.len(), 1, "{args}");
    assert!(xo_args[0].ends_with("/dma_out_w16.xo"), "{args}");
}

/// A replica plan's FINN kernels come as one directory (`--xo-dir`): a kernel with several
/// CUs (`finn_whole` ×2) reaches v++ once, a segment kernel the device uses reaches it, and
/// one it does not use (another card's segment) does not.
#[test]
fn a_replica_devices_finn_kernels_come_from_the_xo_directory() {
    let t = tempfile::tempdir().unwrap();
    let vpp = fake_vpp(t.path(), 0);
    let sim = t.path().join("fpga0.sim.json");
    std::fs::write(
        &sim,
        r#"{"kernels": [{"cu": "dma_in_r0", "kernel": "dma_in"},
            {"cu": "finn_r0", "kernel": "finn_whole"}, {"cu": "finn_r1", "kernel": "finn_whole"},
            {"cu": "finn_r2", "kernel": "finn_A__B"}]}"#,
    )
    .unwrap();
    let cfg = t.path().join("fpga0.cfg");
    std::fs::write(&cfg, "[connectivity]\n").unwrap();
    let dma = t.path().join("dma_in.xo");
    std::fs::write(&dma, "xo").unwrap();
    let dir = t.path().join("finn_xo");
    std::fs::create_dir(&dir).unwrap();
    for n in ["finn_whole.xo", "finn_A__B.xo", "finn_C__D.xo", "notes.txt"] {
        std::fs::write(dir.join(n), "xo").unwrap();
    }
    let xos = deploy_tool::vpp_link::with_dirs(vec![dma], &[dir]).unwrap();
    assert_eq!(xos.len(), 4, "{xos:?}");
    let out = t.path().join("fpga0.xclbin");
    vpp_link(&VppLinkArgs {
        vpp: &vpp,
        platform: "xilinx_u280_gen3x16_xdma_1_202211_1",
        config: &cfg,
        sim_description: &sim,
        xos: &xos,
        out: &out,
    })
    .unwrap();
    let args = std::fs::read_to_string(t.path().join("args.txt")).unwrap();
    let mut names: Vec<&str> = args
        .lines()
        .filter(|a| a.ends_with(".xo"))
        .map(|a| a.rsplit('/').next().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["dma_in.xo", "finn_A__B.xo", "finn_whole.xo"],
        "{args}"
    );
}
