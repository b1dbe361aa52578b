"""hsc inside other ecosystems, each behind an optional extra:

- ``hsc.integrations.mcp_server``: a Model Context Protocol server (``hsc[mcp]``)
- ``hsc.integrations.langchain``: a LangChain retriever and loader (``hsc[langchain]``)
- ``hsc.integrations.llamaindex``: a LlamaIndex node parser and retriever (``hsc[llamaindex]``)

``hsc.integrations.tools`` holds what the MCP tools do, with no protocol in it.
"""
