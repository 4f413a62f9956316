//! `rule(impl=, attrs=, ...)`: the callable a .bzl exports, and the target it declares when
//! a BUCK file calls it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use allocative::Allocative;
use anyhow::anyhow;
use starlark::eval::{Arguments, Evaluator};
use starlark::values::{
    starlark_value, AllocValue, Freeze, FreezeResult, Freezer, FrozenValue, Heap, NoSerialize,
    OwnedFrozenValue, ProvidesStaticType, StarlarkValue, Trace, Value,
};

use super::attrs::Attr;
use super::coerce::{attrs_call, coerce, CoerceCx};
use super::context::BuildContext;
use crate::model::{AttrSpec, CoercedAttr, RuleSpec, TargetLabel, TargetNode};

/// Attributes every rule has without declaring them (buck2 `attrs/spec/internal.rs`).
pub const IMPLICIT_ATTRS: &[&str] = &[
    "name",
    "default_target_platform",
    "target_compatible_with",
    "compatible_with",
    "exec_compatible_with",
    "visibility",
    "within_view",
    "metadata",
    "tests",
    "modifiers",
    "incoming_transition",
];

#[derive(Debug, Trace, ProvidesStaticType, NoSerialize, Allocative)]
pub struct RuleCallable<'v> {
    #[trace(unsafe_ignore)]
    #[allocative(skip)]
    name: RefCell<Option<String>>,
    implementation: Value<'v>,
    attr_names: Vec<String>,
    attr_values: Vec<Value<'v>>,
    defined_in: String,
    is_toolchain_rule: bool,
    is_configuration_rule: bool,
    doc: String,
}

impl<'v> RuleCallable<'v> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        implementation: Value<'v>,
        attrs: Vec<(String, Value<'v>)>,
        defined_in: String,
        is_toolchain_rule: bool,
        is_configuration_rule: bool,
        doc: String,
    ) -> Self {
        let (attr_names, attr_values) = attrs.into_iter().unzip();
        RuleCallable {
            name: RefCell::new(None),
            implementation,
            attr_names,
            attr_values,
            defined_in,
            is_toolchain_rule,
            is_configuration_rule,
            doc,
        }
    }
}

impl std::fmt::Display for RuleCallable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.name.borrow() {
            Some(n) => write!(f, "rule({n})"),
            None => write!(f, "rule(<unassigned>)"),
        }
    }
}

impl<'v> AllocValue<'v> for RuleCallable<'v> {
    fn alloc_value(self, heap: Heap<'v>) -> Value<'v> {
        heap.alloc_complex(self)
    }
}

impl<'v> Freeze for RuleCallable<'v> {
    type Frozen = FrozenRuleCallable;
    fn freeze(self, freezer: &Freezer) -> FreezeResult<FrozenRuleCallable> {
        Ok(FrozenRuleCallable {
            name: self.name.into_inner(),
            implementation: self.implementation.freeze(freezer)?,
            attr_names: self.attr_names,
            attr_values: self
                .attr_values
                .into_iter()
                .map(|v| v.freeze(freezer))
                .collect::<FreezeResult<_>>()?,
            defined_in: self.defined_in,
            is_toolchain_rule: self.is_toolchain_rule,
            is_configuration_rule: self.is_configuration_rule,
            doc: self.doc,
            spec: OnceLock::new(),
        })
    }
}

// Deliberately the same opening as the other callables': StarlarkValue's export_as signature.
#[starlark_value(type = "rule")]
impl<'v> StarlarkValue<'v> for RuleCallable<'v> {
    type Canonical = FrozenRuleCallable;

    fn export_as(
        &self,
        variable_name: &str,
        _eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<()> {
        let mut n = self.name.borrow_mut();
        if n.is_none() {
            *n = Some(variable_name.to_owned());
        }
        Ok(())
    }

    fn invoke(
        &self,
        _me: Value<'v>,
        _args: &Arguments<'v, '_>,
        _eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        Err(starlark::Error::new_other(anyhow!(
            "{self} cannot be called from the .bzl file that defines it; call it from a BUCK file"
        )))
    }
}

#[derive(Debug, ProvidesStaticType, NoSerialize, Allocative)]
pub struct FrozenRuleCallable {
    name: Option<String>,
    implementation: FrozenValue,
    attr_names: Vec<String>,
    attr_values: Vec<FrozenValue>,
    defined_in: String,
    is_toolchain_rule: bool,
    is_configuration_rule: bool,
    doc: String,
    #[allocative(skip)]
    spec: OnceLock<Arc<RuleSpec>>,
}

starlark::starlark_simple_value!(FrozenRuleCallable);

impl std::fmt::Display for FrozenRuleCallable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rule({})",
            self.name.as_deref().unwrap_or("<unassigned>")
        )
    }
}

impl FrozenRuleCallable {
    /// The rule's declaration, once its module is frozen and the rule exported.
    pub fn spec(&self) -> Option<Arc<RuleSpec>> {
        self.spec.get().cloned()
    }

    /// Builds the [`RuleSpec`] once the defining module is frozen; `me` is this rule as an
    /// owned value of that module (it keeps the module's heap alive).
    pub fn finalize(&self, me: &OwnedFrozenValue) -> anyhow::Result<()> {
        let Some(name) = &self.name else {
            return Ok(());
        };
        let mut attrs = BTreeMap::new();
        for (n, v) in self.attr_names.iter().zip(&self.attr_values) {
            let a = Attr::from_value(v.to_value())
                .ok_or_else(|| anyhow!("attribute `{n}` of rule `{name}` is not an `attrs.*()`"))?;
            let spec: AttrSpec = a.spec(&|i| {
                let p = a.providers.get(i)?.unpack_frozen()?;
                Some(me.map(|_| p))
            });
            attrs.insert(n.clone(), spec);
        }
        let implementation = me.map(|_| self.implementation);
        let _ = self.spec.set(Arc::new(RuleSpec {
            name: name.clone(),
            defined_in: self.defined_in.clone(),
            implementation,
            attrs,
            is_toolchain_rule: self.is_toolchain_rule,
            is_configuration_rule: self.is_configuration_rule,
            doc: self.doc.clone(),
        }));
        Ok(())
    }
}

fn err(e: anyhow::Error) -> starlark::Error {
    starlark::Error::new_other(e)
}

#[starlark_value(type = "rule")]
impl<'v> StarlarkValue<'v> for FrozenRuleCallable {
    type Canonical = Self;

    // Deliberately the same signature as the providers' invoke: it is StarlarkValue's.
    fn invoke(
        &self,
        _me: Value<'v>,
        args: &Arguments<'v, '_>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let spec = self.spec.get().cloned().ok_or_else(|| {
            err(anyhow!(
                "Rule defined in `{}` must be assigned to a top-level variable, e.g. `my_rule = rule(...)`",
                self.defined_in
            ))
        })?;
        args.no_positional_args(eval.heap())?;
        let named = args.names_map()?;
        let call_site = eval
            .call_stack_top_location()
            .map(|l| {
                let r = l.resolve_span();
                format!(
                    "{}:{}:{}",
                    l.filename(),
                    r.begin.line + 1,
                    r.begin.column + 1
                )
            })
            .unwrap_or_default();
        let bx = BuildContext::from_eval(eval)?;
        let pkg = bx.package.as_ref().ok_or_else(|| {
            err(anyhow!(
                "Rule `{}` can only be called while evaluating a build file",
                spec.name
            ))
        })?;
        let ws = bx.loader.workspace();

        let mut values: BTreeMap<String, Value<'v>> = BTreeMap::new();
        let mut extra = Vec::new();
        for (k, v) in named.iter() {
            let k = k.as_str();
            let known =
                IMPLICIT_ATTRS.contains(&k) || spec.attrs.get(k).is_some_and(|a| !a.default_only);
            if known {
                values.insert(k.to_owned(), *v);
            } else {
                extra.push(format!("`{k}`"));
            }
        }
        if !extra.is_empty() {
            return Err(err(anyhow!(
                "Found {} extra named parameter(s) for call to {}",
                extra.join(", "),
                spec.name
            )));
        }
        let name = match values.get("name") {
            Some(v) => v
                .unpack_str()
                .ok_or_else(|| err(anyhow!("`name` must be a string, got `{}`", v.to_repr())))?
                .to_owned(),
            None => {
                return Err(err(anyhow!(
                    "Missing named-only parameter `name` for call to `{}`",
                    spec.name
                )))
            }
        };
        if !super::target_name::is_valid(&name) {
            return Err(err(anyhow!(super::target_name::invalid_message(&name))));
        }
        let label = TargetLabel {
            cell: pkg.cell.clone(),
            package: pkg.package.clone(),
            name,
        };
        let cx = CoerceCx {
            cells: &ws.cells,
            cell: &pkg.cell,
            package: &pkg.package,
            project_root: &ws.root,
            check_sources: true,
            buildfiles: &ws.buildfile_names,
        };
        let attrs = coerce_attrs(&spec, &values, &cx, &label)?;
        let visibility = visibility_of(&values)?;
        if let Some(v) = values
            .get("default_target_platform")
            .filter(|v| !v.is_none())
        {
            let text = v.unpack_str().ok_or_else(|| {
                err(anyhow!(
                    "`default_target_platform` must be a target label string"
                ))
            })?;
            let platform = super::pattern::parse_label(text, &pkg.cell, &pkg.package, &ws.cells)
                .map_err(err)?;
            pkg.platforms
                .borrow_mut()
                .insert(label.name.clone(), platform.target);
        }
        let node = TargetNode {
            label: label.clone(),
            rule: spec,
            attrs,
            visibility,
            call_site,
        };
        let mut targets = pkg.targets.borrow_mut();
        if targets.contains_key(&label.name) {
            return Err(err(anyhow!(
                "Attempted to register target `{label}` twice; target names must be unique within a package"
            )));
        }
        targets.insert(label.name.clone(), Arc::new(node));
        Ok(Value::new_none())
    }
}

/// Every attribute of a target: the given value coerced to the attribute's type, or its
/// default; buck2's error chains where neither exists.
fn coerce_attrs<'v>(
    spec: &RuleSpec,
    values: &BTreeMap<String, Value<'v>>,
    cx: &CoerceCx,
    label: &TargetLabel,
) -> starlark::Result<BTreeMap<String, CoercedAttr>> {
    let mut attrs = BTreeMap::new();
    for (attr, aspec) in &spec.attrs {
        let given = values.get(attr.as_str()).copied().filter(|v| !v.is_none());
        let value = match given {
            // buck2's chain: the attribute and target, the attribute's type, the value.
            Some(v) => coerce(&aspec.ty, v, cx).map_err(|e| {
                err(e
                    .context(format!("Error coercing {}", v.to_repr()))
                    .context(format!(
                        "Error coercing attribute `{attr}` of type `{}`",
                        attrs_call(&aspec.ty)
                    ))
                    .context(format!("Error coercing attribute `{attr}` of `{label}`")))
            })?,
            None => match &aspec.default {
                Some(d) => d.clone(),
                // None asks for the default; buck2 rejects it where there is none.
                None if values.contains_key(attr.as_str()) => {
                    return Err(err(anyhow!(
                        "Parameter `{attr}` had no value provided, but it is mandatory"
                    )
                    .context(format!("Error coercing attribute `{attr}` of `{label}`"))))
                }
                None => {
                    return Err(err(anyhow!(
                        "Missing named-only parameter `{attr}` for call to `{}`",
                        spec.name
                    )))
                }
            },
        };
        attrs.insert(attr.clone(), value);
    }
    Ok(attrs)
}

/// The target's `visibility` patterns as written (none: private to its package).
fn visibility_of(values: &BTreeMap<String, Value<'_>>) -> starlark::Result<Vec<String>> {
    Ok(match values.get("visibility") {
        Some(v) if !v.is_none() => {
            let list = starlark::values::list::ListRef::from_value(*v)
                .map(|l| l.content().to_vec())
                .or_else(|| {
                    starlark::values::tuple::TupleRef::from_value(*v).map(|t| t.content().to_vec())
                })
                .ok_or_else(|| err(anyhow!("`visibility` must be a list of strings")))?;
            list.iter()
                .map(|x| {
                    x.unpack_str()
                        .map(str::to_owned)
                        .ok_or_else(|| err(anyhow!("`visibility` must be a list of strings")))
                })
                .collect::<starlark::Result<Vec<_>>>()?
        }
        _ => Vec::new(),
    })
}
