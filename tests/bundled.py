"""The ids of the bundled replio-core-eval catalog, as the tests expect them (one list for all)."""

BUNDLED = [
    "edit-fix-bug",
    "find-then-read",
    "grep-symbol",
    "list-directory",
    "no-tool-needed",
    "page-large-file",
    "read-file-lines",
    "write-new-file",
]
