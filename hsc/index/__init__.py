"""The stages wired together over one database: index a repository (files cut in
worker processes while the encoder runs, ``index_workers``), build or update a
hierarchy, keep an index current as files change (``watch``), and browse the stored
nodes: the machinery behind :class:`hsc.Index`.
"""
