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

pub fn embedded_metadata(d: &DeviceDescription) -> String {
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
        "  <platform vendor=\"xilinx\" boardid=\"u280\" name=\"{}\" featureRomTime=\"0\">\n",
        escape(&d.platform)
    ));
    x.push_str("    <version major=\"1\" minor=\"0\"/>\n");
    x.push_str(&format!(
        "    <device name=\"{}\" fpgaDevice=\"xcu280\" addrWidth=\"0\">\n",
        escape(&d.device)
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
                "axis" if port.dir.as_deref() == Some("out") => ("write_only", "stream"),
                "axis" => ("read_only", "stream"),
                _ => continue,
            };
            x.push_str(&format!(
                "          <port name=\"{}\" mode=\"{mode}\" range=\"0x1000\" dataWidth=\"{}\" portType=\"{port_type}\" base=\"0x0\"/>\n",
                escape(&port.name),
                port.width
            ));
        }
        for (index, arg) in first
            .ports
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind != "clock" && p.kind != "axilite")
        {
            let (qualifier, size, ty) = match arg.kind.as_str() {
                "m_axi" => ("1", "0x8", "void*"),
                "axis" => ("4", "0x4", "stream<ap_axiu<512,0,0,0>>&"),
                _ => ("0", "0x4", "unsigned int"),
            };
            x.push_str(&format!(
                "          <arg name=\"{}\" addressQualifier=\"{qualifier}\" id=\"{index}\" port=\"{}\" size=\"{size}\" offset=\"0x{:x}\" hostOffset=\"0x0\" hostSize=\"{size}\" type=\"{}\"/>\n",
                escape(&arg.name),
                escape(&arg.name),
                0x10 + 8 * index,
                escape(ty)
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
