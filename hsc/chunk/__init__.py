"""Stage 1, leaves from the syntax tree: find a repository's files, read each one
safely, parse it with tree-sitter and cut it into leaves (functions, methods, classes,
runs of top-level statements) that never overlap and cover every non-blank line.
Leaves over ``maximum_chunk_token_length`` are split along their children, leaves under
``minimum_chunk_token_length`` merged; the facts (what each leaf defines, uses and
imports) are read from the same tree while it is cut.
"""
