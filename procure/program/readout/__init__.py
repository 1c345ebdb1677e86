"""Reading a solved program: the :class:`~procure.program.readout.plan.Plan`, its notes, the
plan over periods and with its infrastructure, and the parts of λ that a derived bound carries."""
