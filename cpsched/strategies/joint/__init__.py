"""The joint strategy (method ``cp-joint``): order, overlap and remat in one CP-SAT model, with its sequential fallback and bounds."""
