//! Which cluster the workers' job is for: `--cluster NAME` among the cluster files the rule
//! passes (`--cluster-file`, every toolchains/clusters/<name>.toml), or `--cluster FILE`, a
//! site's file of the user's own. Read by the one reader of cluster files (cluster_file).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use cluster_file::Cluster;

/// The cluster `choice` names: a known file's stem, else a path to a cluster file.
pub fn resolve(choice: &str, known: &[PathBuf]) -> Result<Cluster> {
    let stem = |p: &PathBuf| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    if let Some(file) = known.iter().find(|p| stem(p).as_deref() == Some(choice)) {
        return Cluster::read(file);
    }
    if choice.ends_with(".toml") || choice.contains('/') {
        return Cluster::read(Path::new(choice));
    }
    let names: Vec<String> = known.iter().filter_map(stem).collect();
    bail!(
        "--cluster {choice}: no such cluster (the clusters: {}); give one of them or the path \
         of a cluster file (toolchains/clusters/README.md: adding your site)",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The project's cluster files, as the rule passes them (tests run from remote/workers_job).
    fn known() -> Vec<PathBuf> {
        ["noctua2", "local"]
            .iter()
            .map(|n| PathBuf::from(format!("../../toolchains/clusters/{n}.toml")))
            .collect()
    }

    #[test]
    fn a_name_a_path_or_a_clear_error() {
        assert_eq!(resolve("local", &known()).unwrap().name, "local");
        let by_path = resolve("../../toolchains/clusters/noctua2.toml", &[]).unwrap();
        assert_eq!(by_path.workers.qos.as_deref(), Some("fpgasynthesis"));
        let e = format!("{:#}", resolve("noctua3", &known()).unwrap_err());
        assert!(e.contains("the clusters: noctua2, local"), "{e}");
    }
}
