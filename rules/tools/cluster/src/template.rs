//! The two small templates of a cluster file's `[links]` table: how one cable end is named
//! (`n{node:02}:acl{card}:ch{port}` on Noctua 2) and how one cable is passed to the
//! link-switching command (`--fpgalink={a}-{b}`). Parsed when the file is read, so a typo
//! is an error naming the file's line, never a broken job script.

/// One `{field}` or `{field:0W}` (zero-padded to W digits), or text between them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Field { name: String, width: usize },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// Characters the rendered text may hold outside the fields: it is written unquoted into a
/// bash command line, so nothing a shell would read as syntax.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_=:,.-/+@%".contains(c)
}

impl Template {
    /// `text` with fields among `fields` (each must occur at least once); the error says what
    /// is wrong, the caller adds where.
    pub fn parse(text: &str, fields: &[&str]) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| format!("`{rest}`: a `{{` without its `}}`"))?;
                    pieces.push(field(&rest[1..end], fields)?);
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    let lit = &rest[..end];
                    if let Some(c) = lit.chars().find(|&c| !plain(c)) {
                        return Err(format!(
                            "{c:?} is not allowed (letters, digits, `_=:,.-/+@%` and the \
                             fields {})",
                            braced(fields)
                        ));
                    }
                    pieces.push(Piece::Text(lit.to_string()));
                    rest = &rest[end..];
                }
            }
        }
        for f in fields {
            if !pieces
                .iter()
                .any(|p| matches!(p, Piece::Field { name, .. } if name == f))
            {
                return Err(format!("the field {{{f}}} is missing"));
            }
        }
        Ok(Template { pieces })
    }

    /// The text with each field's value (`value(name)`; numbers zero-padded to the width).
    pub fn render(&self, value: &dyn Fn(&str) -> String) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Field { name, width } => format!("{:0>width$}", value(name)),
            })
            .collect()
    }
}

fn braced(fields: &[&str]) -> String {
    fields
        .iter()
        .map(|f| format!("{{{f}}}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `name` or `name:0W`.
fn field(inner: &str, fields: &[&str]) -> Result<Piece, String> {
    let (name, width) = match inner.split_once(':') {
        Some((n, w)) => {
            let digits = w.strip_prefix('0').filter(|d| !d.is_empty());
            let width = digits
                .and_then(|d| d.parse::<usize>().ok())
                .ok_or_else(|| {
                    format!("{{{inner}}}: the width is written `:0W`, e.g. {{{n}:02}}")
                })?;
            (n, width)
        }
        None => (inner, 0),
    };
    if !fields.contains(&name) {
        return Err(format!(
            "{{{inner}}} is not a field here (the fields: {})",
            braced(fields)
        ));
    }
    Ok(Piece::Field {
        name: name.to_string(),
        width,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_fields_with_zero_padding() {
        let t =
            Template::parse("n{node:02}:acl{card}:ch{port}", &["node", "card", "port"]).unwrap();
        let v = |f: &str| match f {
            "node" => "7".to_string(),
            "card" => "2".to_string(),
            _ => "1".to_string(),
        };
        // the PC2 wiki's own example endpoint: n07:acl2:ch1
        assert_eq!(t.render(&v), "n07:acl2:ch1");
    }

    #[test]
    fn refuses_unknown_and_missing_fields_and_shell_syntax() {
        let e = Template::parse("{a}-{c}", &["a", "b"]).unwrap_err();
        assert!(e.contains("{c} is not a field"), "{e}");
        let e = Template::parse("{a}", &["a", "b"]).unwrap_err();
        assert!(e.contains("{b} is missing"), "{e}");
        let e = Template::parse("{a};rm {b}", &["a", "b"]).unwrap_err();
        assert!(e.contains("';' is not allowed"), "{e}");
        let e = Template::parse("{a:2}{b}", &["a", "b"]).unwrap_err();
        assert!(e.contains(":0W"), "{e}");
        let e = Template::parse("{a", &["a"]).unwrap_err();
        assert!(e.contains("without its"), "{e}");
    }
}
