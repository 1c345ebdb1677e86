"""What moving an hour costs: pure, vectorised formulas that know no ledger.

* :mod:`procure.pipeline.formulas`: the closed form of the pipeline (demand, each stage's
  supply, busy fraction, binding stage, cores needed, pixels per token);
* :mod:`procure.pipeline.bill`: the transport bill of one recorded hour;
* :mod:`procure.pipeline.queue`: the pipeline run as a queue, to check the closed form;
* :mod:`procure.pipeline.calibrate`, :mod:`procure.pipeline.calibration_record` and
  :mod:`procure.pipeline.streams`: timing a team's own video files (PyAV) into the pipeline's
  rates, what one file measured, and a file's stream as its packets tell it.

The closed form's functions are re-exported here, so ``procure.pipeline.evaluate`` and
``procure.pipeline.demand_fps`` work as they did when this was one module.
"""

from . import bill, formulas, queue
from .formulas import (
    CONFIG_COLUMNS,
    FLOPS_PER_PARAM_TOKEN,
    PIXELS_1080P,
    READ_MODES,
    RESULT_COLUMNS,
    STAGES,
    STORED_MODES,
    binding_stage,
    busy,
    bytes_per_frame_read,
    cores_needed,
    decode_supply_fps,
    decoder_fps,
    demand_fps,
    evaluate,
    frames_decoded_per_frame,
    pixels_per_token,
    read_supply_fps,
    stall_threshold_params,
    supply_fps,
    tokens_per_frame,
)

__all__ = [
    "CONFIG_COLUMNS",
    "FLOPS_PER_PARAM_TOKEN",
    "PIXELS_1080P",
    "READ_MODES",
    "RESULT_COLUMNS",
    "STAGES",
    "STORED_MODES",
    "bill",
    "binding_stage",
    "busy",
    "bytes_per_frame_read",
    "cores_needed",
    "decode_supply_fps",
    "decoder_fps",
    "demand_fps",
    "evaluate",
    "formulas",
    "frames_decoded_per_frame",
    "pixels_per_token",
    "queue",
    "read_supply_fps",
    "stall_threshold_params",
    "supply_fps",
    "tokens_per_frame",
]
