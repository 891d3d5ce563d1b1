"""The CP-SAT model of a pipeline-parallel schedule: data, variables, constraints, objectives and bounds (``cpsched.pipeline.solve`` runs it)."""
