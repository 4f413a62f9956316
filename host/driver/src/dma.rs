//! The DMA calls of `infer`, one pipeline or many copies alike: an input DMA fed the packed
//! images from a buffer in its bank, an output DMA drained into one, the results unpacked
//! (hw/hls/dma_in.cpp, dma_out.cpp: `mem` and `size` in bytes).

use anyhow::Result;
use fpga_device::{BufferId, Device, KernelArg, RunId};
use xclbin::DeviceDescription;

use crate::finn_cu::WordLayout;
use crate::link_config::{bank, kernel_args};

/// DMA memory words are 512 bits; buffers are whole words.
pub(crate) const MEM_WORD: usize = 64;

/// An output DMA's buffer: where, how many bytes, and how its words unpack.
pub(crate) type OutBuffer = (BufferId, usize, WordLayout);

fn start(
    device: &mut dyn Device,
    d: &DeviceDescription,
    cu: &str,
    buf: BufferId,
    bytes: usize,
) -> Result<RunId> {
    let a = kernel_args(
        d,
        cu,
        &[
            ("mem", KernelArg::Buffer(buf)),
            ("size", KernelArg::Scalar(bytes as u64)),
        ],
        "infer",
        "the DMA ports: hw/hls/dma_in.cpp, dma_out.cpp",
    )?;
    device.start(cu, &a)
}

/// Starts output DMA `cu` on a buffer for `frames` results of `layout`.
pub(crate) fn drain(
    device: &mut dyn Device,
    d: &DeviceDescription,
    cu: &str,
    frames: usize,
    layout: WordLayout,
) -> Result<(RunId, OutBuffer)> {
    let bytes = frames * layout.frame_bytes();
    let buf = device.alloc(&bank(d, cu)?, bytes.div_ceil(MEM_WORD) * MEM_WORD)?;
    let run = start(device, d, cu, buf, bytes)?;
    Ok((run, (buf, bytes, layout)))
}

/// Writes `packed` (the images in the FINN CU's words) to a buffer and starts input DMA `cu`
/// on it.
pub(crate) fn feed(
    device: &mut dyn Device,
    d: &DeviceDescription,
    cu: &str,
    packed: &[u8],
) -> Result<RunId> {
    let buf = device.alloc(&bank(d, cu)?, packed.len().div_ceil(MEM_WORD) * MEM_WORD)?;
    device.write_buffer(buf, 0, packed)?;
    start(device, d, cu, buf, packed.len())
}

/// The values an output DMA wrote, frame after frame.
pub(crate) fn results(device: &mut dyn Device, out: &OutBuffer) -> Result<Vec<i64>> {
    let (buf, bytes, layout) = out;
    let mut raw = vec![0u8; *bytes];
    device.read_buffer(*buf, 0, &mut raw)?;
    Ok(raw
        .chunks(layout.frame_bytes())
        .flat_map(|f| layout.unpack(f))
        .collect())
}
