"""The compilers' schedulers and the remat baselines, re-implemented: one registered
function each, over the one graph IR. Heuristics import no model (``cpsched.cp``) and no
strategy (``cpsched.strategies``)."""
