//! `attrs.*`: attribute declarations as Starlark values (`Attr`), turned into
//! [`crate::model::AttrSpec`] when the declaring rule is frozen.

use allocative::Allocative;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::starlark_complex_value;
use starlark::starlark_module;
use starlark::values::list_or_tuple::UnpackListOrTuple;
use starlark::values::{
    starlark_value, Coerce, Freeze, NoSerialize, ProvidesStaticType, StarlarkValue, Trace, Value,
    ValueLike,
};

use super::coerce::{coerce_default, type_name};
use super::context::BuildContext;
use crate::model::{AttrSpec, AttrType, CoercedAttr, DepKind};

/// [`AttrType`] with dep providers as indices into [`AttrGen::providers`], so the Starlark
/// provider values can live (and be frozen) in the Starlark heap.
#[derive(Clone, Debug)]
pub enum LocalAttrType {
    Any,
    String,
    Int,
    Bool,
    List(Box<LocalAttrType>),
    Tuple(Vec<LocalAttrType>),
    Dict {
        key: Box<LocalAttrType>,
        value: Box<LocalAttrType>,
        sorted: bool,
    },
    Option(Box<LocalAttrType>),
    OneOf(Vec<LocalAttrType>),
    Enum(Vec<String>),
    Source {
        allow_directory: bool,
    },
    Dep {
        kind: DepKind,
        providers: Vec<usize>,
    },
    Label,
    Arg,
}

impl LocalAttrType {
    fn shift(self, by: usize) -> LocalAttrType {
        use LocalAttrType as L;
        match self {
            L::List(x) => L::List(Box::new(x.shift(by))),
            L::Option(x) => L::Option(Box::new(x.shift(by))),
            L::Tuple(xs) => L::Tuple(xs.into_iter().map(|x| x.shift(by)).collect()),
            L::OneOf(xs) => L::OneOf(xs.into_iter().map(|x| x.shift(by)).collect()),
            L::Dict { key, value, sorted } => L::Dict {
                key: Box::new(key.shift(by)),
                value: Box::new(value.shift(by)),
                sorted,
            },
            L::Dep { kind, providers } => L::Dep {
                kind,
                providers: providers.into_iter().map(|p| p + by).collect(),
            },
            other => other,
        }
    }

    /// The model type; `provider(i)` maps a provider index to its frozen value.
    pub fn to_model<P: Fn(usize) -> Option<starlark::values::OwnedFrozenValue>>(
        &self,
        provider: &P,
    ) -> AttrType {
        use LocalAttrType as L;
        match self {
            L::Any => AttrType::Any,
            L::String => AttrType::String,
            L::Int => AttrType::Int,
            L::Bool => AttrType::Bool,
            L::List(x) => AttrType::List(Box::new(x.to_model(provider))),
            L::Tuple(xs) => AttrType::Tuple(xs.iter().map(|x| x.to_model(provider)).collect()),
            L::Dict { key, value, sorted } => AttrType::Dict {
                key: Box::new(key.to_model(provider)),
                value: Box::new(value.to_model(provider)),
                sorted: *sorted,
            },
            L::Option(x) => AttrType::Option(Box::new(x.to_model(provider))),
            L::OneOf(xs) => AttrType::OneOf(xs.iter().map(|x| x.to_model(provider)).collect()),
            L::Enum(v) => AttrType::Enum(v.clone()),
            L::Source { allow_directory } => AttrType::Source {
                allow_directory: *allow_directory,
            },
            L::Dep { kind, providers } => AttrType::Dep {
                kind: *kind,
                providers: providers.iter().filter_map(|i| provider(*i)).collect(),
            },
            L::Label => AttrType::Label,
            L::Arg => AttrType::Arg,
        }
    }
}

/// The value `attrs.string()` and friends return.
#[derive(Debug, Trace, Coerce, Freeze, ProvidesStaticType, NoSerialize, Allocative)]
#[repr(C)]
pub struct AttrGen<V: starlark::values::ValueLifetimeless> {
    #[trace(unsafe_ignore)]
    #[freeze(identity)]
    #[allocative(skip)]
    pub ty: LocalAttrType,
    /// Provider callables referenced by `ty`'s deps.
    pub providers: Vec<V>,
    #[trace(unsafe_ignore)]
    #[freeze(identity)]
    #[allocative(skip)]
    pub default: Option<CoercedAttr>,
    pub default_only: bool,
    pub doc: String,
}

starlark_complex_value!(pub Attr);

impl<V: starlark::values::ValueLifetimeless> std::fmt::Display for AttrGen<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "attrs.{}()", type_name(&self.ty.to_model(&|_| None)))
    }
}

#[starlark_value(type = "Attr")]
impl<'v, V: ValueLike<'v>> StarlarkValue<'v> for AttrGen<V> where Self: ProvidesStaticType<'v> {}

impl<'v, V: ValueLike<'v>> AttrGen<V> {
    pub fn spec<P: Fn(usize) -> Option<starlark::values::OwnedFrozenValue>>(
        &self,
        provider: &P,
    ) -> AttrSpec {
        AttrSpec {
            ty: self.ty.to_model(provider),
            default: self.default.clone(),
            default_only: self.default_only,
            doc: self.doc.clone(),
        }
    }
}

fn attr_from<'v>(v: Value<'v>) -> starlark::Result<&'v Attr<'v>> {
    Attr::from_value(v).ok_or_else(|| {
        starlark::Error::new_other(anyhow::anyhow!(
            "Expected an attribute (`attrs.*()`), got `{}`",
            v.get_type()
        ))
    })
}

/// Combines inner attributes into one type, concatenating their providers.
fn compose<'v>(inner: &[Value<'v>]) -> starlark::Result<(Vec<LocalAttrType>, Vec<Value<'v>>)> {
    let mut tys = Vec::new();
    let mut providers = Vec::new();
    for v in inner {
        let a = attr_from(*v)?;
        tys.push(a.ty.clone().shift(providers.len()));
        providers.extend(a.providers.iter().copied());
    }
    Ok((tys, providers))
}

fn make<'v>(
    ty: LocalAttrType,
    providers: Vec<Value<'v>>,
    default: Option<Value<'v>>,
    doc: &str,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Attr<'v>> {
    // `attrs.option(x)` without `default` is mandatory in buck2 (the caller may pass None);
    // `default = None` is the explicit way to make it optional.
    let is_option = matches!(ty, LocalAttrType::Option(_));
    let default = match default {
        Some(d) if !d.is_none() || is_option => {
            let cx = BuildContext::from_eval(eval)?;
            Some(
                coerce_default(&ty.to_model(&|_| None), d, cx)
                    .map_err(starlark::Error::new_other)?,
            )
        }
        _ => None,
    };
    Ok(Attr {
        ty,
        providers,
        default,
        default_only: false,
        doc: doc.to_owned(),
    })
}

fn dep_attr<'v>(
    kind: DepKind,
    providers: UnpackListOrTuple<Value<'v>>,
    default: Option<Value<'v>>,
    doc: &str,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Attr<'v>> {
    let idx = (0..providers.items.len()).collect();
    make(
        LocalAttrType::Dep {
            kind,
            providers: idx,
        },
        providers.items,
        default,
        doc,
        eval,
    )
}

/// An attribute whose type wraps one inner attribute's, with its providers.
fn wrapped<'v>(
    inner: Value<'v>,
    wrap: fn(Box<LocalAttrType>) -> LocalAttrType,
    default: Option<Value<'v>>,
    doc: &str,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Attr<'v>> {
    let (mut tys, providers) = compose(&[inner])?;
    make(wrap(Box::new(tys.remove(0))), providers, default, doc, eval)
}

/// The `attrs` namespace.
pub fn attrs_module(builder: &mut GlobalsBuilder) {
    attr_natives(builder);
    wrapping_attrs(builder);
    variadic_attrs(builder);
    dep_attrs(builder);
}

/// Natives that take one inner attribute (`attrs.set` is kept as a list).
macro_rules! wrapping_attrs {
    ($($name:ident => $wrap:path),+ $(,)?) => {
        #[starlark_module]
        fn wrapping_attrs(builder: &mut GlobalsBuilder) {
            $(
                fn $name<'v>(
                    #[starlark(require = pos)] inner: Value<'v>,
                    #[starlark(require = named)] default: Option<Value<'v>>,
                    #[starlark(require = named, default = "")] doc: &str,
                    eval: &mut Evaluator<'v, '_, '_>,
                ) -> starlark::Result<Attr<'v>> {
                    wrapped(inner, $wrap, default, doc, eval)
                }
            )+
        }
    };
}

wrapping_attrs!(
    list => LocalAttrType::List,
    set => LocalAttrType::List,
    option => LocalAttrType::Option,
);

/// Natives that take any number of inner attributes, positionally.
macro_rules! variadic_attrs {
    ($($name:ident => $ty:path),+ $(,)?) => {
        #[starlark_module]
        fn variadic_attrs(builder: &mut GlobalsBuilder) {
            $(
                fn $name<'v>(
                    #[starlark(args)] inner: UnpackListOrTuple<Value<'v>>,
                    #[starlark(require = named)] default: Option<Value<'v>>,
                    #[starlark(require = named, default = "")] doc: &str,
                    eval: &mut Evaluator<'v, '_, '_>,
                ) -> starlark::Result<Attr<'v>> {
                    let (tys, providers) = compose(&inner.items)?;
                    make($ty(tys), providers, default, doc, eval)
                }
            )+
        }
    };
}

variadic_attrs!(tuple => LocalAttrType::Tuple, one_of => LocalAttrType::OneOf);

/// The dependency natives, one a dependency kind.
macro_rules! dep_attrs {
    ($($name:ident => $kind:path),+ $(,)?) => {
        #[starlark_module]
        fn dep_attrs(builder: &mut GlobalsBuilder) {
            $(
                fn $name<'v>(
                    #[starlark(require = named, default = UnpackListOrTuple::default())]
                    providers: UnpackListOrTuple<Value<'v>>,
                    #[starlark(require = named)] default: Option<Value<'v>>,
                    #[starlark(require = named, default = "")] doc: &str,
                    eval: &mut Evaluator<'v, '_, '_>,
                ) -> starlark::Result<Attr<'v>> {
                    dep_attr($kind, providers, default, doc, eval)
                }
            )+
        }
    };
}

dep_attrs!(
    dep => DepKind::Normal,
    exec_dep => DepKind::Exec,
    toolchain_dep => DepKind::Toolchain,
);

#[starlark_module]
fn attr_natives(builder: &mut GlobalsBuilder) {
    fn string<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        #[starlark(require = named)] validate: Option<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        super::globals::unsupported_argument(
            "attrs.string",
            "validate",
            validate,
            "attribute validators",
        )?;
        make(LocalAttrType::String, Vec::new(), default, doc, eval)
    }

    fn regex<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(LocalAttrType::String, Vec::new(), default, doc, eval)
    }

    fn int<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(LocalAttrType::Int, Vec::new(), default, doc, eval)
    }

    fn bool<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(LocalAttrType::Bool, Vec::new(), default, doc, eval)
    }

    fn any<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(LocalAttrType::Any, Vec::new(), default, doc, eval)
    }

    fn named_set<'v>(
        #[starlark(require = pos)] value_type: Value<'v>,
        #[starlark(require = named, default = false)] sorted: bool,
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        let _ = sorted;
        wrapped(value_type, LocalAttrType::List, default, doc, eval)
    }

    fn dict<'v>(
        #[starlark(require = pos)] key: Value<'v>,
        #[starlark(require = pos)] value: Value<'v>,
        #[starlark(require = named, default = false)] sorted: bool,
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        let (mut tys, providers) = compose(&[key, value])?;
        let v = tys.pop().unwrap();
        let k = tys.pop().unwrap();
        let ty = LocalAttrType::Dict {
            key: Box::new(k),
            value: Box::new(v),
            sorted,
        };
        make(ty, providers, default, doc, eval)
    }

    fn r#enum<'v>(
        #[starlark(require = pos)] variants: UnpackListOrTuple<String>,
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        let vs: Vec<String> = variants.items.iter().map(|v| v.to_lowercase()).collect();
        make(LocalAttrType::Enum(vs), Vec::new(), default, doc, eval)
    }

    fn source<'v>(
        #[starlark(require = named, default = false)] allow_directory: bool,
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(
            LocalAttrType::Source { allow_directory },
            Vec::new(),
            default,
            doc,
            eval,
        )
    }

    fn label<'v>(
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(LocalAttrType::Label, Vec::new(), default, doc, eval)
    }

    fn arg<'v>(
        #[starlark(require = named, default = false)] json: bool,
        #[starlark(require = named)] default: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        #[starlark(require = named, default = false)] anon_target_compatible: bool,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        let _ = (json, anon_target_compatible);
        make(LocalAttrType::Arg, Vec::new(), default, doc, eval)
    }

    fn default_only<'v>(
        #[starlark(require = pos)] inner: Value<'v>,
        #[starlark(require = named, default = "")] doc: &str,
    ) -> starlark::Result<Attr<'v>> {
        let a = attr_from(inner)?;
        if a.default.is_none() {
            return Err(starlark::Error::new_other(anyhow::anyhow!(
                "`default_only` argument must have a default"
            )));
        }
        Ok(Attr {
            ty: a.ty.clone(),
            providers: a.providers.clone(),
            default: a.default.clone(),
            default_only: true,
            doc: if doc.is_empty() {
                a.doc.clone()
            } else {
                doc.to_owned()
            },
        })
    }

    /// In buck2 the value is the configuration target's dependency (its providers, e.g.
    /// `ctx.attrs.setting[ConstraintSettingInfo]`), analysed unconfigured.
    fn configuration_label<'v>(
        #[starlark(require = named, default = "")] doc: &str,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Attr<'v>> {
        make(
            LocalAttrType::Dep {
                kind: DepKind::Normal,
                providers: Vec::new(),
            },
            Vec::new(),
            None,
            doc,
            eval,
        )
    }
}
