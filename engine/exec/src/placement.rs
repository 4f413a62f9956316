//! Where a run action executes when the execution platform has `remote_enabled`: buck2's
//! rules and nothing else (`local_only` stays local; `prefer_local` too while
//! `local_enabled`). An action whose tool lives in this machine's environment (a Python venv,
//! the cargo target dir) is `local_only` because its toolchain says so
//! (`FinnToolchainInfo.local_only`, `PythonToolchainInfo.local_only`, the cargo rules), not
//! because the engine reads its command line: the same actions stay local under buck2.

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
pub fn place(action: &Action, policy: Option<&RemoteExecPolicy>) -> Placement {
    let Some(policy) = policy else {
        return Placement::Local;
    };
    let ActionKind::Run {
        local_only,
        prefer_local,
        ..
    } = &action.kind
    else {
        return Placement::Local;
    };
    match (*local_only, policy.local_enabled) {
        (false, true) if *prefer_local => Placement::Local,
        (false, _) => Placement::Remote,
        (true, true) => Placement::Local,
        (true, false) => Placement::Nowhere(
            "The action is `local_only = True`, but the execution platform's \
             CommandExecutorConfig has `local_enabled = False`: it cannot run anywhere. Set \
             `local_enabled = True` on the platform (actions still go remote unless they \
             must run locally or are `prefer_local`), or drop what keeps it local."
                .to_string(),
        ),
    }
}

// buck2's placement under a remote-enabled platform (buck2 0676d75903, `ctx.actions.run`'s
// `local_only` / `prefer_local` and `CommandExecutorConfig`, as docs/buck2.md records them):
// `local_only` never leaves the machine, `prefer_local` stays local while local execution is
// enabled, everything else goes remote; what the command line names plays no part.
#[cfg(test)]
mod tests {
    use super::*;
    use forge_core::{ActionId, TargetLabel};

    fn run(argv: &[&str], local_only: bool, prefer_local: bool) -> Action {
        Action {
            id: ActionId(0),
            owner: TargetLabel {
                cell: "root".into(),
                package: "p".into(),
                name: "t".into(),
            },
            category: "c".into(),
            identifier: None,
            kind: ActionKind::Run {
                argv: argv.iter().map(|s| s.to_string()).collect(),
                env: Vec::new(),
                local_only,
                prefer_local,
                allow_cache_upload: None,
                weight: 1,
                scratch: String::new(),
            },
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    fn policy(local_enabled: bool) -> RemoteExecPolicy {
        RemoteExecPolicy {
            local_enabled,
            ..Default::default()
        }
    }

    #[test]
    fn without_remote_execution_everything_is_local() {
        assert_eq!(place(&run(&["x"], false, false), None), Placement::Local);
    }

    #[test]
    fn local_only_stays_local_and_fails_where_local_is_off() {
        let a = run(&["x"], true, false);
        assert_eq!(place(&a, Some(&policy(true))), Placement::Local);
        assert!(
            matches!(place(&a, Some(&policy(false))), Placement::Nowhere(why)
            if why.contains("local_only = True") && why.contains("local_enabled = False"))
        );
    }

    #[test]
    fn prefer_local_is_local_only_while_local_is_enabled() {
        let a = run(&["x"], false, true);
        assert_eq!(place(&a, Some(&policy(true))), Placement::Local);
        assert_eq!(place(&a, Some(&policy(false))), Placement::Remote);
    }

    #[test]
    fn the_command_line_does_not_keep_an_action_local() {
        // A venv interpreter in argv no longer pins the action: its toolchain marks it.
        let a = run(
            &[".venv/finn/bin/python", "finn/flow/run_step.py"],
            false,
            false,
        );
        assert_eq!(place(&a, Some(&policy(true))), Placement::Remote);
    }
}
