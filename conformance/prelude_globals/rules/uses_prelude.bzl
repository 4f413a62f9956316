# No load(): prelude symbols are globals in root-cell .bzl files too.
def prelude_text() -> str:
    return "root .bzl sees: " + PUBLIC_TEXT
