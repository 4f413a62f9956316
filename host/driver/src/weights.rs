//! Whether the network's weights are trained, from the model's own record: a trained
//! model carries how it was trained as ONNX metadata (`auroraforge.training`, written by
//! finn/digits/train.py and exported into graph.json by finn/flow/export_exec.py); the
//! networks `finn_model` generates have seeded random weights and no such record.

use std::path::Path;

use anyhow::{Context, Result};

/// The metadata key of a trained model's record.
pub const TRAINING_PROP: &str = "auroraforge.training";

/// The training record of the exported model at `dir` (its graph.json), if any.
pub fn training_record(dir: &Path) -> Result<Option<String>> {
    let path = dir.join("graph.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    Ok(v["metadata"][TRAINING_PROP].as_str().map(str::to_string))
}

/// The summary's line about the weights.
pub fn line(record: Option<&str>) -> String {
    match record {
        Some(r) => format!("weights: trained ({r})\n"),
        None => "weights: untrained (seeded random, as finn_model generates them; the model records no training): its classes mean nothing, the top-1 / top-5 above are agreement with the unpartitioned model, not accuracy\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_record_or_says_untrained() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("graph.json"), r#"{"name": "x"}"#).unwrap();
        assert_eq!(training_record(d.path()).unwrap(), None);
        assert!(line(None).starts_with("weights: untrained"));
        std::fs::write(
            d.path().join("graph.json"),
            r#"{"metadata": {"auroraforge.training": "on digits"}}"#,
        )
        .unwrap();
        let r = training_record(d.path()).unwrap();
        assert_eq!(r.as_deref(), Some("on digits"));
        assert_eq!(line(r.as_deref()), "weights: trained (on digits)\n");
    }
}
