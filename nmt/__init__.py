"""nmt: the original encoder-decoder Transformer for German<->English, as a DVC/Prefect pipeline.

The package is laid out in pipeline order; a module imports only from modules of earlier
stages: config -> download -> validate -> tokenization -> vocab (-> model -> train -> ...).
"""

import logging

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
