//! `.buckconfig` files: buck2's INI dialect, includes, `$(config s.k)` expansion and the
//! `-c section.key=value` overrides.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

/// Merged configuration: section -> key -> raw (unexpanded) value.
#[derive(Clone, Debug, Default)]
pub struct BuckConfig {
    sections: BTreeMap<String, BTreeMap<String, String>>,
}

/// One `-c section.key=value` override; `value == None` unsets the key.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigOverride {
    pub section: String,
    pub key: String,
    pub value: Option<String>,
}

impl ConfigOverride {
    /// Parses the argument of `-c`/`--config`.
    pub fn parse(arg: &str) -> Result<ConfigOverride> {
        let (name, value) = arg.split_once('=').ok_or_else(|| {
            anyhow!(
                "Invalid `-c {arg}`: Could not find equals sign (`=`) in pair `{arg}`; \
                 expected `section.key=value`"
            )
        })?;
        // `cell//section.key=value` applies to one cell in buck2; forge shares one config.
        let name = name
            .rsplit_once("//")
            .map(|(_, n)| n)
            .unwrap_or(name)
            .trim();
        let (section, key) = name.split_once('.').ok_or_else(|| {
            anyhow!(
                "Invalid `-c {arg}`: Could not find section separator (`.`) in pair `{name}`; \
                 expected `section.key=value`"
            )
        })?;
        if section.is_empty() || key.is_empty() {
            bail!("Invalid `-c {arg}`: expected `section.key=value` (empty section or key)");
        }
        let value = value.trim();
        Ok(ConfigOverride {
            section: section.to_owned(),
            key: key.to_owned(),
            value: (!value.is_empty()).then(|| value.to_owned()),
        })
    }
}

impl BuckConfig {
    /// Reads `file` (if it exists) into this config; later files override earlier keys.
    pub fn merge_file(&mut self, file: &Path, required: bool) -> Result<()> {
        if !file.exists() {
            if required {
                bail!("Config file not found: {}", file.display());
            }
            return Ok(());
        }
        let mut stack = Vec::new();
        self.parse_into(file, &mut stack)
    }

    /// Parses `text` as if it were the file `origin` (used by tests and includes).
    pub fn merge_text(&mut self, text: &str, origin: &Path) -> Result<()> {
        let mut stack = vec![origin.to_path_buf()];
        self.parse_text(text, origin, &mut stack)
    }

    fn parse_into(&mut self, file: &Path, stack: &mut Vec<std::path::PathBuf>) -> Result<()> {
        let canon = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
        if stack.contains(&canon) {
            bail!("Config include cycle through {}", file.display());
        }
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("Reading config file {}", file.display()))?;
        stack.push(canon);
        let r = self.parse_text(&text, file, stack);
        stack.pop();
        r
    }

    fn parse_text(
        &mut self,
        text: &str,
        origin: &Path,
        stack: &mut Vec<std::path::PathBuf>,
    ) -> Result<()> {
        let mut section: Option<String> = None;
        let mut lines = text.lines().enumerate().peekable();
        while let Some((idx, raw)) = lines.next() {
            let line = raw.trim();
            let at = || format!("{}:{}", origin.display(), idx + 1);
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('<') {
                let (optional, rest) = match rest.strip_prefix('?') {
                    Some(r) => (true, r),
                    None => (false, rest),
                };
                let inner = rest
                    .strip_prefix("file:")
                    .and_then(|r| r.strip_suffix('>'))
                    .ok_or_else(|| anyhow!("{}: malformed include `{line}`", at()))?;
                let target = origin.parent().unwrap_or(Path::new(".")).join(inner.trim());
                if !target.exists() {
                    if optional {
                        continue;
                    }
                    bail!(
                        "{}: included config file not found: {}",
                        at(),
                        target.display()
                    );
                }
                self.parse_into(&target, stack)
                    .with_context(|| format!("Included from {}", at()))?;
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| anyhow!("{}: malformed section header `{line}`", at()))?
                    .trim();
                if name.is_empty() {
                    bail!("{}: empty section name", at());
                }
                section = Some(name.to_owned());
                self.sections.entry(name.to_owned()).or_default();
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| anyhow!("{}: expected `key = value`, got `{line}`", at()))?;
            let sec = section
                .clone()
                .ok_or_else(|| anyhow!("{}: `{}` is outside of any [section]", at(), key.trim()))?;
            let mut value = value.trim().to_owned();
            // A trailing backslash continues the value on the next line.
            while value.ends_with('\\') {
                value.pop();
                match lines.next() {
                    Some((_, next)) => {
                        value = value.trim_end().to_owned();
                        value.push(' ');
                        value.push_str(next.trim());
                    }
                    None => break,
                }
            }
            self.sections
                .entry(sec)
                .or_default()
                .insert(key.trim().to_owned(), value.trim().to_owned());
        }
        Ok(())
    }

    pub fn apply(&mut self, o: &ConfigOverride) {
        match &o.value {
            Some(v) => {
                self.sections
                    .entry(o.section.clone())
                    .or_default()
                    .insert(o.key.clone(), v.clone());
            }
            None => {
                if let Some(s) = self.sections.get_mut(&o.section) {
                    s.remove(&o.key);
                }
            }
        }
    }

    /// The value with `$(config s.k)` references expanded.
    pub fn get(&self, section: &str, key: &str) -> Result<Option<String>> {
        let mut seen = Vec::new();
        self.get_expanded(section, key, &mut seen)
    }

    fn get_expanded(
        &self,
        section: &str,
        key: &str,
        seen: &mut Vec<String>,
    ) -> Result<Option<String>> {
        let Some(raw) = self.sections.get(section).and_then(|s| s.get(key)) else {
            return Ok(None);
        };
        let me = format!("{section}.{key}");
        if seen.contains(&me) {
            bail!(
                "Cycle in buckconfig `$(config ...)` references: {} -> {me}",
                seen.join(" -> ")
            );
        }
        seen.push(me);
        let mut out = String::new();
        let mut rest = raw.as_str();
        while let Some(pos) = rest.find("$(config ") {
            out.push_str(&rest[..pos]);
            let after = &rest[pos + "$(config ".len()..];
            let end = after
                .find(')')
                .ok_or_else(|| anyhow!("Unterminated `$(config` in `{section}.{key}`"))?;
            let reference = after[..end].trim();
            let (s, k) = reference.split_once('.').ok_or_else(|| {
                anyhow!("Bad `$(config {reference})` in `{section}.{key}`: expected section.key")
            })?;
            out.push_str(&self.get_expanded(s, k, seen)?.unwrap_or_default());
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        seen.pop();
        Ok(Some(out))
    }

    /// All keys of one section, expanded.
    pub fn section(&self, section: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        if let Some(s) = self.sections.get(section) {
            for k in s.keys() {
                if let Ok(Some(v)) = self.get(section, k) {
                    out.insert(k.clone(), v);
                }
            }
        }
        out
    }

    pub fn has_section(&self, section: &str) -> bool {
        self.sections.contains_key(section)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> BuckConfig {
        let mut c = BuckConfig::default();
        c.merge_text(text, Path::new(".buckconfig")).unwrap();
        c
    }

    #[test]
    fn values_keep_inner_whitespace_and_semicolons() {
        let c = parse("[s]\n  k = a b  c\n  semi = x ; not a comment\n# c\n; c\n[S]\n k = upper\n");
        assert_eq!(c.get("s", "k").unwrap().as_deref(), Some("a b  c"));
        assert_eq!(
            c.get("s", "semi").unwrap().as_deref(),
            Some("x ; not a comment")
        );
        // Sections are case-sensitive.
        assert_eq!(c.get("S", "k").unwrap().as_deref(), Some("upper"));
        assert_eq!(c.get("s", "K").unwrap(), None);
    }

    #[test]
    fn config_references_expand() {
        let c = parse("[a]\n x = 42\n y = v=$(config a.x)!\n");
        assert_eq!(c.get("a", "y").unwrap().as_deref(), Some("v=42!"));
        let c = parse("[a]\n x = $(config a.y)\n y = $(config a.x)\n");
        assert!(c.get("a", "x").is_err());
    }

    #[test]
    fn overrides_set_and_unset() {
        let mut c = parse("[s]\n k = file\n");
        c.apply(&ConfigOverride::parse("s.k=cli").unwrap());
        assert_eq!(c.get("s", "k").unwrap().as_deref(), Some("cli"));
        c.apply(&ConfigOverride::parse("s.k=").unwrap());
        assert_eq!(c.get("s", "k").unwrap(), None);
    }

    #[test]
    fn malformed_overrides_name_the_argument() {
        let e = ConfigOverride::parse("nodot=1").unwrap_err().to_string();
        assert!(e.contains("nodot=1"), "{e}");
        let e = ConfigOverride::parse("s.k").unwrap_err().to_string();
        assert!(e.contains("s.k"), "{e}");
    }

    #[test]
    fn includes_are_relative_and_optional_ones_may_be_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("extra.ini"), "[inc]\n k = included\n").unwrap();
        let main = dir.path().join(".buckconfig");
        std::fs::write(&main, "<file:extra.ini>\n<?file:absent.ini>\n[s]\n k = v\n").unwrap();
        let mut c = BuckConfig::default();
        c.merge_file(&main, true).unwrap();
        assert_eq!(c.get("inc", "k").unwrap().as_deref(), Some("included"));
        std::fs::write(&main, "<file:absent.ini>\n").unwrap();
        let mut c = BuckConfig::default();
        assert!(c.merge_file(&main, true).is_err());
    }
}
