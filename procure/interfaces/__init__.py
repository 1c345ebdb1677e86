"""Where people meet the library: the command line, the app, their tables and plots.

* :mod:`procure.interfaces.cli`: the ``procure`` group and its entry point, ``main``;
* :mod:`procure.interfaces.commands`: the commands, a module per group;
* :mod:`procure.interfaces.options`: the options several commands share;
* :mod:`procure.interfaces.terminal`: the console, the progress bar, a command's outputs;
* :mod:`procure.interfaces.tables` (the plan's and the analyses' tables),
  :mod:`procure.interfaces.pipeline_tables` (one format's pipeline and calibration tables) and
  :mod:`procure.interfaces.cells` (every number, formatted once): every table's cells;
* :mod:`procure.interfaces.render`: the terminal's tables, set from those cells;
* :mod:`procure.interfaces.app` and :mod:`procure.interfaces.pages`: ``procure app``, a page
  per module, its tables from the same cells;
* :mod:`procure.interfaces.plots` (the plan's figures), :mod:`procure.interfaces.pipeline_plots`
  (the pipeline's) and :mod:`procure.interfaces.canvas` (the axes and writing a figure):
  figures, written atomically (matplotlib, loaded only for ``--plot`` and the app; no backend
  chosen).
"""
