//! `infer --labels FILE`: the true class of every input image, and the top-1 / top-5
//! accuracy of the multi-card pipeline and of the unpartitioned model against them (beside
//! their agreement with each other, which `infer` reports anyway).

use std::path::Path;

use anyhow::{bail, Context, Result};
use finn_exec::npy;

/// The .npy element types a labels file may have: integers only (a float file is most
/// likely scores or images given by mistake).
const INTEGER_DESCRS: &[&str] = &[
    "|u1", "<u1", "|i1", "<i1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8",
];

/// Reads `path`: one integer class per image, shape [N] or [N, 1], N = `images` (the
/// images of --input the run takes).
pub fn read(path: &Path, images: usize, input_images: usize) -> Result<Vec<i64>> {
    let shown = path.display();
    let a = npy::read(path).with_context(|| format!("--labels {shown}"))?;
    if !INTEGER_DESCRS.contains(&a.descr.as_str()) {
        bail!(
            "--labels {shown}: dtype {} is not an integer type; the labels are one class index per image (e.g. int64, as np.save of sklearn's targets writes)",
            a.descr
        );
    }
    let n = match a.shape.as_slice() {
        [n] | [n, 1] => *n,
        s => bail!("--labels {shown}: shape {s:?}; expected [N] or [N, 1], one class per image"),
    };
    if n != input_images {
        bail!(
            "--labels {shown}: {n} labels for the {input_images} images of --input; give one label per image, in the same order"
        );
    }
    let mut out = Vec::with_capacity(images);
    for (i, &v) in a.values.iter().take(images).enumerate() {
        if v < 0.0 || v.fract() != 0.0 || v > i64::MAX as f64 {
            bail!("--labels {shown}: label {i} is {v}; a class index is a non-negative integer");
        }
        out.push(v as i64);
    }
    Ok(out)
}

// run.json's `accuracy`, stated once: the run report reads what this writes.
pub use run_report::run::{RunAccuracy as Accuracy, RunHits as Hits};

fn add(h: &mut Hits, top5: &[i64], label: i64) {
    h.top1 += (top5.first() == Some(&label)) as u64;
    h.top5 += top5.contains(&label) as u64;
}

/// From each image's top-5 of the pipeline and of the reference, and its label.
pub fn accuracy<'a>(
    labels_file: &Path,
    frames: impl Iterator<Item = (&'a [i64], &'a [i64])>,
    labels: &[i64],
) -> Accuracy {
    let mut a = Accuracy {
        labels: labels_file.display().to_string(),
        images: labels.len() as u64,
        pipeline: Hits::default(),
        unpartitioned: Hits::default(),
    };
    for ((got, want), &label) in frames.zip(labels) {
        add(&mut a.pipeline, got, label);
        add(&mut a.unpartitioned, want, label);
    }
    a
}

/// The summary's lines (top-k of each model, in percent and as counts).
pub fn text(a: &Accuracy) -> String {
    let n = a.images;
    let pct = |k: u64| 100.0 * k as f64 / n.max(1) as f64;
    let line = |who: &str, h: &Hits| {
        format!(
            "accuracy against {} ({who}): top-1 {:.2} % ({}/{n}), top-5 {:.2} % ({}/{n})\n",
            a.labels,
            pct(h.top1),
            h.top1,
            pct(h.top5),
            h.top5
        )
    };
    line("multi-card pipeline", &a.pipeline) + &line("unpartitioned model", &a.unpartitioned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy_file(
        dir: &Path,
        name: &str,
        descr: &str,
        shape: &str,
        data: &[u8],
    ) -> std::path::PathBuf {
        // NumPy's format 1.0 (numpy.lib.format): magic, version, header length, header
        // padded so that the data starts at a multiple of 64.
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn reads_integer_labels_and_refuses_wrong_dtype_or_length() {
        let d = tempfile::tempdir().unwrap();
        let ints: Vec<u8> = [3i64, 0, 9].iter().flat_map(|v| v.to_le_bytes()).collect();
        let ok = npy_file(d.path(), "ok.npy", "<i8", "(3,)", &ints);
        assert_eq!(read(&ok, 2, 3).unwrap(), vec![3, 0]);
        let e = format!("{:#}", read(&ok, 4, 4).unwrap_err());
        assert!(
            e.contains("ok.npy") && e.contains("3 labels for the 4 images"),
            "{e}"
        );
        let floats: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let f = npy_file(d.path(), "f.npy", "<f4", "(2,)", &floats);
        let e = format!("{:#}", read(&f, 2, 2).unwrap_err());
        assert!(
            e.contains("f.npy") && e.contains("<f4 is not an integer"),
            "{e}"
        );
        let two_d = npy_file(d.path(), "m.npy", "|u1", "(1, 2)", &[1, 2]);
        let e = format!("{:#}", read(&two_d, 1, 1).unwrap_err());
        assert!(e.contains("m.npy") && e.contains("shape [1, 2]"), "{e}");
        let neg: Vec<u8> = [-1i32].iter().flat_map(|v| v.to_le_bytes()).collect();
        let n = npy_file(d.path(), "n.npy", "<i4", "(1,)", &neg);
        assert!(format!("{:#}", read(&n, 1, 1).unwrap_err()).contains("label 0 is -1"));
    }

    #[test]
    fn counts_top1_and_top5_hits_of_both_models() {
        let got: [&[i64]; 3] = [&[1, 2, 3, 4, 5], &[0, 9, 8, 7, 6], &[4, 3, 2, 1, 0]];
        let want: [&[i64]; 3] = [&[1, 2, 3, 4, 5], &[9, 0, 8, 7, 6], &[4, 3, 2, 1, 0]];
        let a = accuracy(Path::new("l.npy"), got.into_iter().zip(want), &[1, 9, 7]);
        assert_eq!(a.pipeline, Hits { top1: 1, top5: 2 });
        assert_eq!(a.unpartitioned, Hits { top1: 2, top5: 2 });
        assert!(
            text(&a).contains("(multi-card pipeline): top-1 33.33 % (1/3), top-5 66.67 % (2/3)")
        );
    }
}
