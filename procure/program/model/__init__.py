"""The Pyomo program and its hand-over to HiGHS: the one builder, the curves' forms, the rows of
each axis (scenarios, periods, purchase options), and the model as one sparse matrix."""
