//! With XILINX_XRT pointing at an install (the driver library found), XRT itself looks for
//! cards, finds none and the backend says so.

use fpga_device::xrt::{Selector, XrtDevice};

#[test]
fn runtime_present_but_no_card() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("lib")).unwrap();
    // Debian installs libxrt_core in the multiarch directory; XRT loads $XILINX_XRT/lib/.
    let core = [
        "/usr/lib/x86_64-linux-gnu/libxrt_core.so.2",
        "/usr/lib/aarch64-linux-gnu/libxrt_core.so.2",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libxrt_core.so.2 of libxrt-utils (tools/bootstrap/apt.txt)");
    std::os::unix::fs::symlink(core, tmp.path().join("lib/libxrt_core.so.2")).unwrap();
    std::env::set_var("XILINX_XRT", tmp.path());
    let err = XrtDevice::open(Selector::Index(0))
        .err()
        .expect("no card here");
    let msg = format!("{err:#}");
    assert!(
        msg.starts_with("no XRT device found (xrtDeviceOpen(0)"),
        "{msg}"
    );
}
