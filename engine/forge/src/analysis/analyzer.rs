//! The analysis graph walk: analyses each configured target once (deps first), reports
//! dependency cycles with their full path, and accumulates the action graph.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use starlark::environment::Module;
use starlark::eval::Evaluator;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::structs::AllocStruct;
use starlark::values::{OwnedFrozenValue, Value};

use super::actions::{ActionsState, AnalysisActions};
use super::attrs::{parse_relative_label, AttrResolver, ResolvedDep};
use super::configuration::{
    configured_deps, platform_data, resolve_all, resolve_select, select_keys, setting_data,
    Configuration, ConfigurationError,
};
use super::context::AnalysisContext;
use super::label::{ConfiguredLabel, StarlarkLabel, UNSPECIFIED_CFG};
use super::outputs::target_outputs;
use super::providers::{Builtin, ProviderCollection, ProviderInstance};
use crate::model::{
    check_toolchain_edge, ActionGraph, ActionId, CoercedAttr, DepKind, ProvidersLabel, TargetLabel,
    TargetNode, TargetOutputs, TargetSource,
};

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("Expected `list[Provider]` from the rule implementation, got `{0}` of type `{1}`")]
    NotAList(String, String),
    #[error("Expected a provider in the list returned by the rule implementation, got `{0}` of type `{1}`")]
    NotAProvider(String, String),
    #[error("collection {0} did not receive a `DefaultInfo` provider")]
    NoDefaultInfo(String),
    #[error("provider `{0}` was returned more than once by the rule implementation")]
    DuplicateProvider(String),
    #[error("requested sub target named `{sub}` of target `{target}` is not available. Available subtargets are: `{available:?}`")]
    NoSubTarget {
        sub: String,
        target: String,
        available: Vec<String>,
    },
}

/// The frozen result of analysing one target.
pub struct Analysed {
    pub label: ConfiguredLabel,
    /// A `ProviderCollection`.
    pub providers: OwnedFrozenValue,
    pub is_toolchain_rule: bool,
}

#[derive(Default)]
struct State {
    done: HashMap<CfgKey, Arc<Analysed>>,
    stack: Vec<CfgKey>,
    configurations: HashMap<TargetLabel, Arc<Configuration>>,
    graph: ActionGraph,
}

/// A target in a configuration: the platform it is configured for (`None` = unspecified).
type CfgKey = (TargetLabel, Option<TargetLabel>);

/// Analyses targets on demand; results and actions are kept for the whole command.
pub struct Analyzer {
    loader: Arc<dyn TargetSource>,
    project_root: String,
    state: Mutex<State>,
}

fn hash16(s: &str) -> String {
    hex::encode(&Sha256::digest(s.as_bytes())[..8])
}

fn analysis_error(label: &ConfiguredLabel) -> String {
    format!("Error running analysis for `{label}`")
}

impl Analyzer {
    /// An analyzer over any source of target nodes; `project_root` is absolute.
    pub fn with_source(loader: Arc<dyn TargetSource>, project_root: String) -> Analyzer {
        Analyzer {
            loader,
            project_root,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Analyses the target (and its deps, reporting cycles) and returns what it offers.
    pub fn outputs(&self, label: &ProvidersLabel) -> Result<TargetOutputs> {
        let analysed = self.analyse(&label.target)?;
        let providers = resolve_sub_target(&analysed, &label.sub_target)?;
        let coll = ProviderCollection::from_value(providers.value())
            .expect("analysis results are provider collections");
        target_outputs(label, &analysed.label.cfg, coll, &self.project_root)
    }

    /// Every action declared by the targets analysed so far.
    pub fn action_graph(&self) -> ActionGraph {
        self.lock().graph.clone()
    }

    /// The provider collection of a target or sub-target.
    pub fn providers(&self, label: &ProvidersLabel) -> Result<OwnedFrozenValue> {
        let analysed = self.analyse(&label.target)?;
        resolve_sub_target(&analysed, &label.sub_target)
    }

    /// Analyses one requested target in its target platform (deps first, once each).
    pub fn analyse(&self, target: &TargetLabel) -> Result<Arc<Analysed>> {
        let platform = self.loader.target_platform(target)?;
        self.analyse_in(target, platform)
    }

    fn configuration(&self, platform: &Option<TargetLabel>) -> Result<Arc<Configuration>> {
        let Some(p) = platform else {
            return Ok(Arc::new(Configuration::unspecified()));
        };
        if let Some(c) = self.lock().configurations.get(p) {
            return Ok(c.clone());
        }
        let analysed = self.analyse_in(p, None)?;
        let coll = ProviderCollection::from_value(analysed.providers.value())
            .expect("analysis results are provider collections");
        let cfg = Arc::new(Configuration::for_platform(p, platform_data(p, coll)?));
        self.lock().configurations.insert(p.clone(), cfg.clone());
        Ok(cfg)
    }

    fn configured_label(&self, target: &TargetLabel, cfg: &Configuration) -> ConfiguredLabel {
        let mut l = ConfiguredLabel::unspecified(target.clone());
        l.cfg = cfg.display();
        l
    }

    fn analyse_in(
        &self,
        target: &TargetLabel,
        platform: Option<TargetLabel>,
    ) -> Result<Arc<Analysed>> {
        let key = (target.clone(), platform.clone());
        {
            let mut st = self.lock();
            if let Some(a) = st.done.get(&key) {
                return Ok(a.clone());
            }
            if let Some(pos) = st.stack.iter().position(|t| *t == key) {
                let shown = |k: &CfgKey| {
                    let cfg = match &k.1 {
                        None => UNSPECIFIED_CFG.to_owned(),
                        Some(p) => st
                            .configurations
                            .get(p)
                            .map(|c| c.display())
                            .unwrap_or_else(|| p.to_string()),
                    };
                    format!("{} ({cfg})", k.0)
                };
                let mut lines: Vec<String> = st.stack[pos..].iter().map(shown).collect();
                lines.push(shown(&key));
                // buck2 ends the listing with a newline.
                let msg = format!(
                    "Configured target cycle detected (`->` means \"depends on\"):\n  {}\n",
                    lines.join(" ->\n  ")
                );
                let first = lines.swap_remove(0);
                return Err(
                    anyhow::anyhow!(msg).context(format!("Error running analysis for `{first}`"))
                );
            }
            st.stack.push(key.clone());
        }
        let result = self.analyse_uncached(target, &platform);
        let mut st = self.lock();
        st.stack.pop();
        let (analysed, actions) = result?;
        let analysed = Arc::new(analysed);
        let graph = &mut st.graph;
        for mut a in actions.actions {
            let id = ActionId(graph.actions.len());
            a.id = id;
            for o in &a.outputs {
                graph.producers.insert(o.path.clone(), id);
            }
            graph.actions.push(a);
        }
        st.done.insert(key, analysed.clone());
        Ok(analysed)
    }

    fn analyse_uncached(
        &self,
        target: &TargetLabel,
        platform: &Option<TargetLabel>,
    ) -> Result<(Analysed, ActionsState)> {
        let node = self.loader.get_target(target)?;
        // Configuration rules (platforms, settings, constraints) are analysed unconfigured.
        let platform = if node.rule.is_configuration_rule {
            None
        } else {
            platform.clone()
        };
        let cfg = self.configuration(&platform)?;
        let label = self.configured_label(target, &cfg);
        let own = |e: anyhow::Error| e.context(analysis_error(&label));
        let mut settings = BTreeMap::new();
        let mut keys = Vec::new();
        for v in node.attrs.values() {
            select_keys(v, &mut keys);
        }
        for k in &keys {
            let key_label = parse_relative_label(k, target)
                .ok_or_else(|| own(anyhow::anyhow!("Invalid select key `{k}`")))?;
            let analysed = self.analyse_in(&key_label.target, None)?;
            let coll = ProviderCollection::from_value(analysed.providers.value())
                .expect("analysis results are provider collections");
            let data = setting_data(k, coll).map_err(own)?;
            if platform.is_none() && !data.constraints.is_empty() {
                let err = anyhow::Error::new(ConfigurationError::Unspecified)
                    .context(format!(
                        "Error getting configuration node of `{}` within the `{UNSPECIFIED_CFG}` configuration",
                        key_label.target
                    ))
                    .context(format!("Error resolving configuration deps of `{label}`"));
                return Err(own(err));
            }
            settings.insert(k.clone(), data);
        }
        let read_config = |s: &str, k: &str| self.loader.config(s, k);
        let resolve = |branches: &[(String, CoercedAttr)]| -> Result<CoercedAttr> {
            resolve_select(branches, &cfg, &settings, &read_config).cloned()
        };
        let mut attrs = BTreeMap::new();
        for (k, v) in &node.attrs {
            attrs.insert(k.clone(), resolve_all(v, &resolve).map_err(own)?);
        }
        let mut deps = HashMap::new();
        for (dep, kind) in configured_deps(&node, &resolve).map_err(own)? {
            let dep_node = self
                .loader
                .get_target(&dep.target)
                .with_context(|| format!("-> {} (^)", dep.target))
                .map_err(own)?;
            check_toolchain_edge(&dep.target, kind, dep_node.rule.is_toolchain_rule)
                .map_err(own)?;
            let dep_platform = match kind {
                DepKind::Exec => None,
                DepKind::Normal | DepKind::Toolchain => platform.clone(),
            };
            // A dep's own failure already names the dep.
            let analysed = self.analyse_in(&dep.target, dep_platform)?;
            let providers = resolve_sub_target(&analysed, &dep.sub_target).map_err(own)?;
            let mut dep_label = analysed.label.clone();
            dep_label.label.sub_target = dep.sub_target.clone();
            deps.insert(
                dep,
                ResolvedDep {
                    label: dep_label,
                    providers,
                },
            );
        }
        let (providers, actions) = self
            .run_impl(&node, &attrs, &label, &cfg, &deps)
            .map_err(own)?;
        Ok((
            Analysed {
                label,
                providers,
                is_toolchain_rule: node.rule.is_toolchain_rule,
            },
            actions,
        ))
    }

    fn run_impl(
        &self,
        node: &TargetNode,
        attrs: &BTreeMap<String, CoercedAttr>,
        label: &ConfiguredLabel,
        cfg: &Configuration,
        deps: &HashMap<ProvidersLabel, ResolvedDep>,
    ) -> Result<(OwnedFrozenValue, ActionsState)> {
        let t = &node.label;
        let pkg = if t.package.is_empty() {
            String::new()
        } else {
            format!("{}/", t.package)
        };
        let state = ActionsState {
            owner: Some(label.clone()),
            out_prefix: format!(
                "buck-out/forge/art/{}/{}/{}__{}__",
                t.cell, cfg.hash, pkg, t.name
            ),
            scratch_prefix: format!(
                "buck-out/forge/tmp/{}/{}",
                t.cell,
                hash16(&label.to_string())
            ),
            project_root: self.project_root.clone(),
            ..Default::default()
        };
        Module::with_temp_heap(|module| -> Result<(OwnedFrozenValue, ActionsState)> {
            let heap = module.heap();
            let resolver = AttrResolver { target: t, deps };
            let mut fields: Vec<(String, Value)> = Vec::new();
            if !attrs.contains_key("name") {
                fields.push(("name".to_owned(), heap.alloc(t.name.as_str())));
            }
            for (k, v) in attrs {
                let ty = node.rule.attrs.get(k).map(|s| &s.ty);
                let value = resolver.to_value(v, ty, heap)?;
                fields.push((k.clone(), value));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            let attrs = heap.alloc(AllocStruct(fields));
            let actions = heap.alloc(AnalysisActions(Mutex::new(state)));
            let ctx = heap.alloc_complex_no_freeze(AnalysisContext {
                attrs,
                actions,
                label: heap.alloc(StarlarkLabel(label.clone())),
            });
            let implementation = heap.access_owned_frozen_value(&node.rule.implementation);
            let result = {
                let mut eval = Evaluator::new(&module);
                eval.eval_function(implementation, &[ctx], &[])
                    .map_err(|e| e.into_anyhow())?
            };
            let collection = heap.alloc(validate_providers(result)?);
            let state = AnalysisActions::from_value(actions)
                .expect("ctx.actions is AnalysisActions")
                .take();
            state.check_all_bound()?;
            module.set_extra_value(collection);
            let frozen = module
                .freeze()
                .map_err(|e| anyhow::anyhow!("Freezing the analysis result failed: {e:?}"))?;
            let providers = frozen
                .owned_extra_value()
                .expect("the provider collection was stored");
            Ok((providers, state))
        })
    }
}

/// Checks what a rule implementation returned: a list of providers, exactly one of each,
/// including a `DefaultInfo`.
fn validate_providers(result: Value<'_>) -> Result<ProviderCollection<'_>> {
    let list = ListRef::from_value(result)
        .ok_or_else(|| AnalysisError::NotAList(result.to_repr(), result.get_type().to_owned()))?;
    let mut seen: Vec<u64> = Vec::new();
    let mut has_default = false;
    for p in list.iter() {
        let inst = ProviderInstance::from_value(p)
            .ok_or_else(|| AnalysisError::NotAProvider(p.to_repr(), p.get_type().to_owned()))?;
        if seen.contains(&inst.meta.uid) {
            return Err(AnalysisError::DuplicateProvider(inst.meta.name.clone()).into());
        }
        seen.push(inst.meta.uid);
        has_default |= inst.meta.builtin == Some(Builtin::DefaultInfo);
    }
    if !has_default {
        return Err(AnalysisError::NoDefaultInfo(result.to_repr()).into());
    }
    Ok(ProviderCollection {
        providers: list.iter().collect(),
    })
}

/// Follows `[a][b]` through `DefaultInfo.sub_targets`.
fn resolve_sub_target(analysed: &Analysed, subs: &[String]) -> Result<OwnedFrozenValue> {
    let mut current = analysed.providers.clone();
    let mut path = analysed.label.clone();
    for sub in subs {
        current = current.try_map(|fv| -> Result<_> {
            let coll = ProviderCollection::from_value(fv.to_value())
                .expect("sub-targets are provider collections");
            let dict = coll
                .find_builtin(Builtin::DefaultInfo)
                .and_then(|d| ProviderInstance::from_value(d)?.get("sub_targets"));
            let dict = dict.and_then(DictRef::from_value);
            let found = dict
                .as_ref()
                .and_then(|d| d.get_str(sub))
                .and_then(|v| v.unpack_frozen());
            found.ok_or_else(|| {
                AnalysisError::NoSubTarget {
                    sub: sub.clone(),
                    target: path.to_string(),
                    available: dict
                        .map(|d| {
                            d.keys()
                                .filter_map(|k| k.unpack_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                }
                .into()
            })
        })?;
        path.label.sub_target.push(sub.clone());
    }
    Ok(current)
}
