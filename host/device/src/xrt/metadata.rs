//! The kernels of an xclbin as XRT's own parser reads them (`xrt::xclbin` of
//! libxrt_coreutil 2.13, no card needed): memories by group index, CUs with their control
//! protocol, arguments with index, host type and size. Every kernel start is checked
//! against it and bound by its indices, as XRT binds `xrtRunSetArg`.

use std::collections::BTreeMap;
use std::ffi::{c_char, CString};
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::KernelArg;

extern "C" {
    fn af_xrt_xclbin_metadata(
        path: *const c_char,
        out: *mut c_char,
        out_len: usize,
        err: *mut c_char,
        len: usize,
    ) -> std::ffi::c_long;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgKind {
    /// A pointer into device memory (`void*`, `int*`, ...): an m_axi port.
    Global,
    /// An AXI4-Stream port: connected by the link configuration, never set by the host.
    Stream,
    /// A scalar of `size` bytes in the CU's register map.
    Scalar,
}

#[derive(Debug, Clone)]
pub struct Arg {
    pub index: u32,
    pub name: String,
    pub host_type: String,
    pub size: u32,
    /// Group indices of the memories this argument is connected to (CONNECTIVITY).
    pub mems: Vec<u32>,
}

impl Arg {
    pub fn kind(&self) -> ArgKind {
        if self.host_type.contains("stream") {
            ArgKind::Stream
        } else if self.host_type.trim_end().ends_with('*') {
            ArgKind::Global
        } else {
            ArgKind::Scalar
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cu {
    pub kernel: String,
    /// Memory groups by argument index: this CU's connections (CONNECTIVITY).
    pub mems: BTreeMap<u32, Vec<u32>>,
    /// "hs", "chain", "none" or "fa" (`xrt::xclbin::ip::control_type`).
    pub control: String,
    pub base_address: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// Memory tag by group index.
    pub mems: BTreeMap<u32, String>,
    pub cus: BTreeMap<String, Cu>,
    /// Arguments by kernel, in index order.
    pub args: BTreeMap<String, Vec<Arg>>,
}

/// One argument as the XRT call will set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Scalar {
        value: u64,
        size: u32,
    },
    /// The host driver's buffer and the memory group it must be in.
    Buffer(crate::BufferId),
}

impl Metadata {
    /// Reads `path` with XRT's parser, after our reader found it whole: XRT's parser
    /// reads past the end of a truncated file (a crash, not an error).
    pub fn read(path: &Path) -> Result<Metadata> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        xclbin::Xclbin::from_bytes(&path.display().to_string(), &bytes)?;
        let c = CString::new(path.to_str().context("xclbin path is not UTF-8")?)?;
        let mut err = [0 as c_char; 512];
        let need = unsafe {
            af_xrt_xclbin_metadata(
                c.as_ptr(),
                std::ptr::null_mut(),
                0,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if need < 0 {
            let e = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy();
            bail!("{}: XRT's xclbin parser refused it: {e}", path.display());
        }
        let mut out = vec![0 as c_char; need as usize + 1];
        unsafe {
            af_xrt_xclbin_metadata(
                c.as_ptr(),
                out.as_mut_ptr(),
                out.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        let text = unsafe { std::ffi::CStr::from_ptr(out.as_ptr()) }.to_string_lossy();
        Metadata::parse(&text).with_context(|| format!("{}: XRT's metadata", path.display()))
    }

    pub fn parse(text: &str) -> Result<Metadata> {
        let mut m = Metadata::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["mem", index, tag, _used] => {
                    m.mems.insert(index.parse()?, tag.to_string());
                }
                ["cu", kernel, cu, control, base] => {
                    // IP_LAYOUT names a CU `kernel:cu`.
                    let cu = cu.split_once(':').map_or(*cu, |(_, c)| c);
                    m.cus.insert(
                        cu.to_string(),
                        Cu {
                            kernel: kernel.to_string(),
                            mems: BTreeMap::new(),
                            control: control.to_string(),
                            base_address: base.parse()?,
                        },
                    );
                }
                ["cuarg", cu, index, mems] => {
                    let cu = cu.split_once(':').map_or(*cu, |(_, c)| c);
                    let groups = mems
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(|s| s.parse())
                        .collect::<Result<Vec<u32>, _>>()?;
                    m.cus
                        .get_mut(cu)
                        .with_context(|| format!("argument of unknown CU {cu}"))?
                        .mems
                        .insert(index.parse()?, groups);
                }
                ["arg", kernel, index, name, host_type, size, _offset, mems] => {
                    m.args.entry(kernel.to_string()).or_default().push(Arg {
                        index: index.parse()?,
                        name: name.to_string(),
                        host_type: host_type.to_string(),
                        size: size.parse()?,
                        mems: mems
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(|s| s.parse())
                            .collect::<Result<_, _>>()?,
                    });
                }
                _ => bail!("unexpected line {line:?}"),
            }
        }
        for args in m.args.values_mut() {
            args.sort_by_key(|a| a.index);
        }
        Ok(m)
    }

    pub fn group_of(&self, bank: &str) -> Option<u32> {
        self.mems.iter().find(|(_, t)| *t == bank).map(|(i, _)| *i)
    }

    /// The host driver's named arguments for `cu` bound to the kernel's argument indices,
    /// checked against the metadata: every name known, given in index order, the kind of
    /// value the argument takes, scalars fitting their size, buffers in a memory the
    /// argument is connected to (`bank_of` gives a buffer's group), and every non-stream
    /// argument given.
    pub fn bind(
        &self,
        cu: &str,
        named: &[(String, KernelArg)],
        bank_of: impl Fn(crate::BufferId) -> Option<u32>,
    ) -> Result<Vec<(u32, Bound)>> {
        let info = self
            .cus
            .get(cu)
            .with_context(|| format!("CU {cu} is not in the xclbin's metadata (XRT)"))?;
        if info.control == "none" {
            bail!(
                "CU {cu} ({}) is free-running (ap_ctrl_none in the xclbin's metadata): it has no start",
                info.kernel
            );
        }
        let args = self.args.get(&info.kernel).map_or(&[][..], |a| &a[..]);
        let names = || {
            args.iter()
                .map(|a| format!("{} {}", a.host_type, a.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = Vec::new();
        let mut last: Option<u32> = None;
        for (name, value) in named {
            let a = args.iter().find(|a| a.name == *name).with_context(|| {
                format!(
                    "CU {cu}: kernel {} has no argument '{name}' (XRT reads: {})",
                    info.kernel,
                    names()
                )
            })?;
            if last.is_some_and(|l| a.index <= l) {
                bail!(
                    "CU {cu}: argument '{name}' (index {}) is given out of the kernel's argument order ({})",
                    a.index,
                    names()
                );
            }
            last = Some(a.index);
            let bound = match (a.kind(), value) {
                (ArgKind::Stream, KernelArg::Stream) => continue,
                (ArgKind::Scalar, KernelArg::Scalar(v)) => {
                    if a.size != 4 && a.size != 8 {
                        bail!(
                            "CU {cu}: scalar argument '{name}' is {} bytes ({}): only 4- and 8-byte scalars are set",
                            a.size,
                            a.host_type
                        );
                    }
                    if a.size == 4 && *v > u32::MAX as u64 {
                        bail!(
                            "CU {cu}: {v} does not fit argument '{name}' ({}, {} bytes)",
                            a.host_type,
                            a.size
                        );
                    }
                    Bound::Scalar {
                        value: *v,
                        size: a.size,
                    }
                }
                (ArgKind::Global, KernelArg::Buffer(b)) => {
                    let connected = info.mems.get(&a.index).filter(|m| !m.is_empty());
                    if let (Some(g), Some(mems)) = (bank_of(*b), connected) {
                        if !mems.contains(&g) {
                            let tag = |g: &u32| self.mems.get(g).cloned().unwrap_or_default();
                            bail!(
                                "CU {cu}: the buffer for '{name}' is in {}, but the xclbin connects '{name}' to {}",
                                tag(&g),
                                mems.iter().map(tag).collect::<Vec<_>>().join(", ")
                            );
                        }
                    }
                    Bound::Buffer(*b)
                }
                (kind, value) => bail!(
                    "CU {cu}: argument '{name}' is {kind:?} ({}) in the xclbin's metadata, given {value:?}",
                    a.host_type
                ),
            };
            out.push((a.index, bound));
        }
        for a in args.iter().filter(|a| a.kind() != ArgKind::Stream) {
            if !named.iter().any(|(n, _)| *n == a.name) {
                bail!(
                    "CU {cu}: argument '{}' ({}) is not given",
                    a.name,
                    a.host_type
                );
            }
        }
        Ok(out)
    }
}
