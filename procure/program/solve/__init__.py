"""Solving the program: :class:`~procure.program.solve.program.Program` owns the model and
refines it until certified; exact hours, target mode, diagnoses, certificates by the dual alone,
plans under uncertainty and the wait-and-see values."""
