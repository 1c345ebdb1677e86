"""The pages of ``procure app``, a module each, assembled by :mod:`procure.interfaces.app`.

* :mod:`.pipeline`: one format on one cluster, as ``procure bill`` and ``procure simulate``
  evaluate it;
* :mod:`.plan`: the plan for a budget, re-solved in place as the budget moves;
* :mod:`.prices`: hours per source against the byte-price multiplier.

Each page module has ``page(...)``, its layout, and ``server(input, ...)``, which registers its
outputs in the running session. Every number shown is formatted by
:mod:`procure.interfaces.tables`, as the commands print it. :mod:`.parts` holds the pieces of
layout the pages share.
"""
