//! EMBEDDED_METADATA: the kernels as the XML v++ writes (`project/platform/device/core/
//! kernel/instance`), which is where XRT's xclbin parser finds kernel names and arguments.

use crate::description::DeviceDescription;
use crate::sections::cu_base;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The XML; the board id and FPGA device name come from the board's file (the part's first
/// field, `xcu280` of `xcu280-fsvh2892-2L-e`, as v++ writes it).
pub fn embedded_metadata(d: &DeviceDescription, board: &fpga_platform::Platform) -> String {
    let board_id = board.board_id.as_str();
    let fpga_device = board.part.split('-').next().unwrap_or(&board.part);
    let mut kernels: Vec<&str> = Vec::new();
    for k in &d.kernels {
        if !kernels.contains(&k.kernel.as_str()) {
            kernels.push(&k.kernel);
        }
    }
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str(&format!("<project name=\"{}\">\n", escape(&d.deployment)));
    x.push_str(&format!(
        "  <platform vendor=\"xilinx\" boardid=\"{}\" name=\"{}\" featureRomTime=\"0\">\n",
        escape(board_id),
        escape(&d.platform)
    ));
    x.push_str("    <version major=\"1\" minor=\"0\"/>\n");
    x.push_str(&format!(
        "    <device name=\"{}\" fpgaDevice=\"{}\" addrWidth=\"0\">\n",
        escape(&d.device),
        escape(fpga_device)
    ));
    x.push_str(&format!(
        "      <core name=\"OCL_REGION_0\" target=\"hw\" type=\"clc_region\" clockFreq=\"{}MHz\" numComputeUnits=\"{}\">\n",
        d.clock_mhz,
        d.kernels.len()
    ));
    for name in kernels {
        let cus: Vec<(usize, &crate::KernelEntry)> = d
            .kernels
            .iter()
            .enumerate()
            .filter(|(_, k)| k.kernel == name)
            .collect();
        let first = cus[0].1;
        x.push_str(&format!(
            "        <kernel name=\"{}\" language=\"{}\" vlnv=\"auroraforge:{}:{}:1.0\" preferredWorkGroupSizeMultiple=\"0\" workGroupSize=\"1\" interrupt=\"false\" hwControlProtocol=\"{}\">\n",
            escape(name),
            if first.kind == "hls" { "c" } else { "ip_c" },
            escape(&first.kind),
            escape(name),
            escape(first.control())
        ));
        for port in &first.ports {
            let (mode, port_type) = match port.kind.as_str() {
                "m_axi" => ("master", "addressable"),
                "axilite" => ("slave", "addressable"),
                "axis" if port.dir == "out" => ("write_only", "stream"),
                "axis" => ("read_only", "stream"),
                _ => continue,
            };
            x.push_str(&format!(
                "          <port name=\"{}\" mode=\"{mode}\" range=\"0x1000\" dataWidth=\"{}\" portType=\"{port_type}\" base=\"0x0\"/>\n",
                escape(&port.name),
                port.width
            ));
        }
        // The kernel's signature, as v++ records it and XRT binds `xrtRunSetArg` by.
        for arg in first.args() {
            let (qualifier, size, ty) = match arg.kind.as_str() {
                "memory" => ("1", 8, "void*".to_string()),
                "stream" => ("4", 4, "stream<ap_axiu<512,0,0,0>>&".to_string()),
                _ if arg.size == 8 => ("0", 8, "unsigned long".to_string()),
                _ => ("0", arg.size.max(1), "unsigned int".to_string()),
            };
            x.push_str(&format!(
                "          <arg name=\"{}\" addressQualifier=\"{qualifier}\" id=\"{}\" port=\"{}\" size=\"0x{size:x}\" offset=\"0x{:x}\" hostOffset=\"0x0\" hostSize=\"0x{size:x}\" type=\"{}\"/>\n",
                escape(&arg.name),
                arg.index,
                escape(&arg.port),
                arg.offset,
                escape(&ty)
            ));
        }
        for (index, cu) in cus {
            x.push_str(&format!(
                "          <instance name=\"{}\">\n",
                escape(&cu.cu)
            ));
            x.push_str(&format!(
                "            <addrRemap base=\"0x{:x}\" range=\"0x10000\" port=\"s_axi_control\"/>\n",
                cu_base(index)
            ));
            x.push_str("          </instance>\n");
        }
        x.push_str("        </kernel>\n");
    }
    x.push_str("      </core>\n    </device>\n  </platform>\n</project>\n");
    x
}
