"""The commands of ``procure``, a module per group, registered by :mod:`procure.interfaces.cli`.

* :mod:`.pipeline`: ``bill`` and ``simulate``, one format's pipeline;
* :mod:`.plan`: ``solve``, what to buy;
* :mod:`.analyses`: ``rank`` and ``sensitivity``;
* :mod:`.data`: ``calibrate`` and ``import``, rows for a ledger;
* :mod:`.app`: ``app``, the pages in a browser.

Each command imports what it uses when it runs: the solver only for the commands that solve,
matplotlib only for ``--plot``.
"""
