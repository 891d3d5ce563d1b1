"""The remat strategies (methods ``cp-remat`` and ``remat-fixed-order``): orders, baselines, the CP-SAT remat models and their search."""
