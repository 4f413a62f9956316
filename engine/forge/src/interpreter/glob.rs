//! `glob(include, exclude=[])` with buck2's semantics: package-relative, sorted by bytes,
//! case-insensitive, no dot files, files of nested packages and paths `[project] ignore`
//! names excluded.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

fn compile(patterns: &[String]) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        if p.starts_with('/') || p.split('/').any(|s| s == "..") {
            bail!("glob pattern `{p}` must be relative to the package and stay inside it");
        }
        let g = GlobBuilder::new(p)
            .case_insensitive(true)
            .literal_separator(true)
            .build()
            .map_err(|e| anyhow!("Invalid glob pattern `{p}`: {e}"))?;
        b.add(g);
    }
    Ok(b.build()?)
}

/// Files under `package_dir` matching `include` but not `exclude`. Directories holding one of
/// `buildfiles` (nested packages) and `skip_dirs` (package-relative, e.g. other cells) are
/// not entered; a file or directory for whose package-relative path `ignored` holds is
/// neither listed nor entered (buck2 does not see `[project] ignore`'s paths at all).
pub fn glob(
    package_dir: &Path,
    include: &[String],
    exclude: &[String],
    buildfiles: &[String],
    skip_dirs: &[String],
    ignored: &dyn Fn(&str) -> bool,
) -> Result<Vec<String>> {
    let inc = compile(include)?;
    let exc = compile(exclude)?;
    let mut out = Vec::new();
    if include.is_empty() || !package_dir.is_dir() {
        return Ok(out);
    }
    let walker = walkdir::WalkDir::new(package_dir)
        .follow_links(true)
        .into_iter();
    let walker = walker.filter_entry(|e| {
        if e.depth() == 0 {
            return true;
        }
        let name = e.file_name().to_string_lossy();
        if name.starts_with('.') {
            return false;
        }
        let rel = e.path().strip_prefix(package_dir).unwrap_or(e.path());
        let rel = rel.to_string_lossy();
        if ignored(&rel) {
            return false;
        }
        if e.file_type().is_dir() {
            if skip_dirs.iter().any(|d| *d == rel) {
                return false;
            }
            if buildfiles.iter().any(|b| e.path().join(b).is_file()) {
                return false;
            }
        }
        true
    });
    for entry in walker {
        let entry = entry?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(package_dir)?
            .to_string_lossy()
            .into_owned();
        if inc.is_match(&rel) && !exc.is_match(&rel) {
            out.push(rel);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// The facts recorded from upstream buck2 (O6; conformance/glob shows them under buck2).
    #[test]
    fn matches_buck2_observed_glob() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        for f in [
            "10.txt",
            "9.txt",
            "UPPER.TXT",
            "Z.txt",
            "a.txt",
            ".hidden.txt",
            "sub/x.txt",
            "sub/deep/y.txt",
            ".dotdir/z.txt",
            "nested/BUCK",
            "nested/n.txt",
            "b.md",
        ] {
            let path = p.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let bf = s(&["BUCK.v2", "BUCK"]);
        let top = glob(p, &s(&["*.txt"]), &[], &bf, &[], &|_| false).unwrap();
        assert_eq!(top, s(&["10.txt", "9.txt", "UPPER.TXT", "Z.txt", "a.txt"]));
        let all = glob(p, &s(&["**/*.txt"]), &[], &bf, &[], &|_| false).unwrap();
        assert_eq!(
            all,
            s(&[
                "10.txt",
                "9.txt",
                "UPPER.TXT",
                "Z.txt",
                "a.txt",
                "sub/deep/y.txt",
                "sub/x.txt"
            ])
        );
        let ex = glob(
            p,
            &s(&["**/*.txt", "*.md"]),
            &s(&["sub/**"]),
            &bf,
            &[],
            &|_| false,
        )
        .unwrap();
        assert_eq!(
            ex,
            s(&["10.txt", "9.txt", "UPPER.TXT", "Z.txt", "a.txt", "b.md"])
        );
        assert!(glob(p, &s(&["*.none"]), &[], &bf, &[], &|_| false)
            .unwrap()
            .is_empty());
        assert_eq!(
            glob(p, &s(&["sub/**/y.txt"]), &[], &bf, &[], &|_| false).unwrap(),
            s(&["sub/deep/y.txt"])
        );
        // `[project] ignore` (conformance/glob under buck2): an ignored directory's files
        // and an ignored file are not listed, its siblings are
        let ignored = |rel: &str| rel == "sub/deep" || rel == "Z.txt";
        assert_eq!(
            glob(p, &s(&["**/*.txt"]), &[], &bf, &[], &ignored).unwrap(),
            s(&["10.txt", "9.txt", "UPPER.TXT", "a.txt", "sub/x.txt"])
        );
    }
}
