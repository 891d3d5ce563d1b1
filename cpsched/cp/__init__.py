"""The CP-SAT models: one package per model (``memory``, ``overlap``, ``remat``, ``joint``),
each as problem data, variables, constraints, objectives and a build-solve-decode, and
``runtime``, the one CP-SAT runner. Models import nothing above them: the methods that run
them with heuristics, searches and fallbacks are in ``cpsched.strategies``."""
