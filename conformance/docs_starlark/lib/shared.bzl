"""Loaded by defs.bzl: its symbols are not re-exported there."""

LoadedInfo = provider(doc = "loaded-provider-doc", fields = ["x"])
