"""Strategies: the registered methods that combine models and heuristics.

A strategy runs phases (heuristic portfolios, exact searches, CP-SAT models from
``cpsched.cp``, window searches, fallbacks) within one time limit and returns the best
answer it proved. ``module`` lifts any method from one computation to a whole HLO module.
Models (``cpsched.cp``) and heuristics (``cpsched.heuristics``) never import this layer.
"""
