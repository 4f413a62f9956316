# AuroraForge's prelude is deliberately empty: every rule is loaded explicitly from
# `//rules:*.bzl` or `@toolchains//:*.bzl`, so buck2 and forge agree that nothing is implicit.
