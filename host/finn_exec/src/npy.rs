//! Reading and writing NumPy `.npy` files (format version 1/2/3, little-endian, C order):
//! the exchange format with FINN's Python execution.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

pub struct Array {
    /// The element type as NumPy writes it (`<f4`, `|u1`, ...).
    pub descr: String,
    pub shape: Vec<usize>,
    /// Every element as f64 (exact for the float32 and 32-bit integer data exchanged).
    pub values: Vec<f64>,
}

impl Array {
    /// The values as i32, failing on a non-integer or out-of-range value.
    pub fn integers(&self, what: &str) -> Result<Vec<i32>> {
        self.values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                if v.fract() == 0.0 && v >= i32::MIN as f64 && v <= i32::MAX as f64 {
                    Ok(v as i32)
                } else {
                    Err(anyhow!("{what}: element {i} = {v} is not a 32-bit integer"))
                }
            })
            .collect()
    }
}

fn header_field<'a>(header: &'a str, key: &str) -> Result<&'a str> {
    let k = format!("'{key}':");
    let at = header
        .find(&k)
        .ok_or_else(|| anyhow!("header has no {key}"))?;
    Ok(header[at + k.len()..].trim_start())
}

pub fn read(path: &Path) -> Result<Array> {
    let bytes = fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&bytes)
        .with_context(|| format!("{}: not a .npy file this reader supports", path.display()))
}

pub fn parse(bytes: &[u8]) -> Result<Array> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        bail!("missing the NumPy magic");
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                bail!("truncated header");
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => bail!("format version {v}"),
    };
    let header = std::str::from_utf8(
        bytes
            .get(start..start + hlen)
            .ok_or_else(|| anyhow!("truncated header"))?,
    )?;
    let descr = header_field(header, "descr")?;
    let descr = descr.trim_start_matches('\'');
    let descr = &descr[..descr.find('\'').ok_or_else(|| anyhow!("bad descr"))?];
    if header_field(header, "fortran_order")?.starts_with("True") {
        bail!("Fortran order is not supported");
    }
    let shape_s = header_field(header, "shape")?;
    let shape_s = &shape_s[1..shape_s.find(')').ok_or_else(|| anyhow!("bad shape"))?];
    let shape: Vec<usize> = shape_s
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let n: usize = shape.iter().product();
    let data = &bytes[start + hlen..];
    macro_rules! take {
        ($t:ty, $w:expr) => {{
            if data.len() < n * $w {
                bail!(
                    "{} data bytes, {n} elements of {} need {}",
                    data.len(),
                    descr,
                    n * $w
                );
            }
            data[..n * $w]
                .chunks_exact($w)
                .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()) as f64)
                .collect()
        }};
    }
    let values: Vec<f64> = match descr {
        "<f4" => take!(f32, 4),
        "<f8" => take!(f64, 8),
        "|u1" | "<u1" => take!(u8, 1),
        "|i1" | "<i1" => take!(i8, 1),
        "<i2" => take!(i16, 2),
        "<u2" => take!(u16, 2),
        "<i4" => take!(i32, 4),
        "<u4" => take!(u32, 4),
        "<i8" => take!(i64, 8),
        other => bail!("element type {other} (supported: <f4 <f8 |u1 |i1 <i2 <u2 <i4 <u4 <i8)"),
    };
    Ok(Array {
        descr: descr.to_string(),
        shape,
        values,
    })
}

/// Writes int64 values as a `.npy` file, atomically (temp file, then rename).
pub fn write_i64(path: &Path, shape: &[usize], values: &[i64]) -> Result<()> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_s = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<i8', 'fortran_order': False, 'shape': {shape_s}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut buf = Vec::with_capacity(10 + header.len() + 8 * values.len());
    buf.extend_from_slice(b"\x93NUMPY\x01\x00");
    buf.extend_from_slice(&(header.len() as u16).to_le_bytes());
    buf.extend_from_slice(header.as_bytes());
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    write_atomic(path, &buf)
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("out"),
        std::process::id()
    ));
    let mut f =
        fs::File::create(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("{}: cannot write", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("{}: cannot rename into place", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_i64() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.npy");
        write_i64(&p, &[2, 3], &[1, -2, 3, 4, 5, -6]).unwrap();
        let a = read(&p).unwrap();
        assert_eq!(a.shape, vec![2, 3]);
        assert_eq!(a.integers("a").unwrap(), vec![1, -2, 3, 4, 5, -6]);
    }

    #[test]
    fn rejects_non_npy() {
        assert!(parse(b"not a numpy file at all").is_err());
    }
}
