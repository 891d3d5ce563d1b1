"""The collective-overlap strategy (method ``cp-overlap``): candidate orders, the CP-SAT overlap model, budget repair and hoisting."""
