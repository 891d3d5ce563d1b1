"""Memory layout: offsets for buffers with fixed lifetimes.

``heap`` is XLA's own placement heuristic (best fit over alloc/free events), used to
reproduce XLA's buffer assignment; the layout models place buffers under a capacity and
prove the least capacity.
"""
