"""The minimum-peak order strategy (method ``cp``): heuristic portfolio, exact searches, the CP-SAT memory model, window searches and bounds."""
