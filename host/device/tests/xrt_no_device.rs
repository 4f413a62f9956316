//! The XRT backend is linked against Debian's libxrt_coreutil (2.13) and, on a machine
//! without a card, reports it cleanly instead of aborting (XRT's C API throws C++
//! exceptions, e.g. "XILINX_XRT not set", which the shim turns into errors).

use fpga_device::xrt::{Selector, XrtDevice};

#[test]
fn no_card_is_a_clear_error() {
    // Whatever XILINX_XRT is in this environment, the real library runs and fails cleanly.
    for sel in [Selector::Index(0), Selector::Bdf("0000:a1:00.1".into())] {
        let shown = sel.to_string();
        let err = XrtDevice::open(sel).err().expect("no card here");
        let msg = format!("{err:#}");
        assert!(msg.starts_with("no XRT device found ("), "{msg}");
        assert!(msg.contains(&shown), "{msg}");
    }
}
