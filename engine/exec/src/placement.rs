//! Where a run action executes when the execution platform has `remote_enabled`: buck2's
//! rules (`local_only` stays local; `prefer_local` too while `local_enabled`), plus one of
//! forge's own. An action that names a `[forge] sandbox_passthrough` path (a Python venv, the
//! cargo target dir, node modules) reads what is not among its declared inputs, which only
//! this machine has: a worker gets the declared inputs alone, so such an action runs here.

use forge_core::{Action, ActionKind};

use crate::RemoteExecPolicy;

#[derive(Debug, PartialEq, Eq)]
pub enum Placement {
    Remote,
    Local,
    /// The action must run locally but the platform has `local_enabled = False`; the text
    /// says why it must.
    Nowhere(String),
}

/// Where `action` runs under `policy` (`None`: remote execution off, everything local).
pub fn place(
    action: &Action,
    policy: Option<&RemoteExecPolicy>,
    passthrough: &[String],
    root: &str,
) -> Placement {
    let Some(policy) = policy else {
        return Placement::Local;
    };
    let ActionKind::Run {
        argv,
        env,
        local_only,
        prefer_local,
        ..
    } = &action.kind
    else {
        return Placement::Local;
    };
    let must_be_local = if *local_only {
        Some("The action is `local_only = True`".to_string())
    } else {
        named_passthrough(argv, env, passthrough, root).map(|p| {
            format!(
                "The action's command names `{p}`, a `[forge] sandbox_passthrough` path that is \
                 not among its inputs (a worker would not have it)"
            )
        })
    };
    match must_be_local {
        None if *prefer_local && policy.local_enabled => Placement::Local,
        None => Placement::Remote,
        Some(_) if policy.local_enabled => Placement::Local,
        Some(why) => Placement::Nowhere(format!(
            "{why}, but the execution platform's CommandExecutorConfig has `local_enabled = \
             False`: it cannot run anywhere. Set `local_enabled = True` on the platform \
             (actions still go remote unless they must run locally or are `prefer_local`), \
             or drop what keeps it local."
        )),
    }
}

/// The first passthrough path a word of the command line or an environment value names: the
/// word (or a part of it after `=`, `:` or `,`, or a word of a `sh -c` script) is the path or
/// lies under it: project-relative, under the project root `root`, or absolute as configured.
fn named_passthrough<'p>(
    argv: &[String],
    env: &[(String, String)],
    passthrough: &'p [String],
    root: &str,
) -> Option<&'p str> {
    let paths: Vec<(&str, String)> = passthrough
        .iter()
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            let mut forms = vec![(p, p.to_string())];
            if !p.starts_with('/') {
                forms.push((p, format!("{}/{p}", root.trim_end_matches('/'))));
            }
            forms
        })
        .collect();
    argv.iter()
        .chain(env.iter().map(|(_, v)| v))
        .flat_map(|w| w.split(|c: char| c.is_whitespace() || matches!(c, '=' | ':' | ',')))
        .map(|w| w.trim_matches(|c| matches!(c, '"' | '\'')))
        .map(|w| w.strip_prefix("./").unwrap_or(w))
        .find_map(|w| {
            paths.iter().find_map(|(name, form)| {
                (w == form || w.starts_with(&format!("{form}/"))).then_some(*name)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(argv: &[&str]) -> Option<String> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        let pass = vec![
            ".venv".to_string(),
            "target".to_string(),
            "/opt/tools".to_string(),
        ];
        named_passthrough(&argv, &[], &pass, "/srv/checkout").map(str::to_string)
    }

    #[test]
    fn a_venv_interpreter_is_named() {
        assert_eq!(
            names(&[".venv/finn/bin/python", "-m", "x"]).as_deref(),
            Some(".venv")
        );
        assert_eq!(
            names(&["sh", "-c", "exec ./.venv/x/bin/python run.py"]).as_deref(),
            Some(".venv")
        );
        assert_eq!(
            names(&["tool", "--python=/srv/checkout/.venv/x/bin/python"]).as_deref(),
            Some(".venv")
        );
        assert_eq!(
            names(&["cargo", "--target-dir", "target"]).as_deref(),
            Some("target")
        );
        assert_eq!(names(&["/opt/tools/bin/x"]).as_deref(), Some("/opt/tools"));
    }

    #[test]
    fn other_paths_are_not() {
        assert_eq!(
            names(&["buck-out/forge/art/x/targets.txt", "venvish", ".venv2/x"]),
            None
        );
        assert_eq!(names(&["/usr/bin/python3", "retarget/x"]), None);
        // another checkout's venv, and a package of the project that happens to be named so
        assert_eq!(
            names(&["/srv/other/.venv/bin/python", "hw/target/x.sv"]),
            None
        );
    }
}
