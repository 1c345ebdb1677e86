"""Defaults and limits of the command options, in one module that imports nothing.

The command line reads them to declare its options, so that ``procure --help`` and
``procure --version`` start without numpy, pandas or the solver; the modules that use them
import them from here.
"""

from __future__ import annotations

#: Default relative gap between a plan's upper bound and its true value [1].
DEFAULT_TOLERANCE = 1e-4
#: Default wall-time limit of all the solves of one plan [s].
DEFAULT_TIME_LIMIT = 120.0
#: Tolerance of each plan of a sweep [1]: near a flat optimum, plans within 1e-4 of each other
#: can differ by several percent in the hours of a source bought in part; at 1e-6 the hours
#: of neighbouring points move only as the prices move them.
SWEEP_TOLERANCE = 1e-6
#: Most points a sweep solves.
MAX_STEPS = 10_000
#: Inputs a sweep can vary.
VARY_PARAMETERS = ("byte_price_x", "budget", "accelerator_usd_per_hour", "core_usd_per_hour", "params")
#: What sources can be ranked by.
RANK_CHOICES = ("volume", "value", "share", "price")
#: ``--read`` choices: frames of stored video in order or at random, or frames stored decoded.
READ_CHOICES = ("order", "random", "decoded")
#: Default buffer between the decoders and the accelerator [frames] (seed §4).
DEFAULT_BUFFER = 64
#: Default frames simulated [frames].
DEFAULT_FRAMES = 100_000
#: Default share of the frames left out of the measurement as warm-up [1].
DEFAULT_WARMUP = 0.1
#: Rows the plan and rank tables print before they summarise the rest (``--all`` prints all).
TABLE_ROWS = 50
#: Source columns the sweep table prints, the most bought first (``--all`` prints all).
TABLE_COLUMNS = 8

#: Default CVaR share: the worst share of scenarios whose mean value is the CVaR [1].
DEFAULT_RISK_ALPHA = 0.1
#: Default weight of the CVaR in the objective [1] (0: the expected value alone).
DEFAULT_RISK_WEIGHT = 0.0

#: Frames the app's queue timeline simulates (the warm-up share is DEFAULT_WARMUP's): enough
#: for the window it draws and a steady busy fraction, few enough to redraw as a slider moves.
APP_SIMULATED_FRAMES = 4_000
#: Points of the app's byte-price chart.
APP_SWEEP_STEPS = 9
#: The budget ``procure sensitivity`` and the app start from [$].
DEFAULT_BUDGET = 100_000.0
#: The most CPU cores per accelerator the app's slider offers.
APP_MOST_CORES = 64

#: Seconds by which the solves of one request may outlast its time limit [s]: HiGHS checks its
#: limit between iterations, a model's build once started finishes, and a local Dask cluster
#: stops its workers. A single build longer than this (12 s at 200,000 sources) adds its excess.
TIME_LIMIT_MARGIN = 3.0
#: Widest byte-price multipliers the ranging of a plan looks at [1].
RANGING_LIMITS = (1e-4, 1e4)
#: Default timed decoding runs of each file a calibration times.
DEFAULT_REPEAT = 5
#: Most timed runs a calibration makes of a file.
MAX_REPEAT = 100
