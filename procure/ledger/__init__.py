"""What is for sale: ledgers and cards read and validated, and their sources priced.

* :mod:`procure.ledger.schema`: each column of ``sources.csv`` and key of ``cluster.toml``
  with its unit, default and range;
* :mod:`procure.ledger.sources`: ``sources.csv`` read and validated a column at a time;
* :mod:`procure.ledger.csvtext`: a ledger CSV file's text (a byte-order mark, its line ends,
  records spanning lines), checked to be UTF-8 separated by commas;
* :mod:`procure.ledger.edit` and :mod:`procure.ledger.sheet`: ``sources.csv`` changed in
  place, under a lock, keeping what the edit does not change;
* :mod:`procure.ledger.cluster`: ``cluster.toml`` read into a :class:`Cluster`;
* :mod:`procure.ledger.cards`: model and accelerator cards, and the shipped folders;
* :mod:`procure.ledger.load`: a ledger folder read whole (:class:`Ledger`);
* :mod:`procure.ledger.variants`: one format on one cluster, with changes (``procure bill``);
* :mod:`procure.ledger.pricing`: a ledger's sources priced through the pipeline;
* :mod:`procure.ledger.synthetic`: random ledgers of many sources.
"""

from .load import (
    CLUSTER_FIELDS,
    SOURCE_COLUMNS,
    Cluster,
    Ledger,
    default_ledger_dir,
    load_accelerators,
    load_ledger,
    load_model_card,
    matches,
    model_names,
    models_dir,
    read_cluster,
    read_sources,
)
from .pricing import configure, transport
from .variants import READ_CHOICES, cluster_with, format_with, variant

__all__ = [
    "CLUSTER_FIELDS",
    "READ_CHOICES",
    "SOURCE_COLUMNS",
    "Cluster",
    "Ledger",
    "cluster_with",
    "configure",
    "default_ledger_dir",
    "format_with",
    "load_accelerators",
    "load_ledger",
    "load_model_card",
    "matches",
    "model_names",
    "models_dir",
    "read_cluster",
    "read_sources",
    "transport",
    "variant",
]
