//! Load-time natives of BUCK and .bzl files (buck2 `interpreter/globals.rs`): `rule`,
//! `select`, `read_config`, `glob`, `package_name`, `host_info`, ...

// `rule()` mirrors buck2's signature, keyword for keyword.
#![allow(clippy::too_many_arguments)]

use anyhow::anyhow;
use sha2::Digest;
use starlark::environment::{GlobalsBuilder, LibraryExtension};
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::values::dict::{DictRef, UnpackDictEntries};
use starlark::values::list::AllocList;
use starlark::values::list_or_tuple::UnpackListOrTuple;
use starlark::values::none::NoneType;
use starlark::values::structs::AllocStruct;
use starlark::values::{Heap, Value};

use super::attrs::{attrs_module, Attr};
use super::context::BuildContext;
use super::rule::RuleCallable;
use super::select::Select;

fn err(e: anyhow::Error) -> starlark::Error {
    starlark::Error::new_other(e)
}

/// The extensions buck2 enables (`starlark_library_extensions_for_buck2`).
pub const EXTENSIONS: &[LibraryExtension] = &[
    LibraryExtension::Breakpoint,
    LibraryExtension::Debug,
    LibraryExtension::EnumType,
    LibraryExtension::Filter,
    LibraryExtension::Json,
    LibraryExtension::Map,
    LibraryExtension::Partial,
    LibraryExtension::Pprint,
    LibraryExtension::Pstr,
    LibraryExtension::Prepr,
    LibraryExtension::Print,
    LibraryExtension::RecordType,
    LibraryExtension::StructType,
    LibraryExtension::Typing,
    LibraryExtension::Internal,
    LibraryExtension::CallStack,
    LibraryExtension::SetType,
    LibraryExtension::NamespaceType,
];

/// Everything BUCK and .bzl files see: loading's globals plus `rule_globals`.
pub fn build_globals(rule_globals: fn(&mut GlobalsBuilder)) -> starlark::environment::Globals {
    let mut b = GlobalsBuilder::extended_by(EXTENSIONS);
    b.namespace("attrs", attrs_module);
    load_time_natives(&mut b);
    rule_globals(&mut b);
    b.build()
}

fn package_of<'a>(
    bx: &'a BuildContext,
    what: &str,
) -> starlark::Result<&'a super::context::PackageState> {
    bx.package.as_ref().ok_or_else(|| {
        err(anyhow!(
            "`{what}()` can only be called while evaluating a build file"
        ))
    })
}

/// `section.key` in the configuration of the cell `cell` picks, or `default`.
fn config_value<'v>(
    eval: &mut Evaluator<'v, '_, '_>,
    cell: fn(&BuildContext) -> String,
    section: &str,
    key: &str,
    default: Option<Value<'v>>,
) -> starlark::Result<Value<'v>> {
    let heap = eval.heap();
    let bx = BuildContext::from_eval(eval)?;
    match bx
        .loader
        .workspace()
        .cell_config(&cell(bx))
        .get(section, key)
        .map_err(err)?
    {
        Some(v) => Ok(heap.alloc(v)),
        None => Ok(default.unwrap_or_else(Value::new_none)),
    }
}

/// An argument forge does not implement yet: an error when given (anything but `None`), naming
/// the feature and the way out, instead of being dropped.
pub(crate) fn unsupported_argument(
    function: &str,
    name: &str,
    value: Option<Value<'_>>,
    what: &str,
) -> starlark::Result<()> {
    match value {
        Some(v) if !v.is_none() => Err(err(anyhow!(
            "`{function}({name} = ...)`: forge does not support {what} yet (docs/buck2.md lists \
             what forge implements); remove `{name}` or build with upstream buck2"
        ))),
        _ => Ok(()),
    }
}

#[starlark_module]
fn load_time_natives(builder: &mut GlobalsBuilder) {
    fn rule<'v>(
        #[starlark(require = named)] r#impl: Value<'v>,
        #[starlark(require = named)] attrs: UnpackDictEntries<&str, Value<'v>>,
        #[starlark(require = named)] cfg: Option<Value<'v>>,
        #[starlark(require = named)] supports_incoming_transition: Option<Value<'v>>,
        #[starlark(require = named, default = "")] doc: &str,
        #[starlark(require = named, default = false)] is_configuration_rule: bool,
        #[starlark(require = named, default = false)] is_toolchain_rule: bool,
        #[starlark(require = named)] uses_plugins: Option<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<RuleCallable<'v>> {
        // Accepting these silently would build something other than what buck2 builds (a
        // transition or plugin that never happens), so each is refused until forge has it.
        for (name, value, what) in [
            ("cfg", cfg, "configuration transitions"),
            (
                "supports_incoming_transition",
                supports_incoming_transition,
                "incoming configuration transitions",
            ),
            ("uses_plugins", uses_plugins, "rule plugins"),
        ] {
            unsupported_argument("rule", name, value, what)?;
        }
        let bx = BuildContext::from_eval(eval)?;
        if bx.package.is_some() {
            return Err(err(anyhow!("`rule` can only be declared in bzl files")));
        }
        let mut list = Vec::new();
        for (name, v) in attrs.entries {
            if name == "name" {
                return Err(err(anyhow!("`name` is a reserved attribute name")));
            }
            if Attr::from_value(v).is_none() {
                return Err(err(anyhow!(
                    "Attribute `{name}` must be an `attrs.*()` value, got `{}`",
                    v.get_type()
                )));
            }
            list.push((name.to_owned(), v));
        }
        let defined_in = format!("{}//{}", bx.file_cell, bx.file_path);
        Ok(RuleCallable::new(
            r#impl,
            list,
            defined_in,
            is_toolchain_rule,
            is_configuration_rule,
            doc.to_owned(),
        ))
    }

    fn select<'v>(#[starlark(require = pos)] d: Value<'v>) -> starlark::Result<Select<'v>> {
        let d = DictRef::from_value(d)
            .ok_or_else(|| err(anyhow!("`select()` expects a dict, got `{}`", d.get_type())))?;
        let mut keys = Vec::new();
        let mut values = Vec::new();
        for (k, v) in d.iter() {
            let k = k.unpack_str().ok_or_else(|| {
                err(anyhow!(
                    "`select()` keys must be strings, got `{}`",
                    k.to_repr()
                ))
            })?;
            keys.push(k.to_owned());
            values.push(v);
        }
        Ok(Select {
            keys,
            values,
            parts: Vec::new(),
        })
    }

    fn read_config<'v>(
        #[starlark(require = pos)] section: &str,
        #[starlark(require = pos)] key: &str,
        #[starlark(require = pos)] default: Option<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        config_value(
            eval,
            |bx| bx.config_cell().to_owned(),
            section,
            key,
            default,
        )
    }

    fn read_root_config<'v>(
        #[starlark(require = pos)] section: &str,
        #[starlark(require = pos)] key: &str,
        #[starlark(require = pos)] default: Option<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let root_cell = |bx: &BuildContext| bx.loader.workspace().cells.root_cell().to_owned();
        config_value(eval, root_cell, section, key, default)
    }

    fn host_info<'v>(heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        let os = std::env::consts::OS;
        let arch = std::env::consts::ARCH;
        let os_v = heap.alloc(AllocStruct([
            ("is_linux", os == "linux"),
            ("is_macos", os == "macos"),
            ("is_windows", os == "windows"),
            ("is_freebsd", os == "freebsd"),
            (
                "is_unknown",
                !matches!(os, "linux" | "macos" | "windows" | "freebsd"),
            ),
        ]));
        let arch_v = heap.alloc(AllocStruct([
            ("is_aarch64", arch == "aarch64"),
            ("is_arm", arch == "arm"),
            ("is_armeb", false),
            ("is_i386", arch == "x86"),
            ("is_mips", arch == "mips"),
            ("is_mips64", arch == "mips64"),
            ("is_mipsel", false),
            ("is_mipsel64", false),
            ("is_powerpc", arch == "powerpc"),
            ("is_ppc64", arch == "powerpc64"),
            ("is_riscv64", arch == "riscv64"),
            ("is_x86_64", arch == "x86_64"),
            ("is_unknown", false),
        ]));
        Ok(heap.alloc(AllocStruct([("os", os_v), ("arch", arch_v)])))
    }

    fn glob<'v>(
        #[starlark(require = pos)] include: UnpackListOrTuple<String>,
        #[starlark(require = named, default = UnpackListOrTuple::default())]
        exclude: UnpackListOrTuple<String>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let heap = eval.heap();
        let bx = BuildContext::from_eval(eval)?;
        let pkg = package_of(bx, "glob")?;
        let ws = bx.loader.workspace();
        let cell_dir = ws.cells.path(&pkg.cell).unwrap_or("").to_owned();
        let pkg_dir = super::cells::join(&cell_dir, &pkg.package);
        let skip: Vec<String> = ws
            .cells
            .nested_cell_dirs(&pkg.cell)
            .into_iter()
            .filter_map(|d| {
                if pkg.package.is_empty() {
                    Some(d)
                } else {
                    d.strip_prefix(&format!("{}/", pkg.package))
                        .map(str::to_owned)
                }
            })
            .collect();
        // `[project] ignore` names project-relative paths
        let ignored = |rel: &str| ws.is_ignored(&super::cells::join(&pkg_dir, rel));
        let files = super::glob::glob(
            &ws.root.join(&pkg_dir),
            &include.items,
            &exclude.items,
            &ws.buildfile_names,
            &skip,
            &ignored,
        )
        .map_err(err)?;
        Ok(heap.alloc(AllocList(files)))
    }

    fn package_name(eval: &mut Evaluator) -> starlark::Result<String> {
        let bx = BuildContext::from_eval(eval)?;
        Ok(package_of(bx, "package_name")?.package.clone())
    }

    fn get_base_path(eval: &mut Evaluator) -> starlark::Result<String> {
        let bx = BuildContext::from_eval(eval)?;
        Ok(package_of(bx, "get_base_path")?.package.clone())
    }

    fn get_cell_name(eval: &mut Evaluator) -> starlark::Result<String> {
        let bx = BuildContext::from_eval(eval)?;
        Ok(bx
            .package
            .as_ref()
            .map(|p| p.cell.clone())
            .unwrap_or_else(|| bx.file_cell.clone()))
    }

    fn repository_name(eval: &mut Evaluator) -> starlark::Result<String> {
        let bx = BuildContext::from_eval(eval)?;
        Ok(format!("@{}", package_of(bx, "repository_name")?.cell))
    }

    fn oncall(#[starlark(require = pos)] name: &str) -> starlark::Result<NoneType> {
        let _ = name;
        Ok(NoneType)
    }

    fn read_oncall() -> starlark::Result<NoneType> {
        Ok(NoneType)
    }

    fn rule_exists(
        #[starlark(require = pos)] name: &str,
        eval: &mut Evaluator,
    ) -> starlark::Result<bool> {
        let bx = BuildContext::from_eval(eval)?;
        Ok(package_of(bx, "rule_exists")?
            .targets
            .borrow()
            .contains_key(name))
    }

    fn sha256(#[starlark(require = pos)] val: &str) -> starlark::Result<String> {
        Ok(hex::encode(sha2::Sha256::digest(val.as_bytes())))
    }

    fn dedupe<'v>(
        #[starlark(require = pos)] val: Value<'v>,
        heap: Heap<'v>,
    ) -> starlark::Result<Value<'v>> {
        let mut out: Vec<Value<'v>> = Vec::new();
        for v in val.iterate(heap)? {
            if !out.iter().any(|x| x.ptr_eq(v)) {
                out.push(v);
            }
        }
        Ok(heap.alloc(AllocList(out)))
    }

    fn warning(#[starlark(require = pos)] x: &str) -> starlark::Result<NoneType> {
        eprintln!("WARNING: {x}");
        Ok(NoneType)
    }

    fn soft_error(
        #[starlark(require = pos)] category: &str,
        #[starlark(require = pos)] message: &str,
        #[starlark(require = named)] quiet: Option<bool>,
        #[starlark(require = named)] stack: Option<bool>,
    ) -> starlark::Result<NoneType> {
        let _ = (quiet, stack);
        eprintln!("WARNING: {category}: {message}");
        Ok(NoneType)
    }
}
