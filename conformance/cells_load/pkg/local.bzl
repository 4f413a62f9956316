LOCAL_TEXT = "loaded with :local.bzl"
