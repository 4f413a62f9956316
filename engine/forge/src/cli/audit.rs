//! `forge audit`: analysis without building. `providers` (as buck2's) prints what targets
//! provide; `tools` (forge only) checks that every action runs a command from the graph.

mod providers;
pub mod tools;

use anyhow::Result;
use clap::Subcommand;

use super::{Common, Session};

#[derive(Subcommand, Debug)]
pub(super) enum AuditCommand {
    /// Analyse the targets of the patterns and print their providers (no action runs).
    Providers {
        #[arg(required = true)]
        patterns: Vec<String>,
        /// Print only the labels of the analysed targets.
        #[arg(long)]
        quiet: bool,
        /// Print the names of the providers instead of their values.
        #[arg(short = 'l', long)]
        list: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Every action runs a project file, a shell, or a command its target's toolchains name.
    Tools {
        #[arg(required = true)]
        patterns: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
}

impl AuditCommand {
    pub(super) fn common(&self) -> &Common {
        match self {
            AuditCommand::Providers { common, .. } | AuditCommand::Tools { common, .. } => common,
        }
    }
}

pub(super) fn audit(s: &Session, what: &AuditCommand) -> Result<i32> {
    match what {
        AuditCommand::Providers {
            patterns,
            quiet,
            list,
            ..
        } => providers::providers(s, patterns, *quiet, *list),
        AuditCommand::Tools { patterns, .. } => tools::tools(s, patterns),
    }
}
