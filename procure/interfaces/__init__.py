"""Where people meet the library: the command line, its tables, and plots.

* :mod:`procure.interfaces.cli`: the ``procure`` command (the only module that prints);
* :mod:`procure.interfaces.render`: the tables the commands print;
* :mod:`procure.interfaces.plots`: figures, written atomically (matplotlib, loaded only for
  ``--plot``).
"""
